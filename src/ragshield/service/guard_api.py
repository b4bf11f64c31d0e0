"""`POST /v1/guard/query` and `POST /v1/guard/output`: ragshield's guards for applications that
keep their own retrieval and model.

The flow an application follows:

1. retrieve its top-k chunks, send the query and the chunks (id, text, cosine similarity) to
   `/v1/guard/query`; on `block`, show a refusal; on `allow`, prompt its model with the returned
   `context` (canaries inserted when a canary defense is configured);
2. send the model's answer with that `context` and `markers` to `/v1/guard/output`; show the
   returned `text` (the refusal when blocked).

The API key names the application; the optional `user` field names the application's end user
for the blocking policy (the policy key is `<key user>/<user>`), so one application key can
serve many users without one user's violations blocking the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import Response as HttpResponse

from ragshield.integrations.shield import scored_chunks
from ragshield.rag.pipeline import validate_query
from ragshield.service.audit import scrubber_for
from ragshield.service.schemas import (
    GuardChunk,
    GuardOutputRequest,
    GuardOutputResponse,
    GuardQueryRequest,
    GuardQueryResponse,
    VerdictOut,
)
from ragshield.service.state import (
    ApiError,
    ServiceState,
    check_text,
    finish_request,
    model_response,
    outcome_of,
    read_json,
    timeout_verdict,
)
from ragshield.types import Query, Response, RetrievalResult, new_id

T = TypeVar("T")


async def run_in_thread(function: Callable[[], T], timeout: float) -> T:
    """`function()` in a dedicated thread (never the shared pool: a guard may wait on the model
    lock); raises TimeoutError after `timeout` seconds (the thread finishes in the background)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(value: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)  # type: ignore[arg-type]

    def work() -> None:
        try:
            value = function()
        except BaseException as error:  # handed to the awaiting request
            _call_soon(loop, settle, None, error)
        else:
            _call_soon(loop, settle, value, None)

    threading.Thread(target=work, name="ragshield-guard", daemon=True).start()
    return await asyncio.wait_for(future, timeout=timeout)


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: object) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed while the guard ran: nobody waits any more
        loop.call_soon_threadsafe(callback, *args)


def _policy_user(key_user: str, user: str | None) -> str:
    if user is None or not user.strip():
        return key_user
    return f"{key_user}/{check_text(user.strip(), 'user')}"


def _unique(chunks: list[GuardChunk]) -> None:
    seen: set[str] = set()
    for chunk in chunks:
        if chunk.id in seen:
            raise ApiError(400, f"chunk id {chunk.id!r} appears twice; chunk ids must be unique", param="chunks")
        seen.add(chunk.id)


def _context(decorated: RetrievalResult) -> list[GuardChunk]:
    return [
        GuardChunk(id=hit.chunk.id, text=hit.chunk.text, similarity=hit.similarity, doc_id=hit.chunk.doc_id)
        for hit in decorated.hits
    ]


async def _guarded_call(state: ServiceState, function: Callable[[], T], started: float) -> T | None:
    """Run a shield call in a slot and a thread; None when the request timeout passed."""
    deadline = started + state.settings.request_timeout_s
    try:
        await asyncio.wait_for(state.slots.acquire(), timeout=max(0.0, deadline - time.perf_counter()))
    except TimeoutError:
        return None
    try:
        return await run_in_thread(function, max(0.0, deadline - time.perf_counter()))
    except TimeoutError:
        return None
    finally:
        state.slots.release()


