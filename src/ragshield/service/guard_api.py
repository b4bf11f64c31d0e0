"""`POST /v1/guard/query` and `POST /v1/guard/output`: ragshield's guards for applications that
keep their own retrieval and model.

The flow an application follows:

1. retrieve its top-k chunks, send the query and the chunks (id, text, cosine similarity) to
   `/v1/guard/query`; on `block`, show a refusal; on `allow`, prompt its model with the returned
   `context` (canaries inserted when a canary defense is configured);
2. send the model's answer with that `context` and `markers` to `/v1/guard/output`; show the
   returned `text` (the refusal when blocked).

The API key names the application; the optional `user` field names the application's end user
for the blocking policy (the policy identity is `<key user>/<user>`, each part escaped by
`policy_identity`, so no key user and end user can name another key's user), so one
application key can serve many users without one user's violations blocking the others.

The shield call, the audit line and the reply body are built on a worker thread (they cost CPU
in proportion to what the client sent); the event loop only reads and validates the body.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response as HttpResponse

from ragshield.errors import ConfigError
from ragshield.guards.base import Defense
from ragshield.guards.policy import policy_identity
from ragshield.integrations.shield import scored_chunks
from ragshield.pipeline import validate_query
from ragshield.service.audit import scrubber_for
from ragshield.service.schemas import (
    MAX_CANARIES_PER_CHUNK,
    MAX_CANARY_CHARS,
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
    store_unavailable_error,
    timeout_verdict,
)
from ragshield.types import Query, Response, RetrievalResult, new_id


def check_marker_caps(defense: Defense) -> None:
    """Refuse a canary setting whose markers `/v1/guard/output` would reject as not ours.

    Raises:
        ConfigError: a context decorator draws canaries longer than `MAX_CANARY_CHARS` or more
            than `MAX_CANARIES_PER_CHUNK` per chunk.
    """
    for decorator in defense.decorators:
        length, per_chunk = getattr(decorator, "length", 0), getattr(decorator, "per_chunk", 0)
        if isinstance(length, int) and length > MAX_CANARY_CHARS:
            raise ConfigError(f"canary length {length} is over the service's limit of {MAX_CANARY_CHARS} symbols")
        if isinstance(per_chunk, int) and per_chunk > MAX_CANARIES_PER_CHUNK:
            raise ConfigError(f"per_chunk {per_chunk} is over the service's limit of {MAX_CANARIES_PER_CHUNK} canaries")


def policy_user(key_user: str, user: str | None) -> str:
    """The policy identity of a request: the key's user, or the key's user and the app's end
    user as two escaped parts (`policy_identity`), so no combination names another."""
    if user is None or not user.strip():
        return policy_identity(key_user)
    return policy_identity(key_user, check_text(user.strip(), "user"))


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


class _Once:
    """Who writes the request's audit line: the work when it finishes first, else the timeout."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken = False

    def claim(self) -> bool:
        with self._lock:
            if self._taken:
                return False
            self._taken = True
            return True


_Outcome = tuple[HttpResponse | None, ApiError | None]


async def _guarded(
    state: ServiceState,
    endpoint: str,
    query: Query,
    started: float,
    given: RetrievalResult,
    work: Callable[[_Once], _Outcome],
) -> HttpResponse:
    """Run `work` (the shield call, its audit line and its reply: all CPU work) on a worker
    thread; at the request timeout (or the shutdown deadline) answer without it."""
    once = _Once()

    def budget() -> float:
        left = started + state.settings.request_timeout_s - time.perf_counter()
        return max(0.0, min(left, state.drain_remaining()))

    future: asyncio.Future[_Outcome] | None = None
    if await state.pool.acquire(budget()):
        try:
            future = asyncio.wrap_future(state.pool.submit(lambda: work(once)))
        except RuntimeError:  # the pool is shut down: the server is stopping
            future = None
    if future is not None:
        try:
            reply, error = await asyncio.wait_for(asyncio.shield(future), timeout=budget())
        except TimeoutError:
            if once.claim():
                return _timed_out(state, endpoint, query, started, given)
            reply, error = await future  # the work is writing its audit line: its answer is moments away
    else:
        once.claim()
        return _timed_out(state, endpoint, query, started, given)
    if error is not None:
        raise error
    assert reply is not None
    return reply


def _finish(
    state: ServiceState,
    once: _Once,
    endpoint: str,
    query: Query,
    started: float,
    response: Response,
    scrubber: Any,
) -> tuple[str, ApiError | None]:
    """Audit a finished check (when the timeout has not already) and say what the client gets."""
    action = outcome_of(response)
    if once.claim():
        finish_request(
            state,
            endpoint=endpoint,
            request_id=query.id,
            user_id=query.user_id,
            action=action,
            started=started,
            response=response,
            scrubber=scrubber,
            query_text=query.text,
        )
    return action, store_unavailable_error(query.id) if action == "unavailable" else None


