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
* the policy store unreachable (failing closed): HTTP 503 (an error event once streaming),
  code `policy_store_unavailable`; a fault of the service, never a verdict on the user;
* past `request_timeout_s`: blocked when failing closed (the refusal, or an error event with
  code `request_timeout` once streaming), else HTTP 504;
* shutdown (SIGTERM) before the answer was done, `shutdown_grace_s` after it began: HTTP 503
  (an error event once streaming), code `server_shutting_down`;
* `stream_options: {include_usage: true}`: a last chunk with no choices and `usage` (tokens of
  the query and of the released answer) before `[DONE]`; not streamed, `usage` is always there.

A timeout, a disconnect or a shutdown cancels the generation (the model stops within one token).
Every request ends in exactly one audit line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response as HttpResponse
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from ragshield.pipeline import validate_query
from ragshield.service.exchange import ClientGoneError, Exchange, ShuttingDownError
from ragshield.service.schemas import ChatCompletionRequest, ChatMessageIn, Delta, RagshieldInfo
from ragshield.service.state import (
    ApiError,
    ServiceState,
    check_text,
    outcome_of,
    read_json,
    stage_of,
    store_unavailable_error,
)
from ragshield.types import Query, Response, new_id


def last_user_text(messages: list[ChatMessageIn]) -> str:
    """The text of the last user message (the query; earlier turns are not retrieved on)."""
    for message in reversed(messages):
        if message.role == "user":
            try:
                return check_text(message.text(), "messages.content")
            except ValueError as error:
                raise ApiError(400, str(error), param="messages") from None
    raise ApiError(400, "no user message; send at least one message with role 'user'", param="messages")


def _shutdown_error(query_id: str) -> ApiError:
    return ApiError(
        503,
        f"the server is shutting down; retry on another replica; request id {query_id}",
        type="server_error",
        code="server_shutting_down",
        audited=True,
    )


DONE = b"data: [DONE]\n\n"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def handle_chat(state: ServiceState, request: Request, user_id: str) -> HttpResponse:
    """Answer one chat completion request (see the module docstring for what the client gets)."""
    state.require_pipeline()  # guard-only: 404 before the body is read
    body = await read_json(request, ChatCompletionRequest, state.settings.max_body_bytes, state.settings.body_timeout_s)
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
        Query(last_user_text(body.messages), user_id=user_id, id=f"chatcmpl-{new_id()}"),
        state.require_pipeline().max_query_chars,
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
            usage = body.stream_options is not None and body.stream_options.include_usage
            early = _early_answer(exchange, first, body.stream, usage=body.stream and usage)
            if early is not None:
                return early
        if not body.stream:
            return await _collect(exchange, first)
        handed_over = True
        usage = body.stream_options is not None and body.stream_options.include_usage
        return _ExchangeStream(_sse(exchange, first, usage=usage), exchange)
    except ClientGoneError:
        return HttpResponse(status_code=499)
    except ShuttingDownError:
        exchange.shut_down()
        raise _shutdown_error(query.id) from None
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


def _refusal(exchange: Exchange, stream: bool, info: RagshieldInfo, *, usage: bool = False) -> HttpResponse:
    refusal = exchange.state.require_pipeline().refusal
    if not stream:
        return exchange.completion(refusal, "content_filter", info)
    body = [
        exchange.chunk(Delta(role="assistant", content="")),
        exchange.chunk(Delta(content=refusal)),
        exchange.chunk(Delta(), "content_filter", info),
    ]
    usage_chunk = exchange.usage_chunk() if usage else None
    if usage_chunk is not None:
        body.append(usage_chunk)
    body.append(DONE)
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


def _early_answer(exchange: Exchange, response: Response, stream: bool, *, usage: bool = False) -> HttpResponse | None:
    """The reply when the pipeline's first item is already its final Response (no text released)."""
    action, stage = outcome_of(response), stage_of(response)
    exchange.audit(action, response)
    if action == "unavailable":
        raise store_unavailable_error(exchange.query.id)
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
        return _refusal(exchange, stream, exchange.info(response), usage=usage)
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


async def _sse(exchange: Exchange, first: str | Response, *, usage: bool = False) -> AsyncIterator[bytes]:
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
                for event in _final_events(exchange, item, usage=usage):
                    yield event
                return
            yield exchange.chunk(Delta(content=item))
            item = await exchange.next()
    except ClientGoneError:
        return
    except ShuttingDownError:
        exchange.shut_down()
        yield exchange.error_event(
            f"the server is shutting down and stopped this answer; retry on another replica; "
            f"request id {exchange.query.id}",
            type="server_error",
            code="server_shutting_down",
        )
    except Exception as error:  # the pipeline raised mid-stream: end with an error event
        exchange.audit("error", None, detail={"error_type": type(error).__name__})
        yield exchange.error_event(
            f"internal error ({type(error).__name__}); request id {exchange.query.id}",
            type="server_error",
            code="internal_error",
        )
    finally:
        exchange.close()


def _final_events(exchange: Exchange, response: Response, *, usage: bool = False) -> list[bytes]:
    action = outcome_of(response)
    exchange.audit(action, response)
    if action == "allow":
        events = [exchange.chunk(Delta(), _openai_finish(response), exchange.info(response))]
        usage_chunk = exchange.usage_chunk() if usage else None
        return [*events, usage_chunk, DONE] if usage_chunk is not None else [*events, DONE]
    if action == "unavailable":
        error = store_unavailable_error(exchange.query.id)
        return [exchange.error_event(error.message, type=error.type, code="policy_store_unavailable")]
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
