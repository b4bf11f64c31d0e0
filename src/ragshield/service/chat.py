"""`POST /v1/chat/completions`: OpenAI-compatible, streamed (SSE) and not, through `RagPipeline.stream`.

What a client sees:

* allowed: the answer (streamed deltas are the pipeline's released text, which is withheld
  until the output guards have checked it), `finish_reason: stop` (`length` when the server's
  `max_tokens` cut the answer);
* blocked before generation (query guards): the refusal, `finish_reason: content_filter`;
* blocked during generation (output guards): streamed, an OpenAI-style error event
  `data: {"error": {..., "code": "output_blocked"}}` ends the stream (the openai client raises
  `APIError`); not streamed, the refusal with `finish_reason: content_filter`;
* a blocked user: HTTP 403, code `user_blocked`;
* past `request_timeout_s`: blocked when failing closed (the refusal, or an error event with
  code `request_timeout` once streaming), else HTTP 504.

Every request ends in exactly one audit line.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response as HttpResponse
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from ragshield.integrations.shield import recording_defense
from ragshield.rag.pipeline import validate_query
from ragshield.service.audit import scrubber_for
from ragshield.service.runner import PipelineRun
from ragshield.service.schemas import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChatMessageIn,
    Choice,
    ChunkChoice,
    Delta,
    RagshieldInfo,
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
    stage_of,
    timeout_verdict,
)
from ragshield.types import Query, Response, RetrievalResult, Verdict, new_id

POLL_S = 0.5  # how often a waiting request checks whether its client is still connected
ENDPOINT = "chat"


class ClientGoneError(Exception):
    """The client closed the connection; the run is stopped and nothing more is sent."""


def last_user_text(messages: list[ChatMessageIn]) -> str:
    """The text of the last user message (the query; earlier turns are not retrieved on)."""
    for message in reversed(messages):
        if message.role == "user":
            try:
                return check_text(message.text(), "messages.content")
            except ValueError as error:
                raise ApiError(400, str(error), param="messages") from None
    raise ApiError(400, "no user message; send at least one message with role 'user'", param="messages")


class Exchange:
    """One chat request, from its concurrency slot to its audit line."""

    def __init__(self, state: ServiceState, request: Request, query: Query, model: str) -> None:
        self.state = state
        self.request = request
        self.query = query
        self.model = model
        self.started = time.perf_counter()
        self.created = int(time.time())
        self.deadline = self.started + state.settings.request_timeout_s
        self.sink: list[RetrievalResult] = []
        self.run: PipelineRun | None = None
        self._slot = False
        self._audited = False
        self._closed = False
        state.metrics.in_flight.inc()

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.perf_counter())

    async def start(self) -> bool:
        """Take a concurrency slot and start the pipeline; False when the deadline passed first."""
        try:
            await asyncio.wait_for(self.state.slots.acquire(), timeout=self.remaining())
        except TimeoutError:
            return False
        self._slot = True
        pipeline = self.state.pipeline
        self.run = PipelineRun(pipeline.with_defense(recording_defense(pipeline.defense, self.sink)), self.query)
        self.run.start()
        return True

    async def next(self) -> str | Response | None:
        """The next delta or the final Response; None at the deadline.

        Raises:
            ClientGoneError: the client disconnected while we waited.
        """
        assert self.run is not None
        while True:
            try:
                return await self.run.next(min(POLL_S, self.remaining()))
            except TimeoutError:
                if self.remaining() <= 0.0:
                    return None
                if await self.request.is_disconnected():
                    raise ClientGoneError from None

    def audit(
        self,
        action: str,
        response: Response | None = None,
        extra: tuple[Verdict, ...] = (),
        detail: dict[str, object] | None = None,
    ) -> None:
        if self._audited:
            return
        self._audited = True
        if response is not None and "first_token" in response.timings_ms:
            self.state.metrics.first_token.observe(response.timings_ms["first_token"] / 1000.0)
        retrieval = response.retrieval if response is not None else None
        scrubber = scrubber_for(retrieval, self.sink[-1] if self.sink else None, extra_texts=(self.query.text,))
        finish_request(
            self.state,
            endpoint=ENDPOINT,
            request_id=self.query.id,
            user_id=self.query.user_id,
            action=action,
            started=self.started,
            response=response,
            scrubber=scrubber,
            query_text=self.query.text,
            extra_verdicts=extra,
            detail=detail,
        )

    def timed_out(self) -> Verdict:
        verdict = timeout_verdict(
            time.perf_counter() - self.started,
            self.state.settings.request_timeout_s,
            fail_closed=self.state.settings.fail_closed,
        )
        self.audit("timeout", None, (verdict,))
        return verdict

    def close(self) -> None:
        """Stop the run, free the slot, and audit a request that ended without a decision (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.state.metrics.in_flight.dec()
        if self.run is not None:
            self.run.cancel()
        if self._slot:
            self._slot = False
            self.state.slots.release()
        if not self._audited:
            self.audit("disconnected", None, detail={"reason": "the client closed the connection"})

    # -- response bodies ----------------------------------------------------------------

    def info(self, response: Response | None, verdicts: tuple[Verdict, ...] = ()) -> RagshieldInfo:
        every = tuple(response.verdicts if response is not None else ()) + verdicts
        blocked = any(v.blocked for v in every)
        stage = stage_of(response) if response is not None else ("service" if blocked else None)
        exposed = [VerdictOut.of(v) for v in every] if self.state.settings.expose_verdicts else None
        return RagshieldInfo(request_id=self.query.id, blocked=blocked, stage=stage, verdicts=exposed)

    def chunk(self, delta: Delta, finish: str | None = None, info: RagshieldInfo | None = None) -> bytes:
        body = ChatCompletionChunk(
            id=self.query.id,
            created=self.created,
            model=self.model,
            choices=[ChunkChoice(delta=delta, finish_reason=finish)],
            ragshield=info,
        )
        return b"data: " + body.model_dump_json(exclude_none=True).encode("utf-8") + b"\n\n"

    def error_event(self, message: str, *, type: str, code: str) -> bytes:
        body = ApiError(200, message, type=type, code=code).body()
        body["error"]["request_id"] = self.query.id
        return b"data: " + json.dumps(body, ensure_ascii=False).encode("utf-8") + b"\n\n"

    def completion(self, text: str, finish: str, info: RagshieldInfo) -> HttpResponse:
        body = ChatCompletion(
            id=self.query.id,
            created=self.created,
            model=self.model,
            choices=[Choice(message=AssistantMessage(content=text), finish_reason=finish)],
            ragshield=info,
        )
        return model_response(body)

    def blocked_message(self, response: Response | None, verdicts: tuple[Verdict, ...] = ()) -> str:
        names = [v.guard for v in (*(response.verdicts if response else ()), *verdicts) if v.blocked]
        which = f" ({', '.join(names)})" if self.state.settings.expose_verdicts and names else ""
        return f"the answer was stopped by a guard{which}; request id {self.query.id}"


DONE = b"data: [DONE]\n\n"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def handle_chat(state: ServiceState, request: Request, user_id: str) -> HttpResponse:
    """Answer one chat completion request (see the module docstring for what the client gets)."""
    body = await read_json(request, ChatCompletionRequest, state.settings.max_body_bytes)
    if body.model != state.settings.model_name:
        raise ApiError(
            404,
            f"the model {body.model!r} does not exist; this server serves "
            f"{state.settings.model_name!r} (GET /v1/models)",
            code="model_not_found",
            param="model",
        )
    if body.n not in (None, 1):
        raise ApiError(400, "only n=1 is supported", param="n")
    query = validate_query(
        Query(last_user_text(body.messages), user_id=user_id, id=f"chatcmpl-{new_id()}"), state.pipeline.max_query_chars
    )
    exchange = Exchange(state, request, query, body.model)
    handed_over = False
    try:
        first: str | Response | None = None
        if await exchange.start():
            first = await exchange.next()
        if first is None:
            verdict = exchange.timed_out()
            if not state.settings.fail_closed:
                raise ApiError(
                    504,
                    f"the request exceeded the {state.settings.request_timeout_s:g}s timeout; request id {query.id}",
                    type="timeout",
                    code="request_timeout",
                    audited=True,
                )
            return _refusal(exchange, body.stream, exchange.info(None, (verdict,)))
        if isinstance(first, Response):
            early = _early_answer(exchange, first, body.stream)
            if early is not None:
                return early
        if not body.stream:
            return await _collect(exchange, first)
        handed_over = True
        return _ExchangeStream(_sse(exchange, first), exchange)
    except ClientGoneError:
        return HttpResponse(status_code=499)
    except ApiError:
        raise
    except Exception as error:  # the pipeline raised before any text: a clean 500, the server keeps serving
        exchange.audit("error", None, detail={"error_type": type(error).__name__})
        raise ApiError(
            500,
            f"internal error ({type(error).__name__}); request id {query.id}",
            type="server_error",
            code="internal_error",
            audited=True,
        ) from None
    finally:
        if not handed_over:
            exchange.close()


def _refusal(exchange: Exchange, stream: bool, info: RagshieldInfo) -> HttpResponse:
    refusal = exchange.state.pipeline.refusal
    if not stream:
        return exchange.completion(refusal, "content_filter", info)
    body = [
        exchange.chunk(Delta(role="assistant", content="")),
        exchange.chunk(Delta(content=refusal)),
        exchange.chunk(Delta(), "content_filter", info),
        DONE,
    ]
    return StreamingResponse(iter(body), media_type="text/event-stream", headers=SSE_HEADERS)


class _ExchangeStream(StreamingResponse):
    """An SSE response that always releases its exchange, even when the body is never iterated
    (the client left before the headers went out) or the transfer fails."""

    def __init__(self, content: AsyncIterator[bytes], exchange: Exchange) -> None:
        super().__init__(content, media_type="text/event-stream", headers=SSE_HEADERS)
        self._exchange = exchange

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._exchange.close()


def _early_answer(exchange: Exchange, response: Response, stream: bool) -> HttpResponse | None:
    """The reply when the pipeline's first item is already its final Response (no text released)."""
    action, stage = outcome_of(response), stage_of(response)
    exchange.audit(action, response)
    if action == "refuse":
        reason = next((v.reason for v in response.verdicts if v.blocked), "the user is blocked")
        raise ApiError(
            403, f"{reason}; request id {exchange.query.id}", type="permission_error", code="user_blocked", audited=True
        )
    if action == "error":
        raise ApiError(
            502,
            f"generation failed ({response.error}); request id {exchange.query.id}",
            type="server_error",
            code="generation_failed",
            audited=True,
        )
    if action == "block" and (stage == "query" or not stream):
        return _refusal(exchange, stream, exchange.info(response))
    if not stream:
        return exchange.completion(response.text, _openai_finish(response), exchange.info(response))
    return None  # streamed: an allowed empty answer or an output block is sent as events


async def _collect(exchange: Exchange, first: str | Response) -> HttpResponse:
    item: str | Response | None = first
    while not isinstance(item, Response):
        if item is None:
            verdict = exchange.timed_out()
            if not exchange.state.settings.fail_closed:
                raise ApiError(
                    504,
                    f"the request exceeded the {exchange.state.settings.request_timeout_s:g}s "
                    f"timeout; request id {exchange.query.id}",
                    type="timeout",
                    code="request_timeout",
                    audited=True,
                )
            return _refusal(exchange, False, exchange.info(None, (verdict,)))
        item = await exchange.next()
    early = _early_answer(exchange, item, False)
    assert early is not None  # not streamed: always a complete reply
    return early


async def _sse(exchange: Exchange, first: str | Response) -> AsyncIterator[bytes]:
    state = exchange.state
    try:
        yield exchange.chunk(Delta(role="assistant", content=""))
        item: str | Response | None = first
        while True:
            if item is None:
                exchange.timed_out()
                mode = "blocked" if state.settings.fail_closed else "stopped"
                yield exchange.error_event(
                    f"the request exceeded the {state.settings.request_timeout_s:g}s timeout and was {mode}; "
                    f"request id {exchange.query.id}",
                    type="timeout",
                    code="request_timeout",
                )
                return
            if isinstance(item, Response):
                for event in _final_events(exchange, item):
                    yield event
                return
            yield exchange.chunk(Delta(content=item))
            item = await exchange.next()
    except ClientGoneError:
        return
    except Exception as error:  # the pipeline raised mid-stream: end with an error event
        exchange.audit("error", None, detail={"error_type": type(error).__name__})
        yield exchange.error_event(
            f"internal error ({type(error).__name__}); request id {exchange.query.id}",
            type="server_error",
            code="internal_error",
        )
    finally:
        exchange.close()


def _final_events(exchange: Exchange, response: Response) -> list[bytes]:
    action = outcome_of(response)
    exchange.audit(action, response)
    if action == "allow":
        return [exchange.chunk(Delta(), _openai_finish(response), exchange.info(response)), DONE]
    if action == "error":
        return [
            exchange.error_event(
                f"generation failed ({response.error}); request id {exchange.query.id}",
                type="server_error",
                code="generation_failed",
            )
        ]
    return [exchange.error_event(exchange.blocked_message(response), type="content_filter", code="output_blocked")]


def _openai_finish(response: Response) -> str:
    """OpenAI's `finish_reason` for an answer that was allowed: `length` when the token limit
    cut it, else `stop`."""
    return "length" if response.finish_reason == "length" else "stop"