async def handle_guard_query(state: ServiceState, request: Request, key_user: str) -> HttpResponse:
    """The verdict on a query and its retrieved chunks, and the (decorated) context to prompt with."""
    started = time.perf_counter()
    body = await read_json(request, GuardQueryRequest, state.settings.max_body_bytes)
    _unique(body.chunks)
    user = _policy_user(key_user, body.user)
    query = validate_query(
        Query(check_text(body.query, "query"), user_id=user, id=f"guardq-{new_id()}"), state.shield.max_query_chars
    )
    hits = scored_chunks((chunk.chunk(), chunk.similarity) for chunk in body.chunks)
    decision = await _guarded_call(state, lambda: state.shield.check_query(query, hits), started)
    given = RetrievalResult(query=query, hits=hits)
    if decision is None:
        return _timed_out(state, "guard-query", query, started, given)
    response = decision.response
    action = outcome_of(response)
    finish_request(
        state,
        endpoint="guard-query",
        request_id=query.id,
        user_id=user,
        action=action,
        started=started,
        response=response,
        scrubber=scrubber_for(response.retrieval or given, decision.decorated),
        query_text=query.text,
    )
    decorated = decision.decorated
    reply = GuardQueryResponse(
        request_id=query.id,
        action="block" if decision.blocked else "allow",
        blocked_by=[v.guard for v in response.verdicts if v.blocked],
        verdicts=[VerdictOut.of(v) for v in response.verdicts],
        context=_context(decorated) if decorated is not None else [],
        markers={key: list(value) for key, value in decorated.markers.items()} if decorated is not None else {},
    )
    return model_response(reply)


async def handle_guard_output(state: ServiceState, request: Request, key_user: str) -> HttpResponse:
    """The verdict on a model's answer to a guarded context; `text` is what may be shown."""
    started = time.perf_counter()
    body = await read_json(request, GuardOutputRequest, state.settings.max_body_bytes)
    _unique(body.context)
    unknown = set(body.markers) - {chunk.id for chunk in body.context}
    if unknown and body.context:
        raise ApiError(
            400,
            "markers name chunks that are not in context; send the context /v1/guard/query returned",
            param="markers",
        )
    user = _policy_user(key_user, body.user)
    query = validate_query(
        Query(check_text(body.query, "query"), user_id=user, id=f"guardo-{new_id()}"), state.shield.max_query_chars
    )
    output = check_text(body.output, "output")
    decorated = RetrievalResult(
        query=query,
        hits=scored_chunks((chunk.chunk(), chunk.similarity) for chunk in body.context),
        markers={key: tuple(value) for key, value in body.markers.items()},
    )
    checked: Response | None = await _guarded_call(state, lambda: state.shield.check_output(decorated, output), started)
    if checked is None:
        return _timed_out(state, "guard-output", query, started, decorated)
    action = outcome_of(checked)
    finish_request(
        state,
        endpoint="guard-output",
        request_id=query.id,
        user_id=user,
        action=action,
        started=started,
        response=checked,
        scrubber=scrubber_for(checked.retrieval, decorated),
        query_text=query.text,
    )
    blocked = action in {"block", "refuse"}
    reply = GuardOutputResponse(
        request_id=query.id,
        action="block" if blocked else "allow",
        blocked_by=[v.guard for v in checked.verdicts if v.blocked],
        verdicts=[VerdictOut.of(v) for v in checked.verdicts],
        text=state.shield.refusal if blocked else checked.text,
    )
    return model_response(reply)


def _timed_out(
    state: ServiceState, endpoint: str, query: Query, started: float, retrieval: RetrievalResult
) -> HttpResponse:
    verdict = timeout_verdict(
        time.perf_counter() - started, state.settings.request_timeout_s, fail_closed=state.settings.fail_closed
    )
    finish_request(
        state,
        endpoint=endpoint,
        request_id=query.id,
        user_id=query.user_id,
        action="timeout",
        started=started,
        response=None,
        scrubber=scrubber_for(retrieval),
        query_text=query.text,
        extra_verdicts=(verdict,),
    )
    if not state.settings.fail_closed:
        raise ApiError(
            504,
            f"the guard check exceeded the {state.settings.request_timeout_s:g}s timeout; request id {query.id}",
            type="timeout",
            code="request_timeout",
            audited=True,
        )
    if endpoint == "guard-query":
        return model_response(
            GuardQueryResponse(
                request_id=query.id,
                action="block",
                blocked_by=[verdict.guard],
                verdicts=[VerdictOut.of(verdict)],
                context=[],
                markers={},
            )
        )
    return model_response(
        GuardOutputResponse(
            request_id=query.id,
            action="block",
            blocked_by=[verdict.guard],
            verdicts=[VerdictOut.of(verdict)],
            text=state.shield.refusal,
        )
    )