async def handle_guard_query(state: ServiceState, request: Request, key_user: str) -> HttpResponse:
    """The verdict on a query and its retrieved chunks, and the (decorated) context to prompt with."""
    started = time.perf_counter()
    body = await read_json(request, GuardQueryRequest, state.settings.max_body_bytes, state.settings.body_timeout_s)
    _unique(body.chunks)
    user = policy_user(key_user, body.user)
    query = validate_query(
        Query(check_text(body.query, "query"), user_id=user, id=f"guardq-{new_id()}"), state.shield.max_query_chars
    )
    hits = scored_chunks((chunk.chunk(), chunk.similarity) for chunk in body.chunks)
    given = RetrievalResult(query=query, hits=hits)

    def work(once: _Once) -> _Outcome:
        decision = state.shield.check_query(query, hits)
        response = decision.response
        scrubber = scrubber_for(response.retrieval or given, decision.decorated)
        _, error = _finish(state, once, "guard-query", query, started, response, scrubber)
        if error is not None:
            return None, error
        decorated = decision.decorated
        reply = GuardQueryResponse(
            request_id=query.id,
            action="block" if decision.blocked else "allow",
            blocked_by=[v.guard for v in response.verdicts if v.blocked],
            verdicts=[VerdictOut.of(v) for v in response.verdicts],
            context=_context(decorated) if decorated is not None else [],
            markers={key: list(value) for key, value in decorated.markers.items()} if decorated is not None else {},
        )
        return model_response(reply), None

    return await _guarded(state, "guard-query", query, started, given, work)


async def handle_guard_output(state: ServiceState, request: Request, key_user: str) -> HttpResponse:
    """The verdict on a model's answer given the decorated context /v1/guard/query returned."""
    started = time.perf_counter()
    body = await read_json(request, GuardOutputRequest, state.settings.max_body_bytes, state.settings.body_timeout_s)
    _unique(body.context)
    unknown = set(body.markers) - {chunk.id for chunk in body.context}
    if unknown and body.context:
        raise ApiError(
            400,
            "markers name chunks that are not in context; send the context /v1/guard/query returned",
            param="markers",
        )
    if body.context:
        texts = {chunk.id: chunk.text for chunk in body.context}
        if any(canary not in texts[chunk_id] for chunk_id, canaries in body.markers.items() for canary in canaries):
            raise ApiError(
                400,
                "markers hold a canary that is not in its chunk's text; send the context and markers "
                "/v1/guard/query returned",
                param="markers",
            )
    user = policy_user(key_user, body.user)
    query = validate_query(
        Query(check_text(body.query, "query"), user_id=user, id=f"guardo-{new_id()}"), state.shield.max_query_chars
    )
    output = check_text(body.output, "output")
    decorated = RetrievalResult(
        query=query,
        hits=scored_chunks((chunk.chunk(), chunk.similarity) for chunk in body.context),
        markers={key: tuple(value) for key, value in body.markers.items()},
    )

    def work(once: _Once) -> _Outcome:
        checked = state.shield.check_output(decorated, output)
        action, error = _finish(
            state, once, "guard-output", query, started, checked, scrubber_for(checked.retrieval, decorated)
        )
        if error is not None:
            return None, error
        blocked = action in {"block", "refuse"}
        reply = GuardOutputResponse(
            request_id=query.id,
            action="block" if blocked else "allow",
            blocked_by=[v.guard for v in checked.verdicts if v.blocked],
            verdicts=[VerdictOut.of(v) for v in checked.verdicts],
            text=state.shield.refusal if blocked else checked.text,
        )
        return model_response(reply), None

    return await _guarded(state, "guard-output", query, started, decorated, work)


def _timed_out(
    state: ServiceState, endpoint: str, query: Query, started: float, retrieval: RetrievalResult
) -> HttpResponse:
    if state.draining.is_set() and state.drain_remaining() <= 0.0:
        finish_request(
            state,
            endpoint=endpoint,
            request_id=query.id,
            user_id=query.user_id,
            action="shutdown",
            started=started,
            response=None,
            scrubber=scrubber_for(retrieval),
            query_text=query.text,
        )
        raise ApiError(
            503,
            f"the server is shutting down; retry on another replica; request id {query.id}",
            type="server_error",
            code="server_shutting_down",
            audited=True,
        )
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
