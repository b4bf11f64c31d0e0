"""`Exchange`: one chat request, from its worker slot to its one audit line, and the bodies it
sends (completion, SSE chunks, error events)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response as HttpResponse

from ragshield.integrations.shield import recording_defense
from ragshield.service.audit import scrubber_for
from ragshield.service.runner import PipelineRun
from ragshield.service.schemas import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    Choice,
    ChunkChoice,
    Delta,
    RagshieldInfo,
    Usage,
    VerdictOut,
)
from ragshield.service.state import (
    ApiError,
    ServiceState,
    finish_request,
    model_response,
    stage_of,
    timeout_verdict,
)
from ragshield.types import Query, Response, RetrievalResult, Verdict

POLL_S = 0.25  # how often a waiting request checks its client and the shutdown deadline
ENDPOINT = "chat"


class ClientGoneError(Exception):
    """The client closed the connection; the run is stopped and nothing more is sent."""


class ShuttingDownError(Exception):
    """The server is shutting down and the drain deadline passed before the answer was done."""


def token_counter(state: ServiceState) -> Callable[[str], int]:
    """Counts tokens for `usage`: the model's tokenizer when the generator has one (llama.cpp),
    else whitespace-separated words (an estimate, said so in the docs)."""
    counter = getattr(state.require_pipeline().generator, "count_tokens", None)
    if callable(counter):
        return counter
    return lambda text: len(text.split())


class Exchange:
    """One chat request, from its worker slot to its audit line."""

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
        self._audited = False
        self._closed = False
        state.metrics.in_flight.inc()
        state.open_exchanges.add(self)

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.perf_counter())

    async def start(self) -> bool:
        """Take a worker slot and start the pipeline; False when the deadline passed first.

        Raises:
            ShuttingDownError: the drain deadline passed while waiting for a slot.
        """
        wait = min(self.remaining(), self.state.drain_remaining())
        if not await self.state.pool.acquire(wait):
            if self.state.draining.is_set() and self.state.drain_remaining() <= 0.0 < self.remaining():
                raise ShuttingDownError
            return False
        pipeline = self.state.require_pipeline()
        self.run = PipelineRun(
            pipeline.with_defense(recording_defense(pipeline.defense, self.sink)),
            self.query,
            count_tokens=token_counter(self.state),
        )
        try:
            self.run.start(self.state.pool)  # the pool gives the slot back when the run's thread ends
        except RuntimeError:  # the pool is shut down: the server is stopping
            self.run = None
            raise ShuttingDownError from None
        return True

    async def next(self) -> str | Response | None:
        """The next delta or the final Response; None at the deadline.

        Raises:
            ClientGoneError: the client disconnected while we waited.
            ShuttingDownError: the server is draining and its deadline passed.
        """
        assert self.run is not None
        while True:
            try:
                return await self.run.next(min(POLL_S, self.remaining(), self.state.drain_remaining()))
            except TimeoutError:
                if self.remaining() <= 0.0:
                    return None
                if self.state.draining.is_set() and self.state.drain_remaining() <= 0.0:
                    raise ShuttingDownError from None
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

    def shut_down(self) -> None:
        """Audit a request the shutdown cut short (the caller tells the client)."""
        self.audit("shutdown", None, detail={"reason": "the server shut down before the answer was complete"})

    def close(self) -> None:
        """Stop the run and audit a request that ended without a decision (idempotent).

        The worker slot comes back when the run's thread ends (within one token of the cancel
        for a model that checks its `CancelToken`)."""
        if self._closed:
            return
        self._closed = True
        self.state.metrics.in_flight.dec()
        self.state.open_exchanges.discard(self)
        if self.run is not None:
            self.run.cancel()
        if not self._audited:
            if self.state.draining.is_set():
                self.shut_down()
            else:
                self.audit("disconnected", None, detail={"reason": "the client closed the connection"})

    # -- response bodies ----------------------------------------------------------------

    def info(self, response: Response | None, verdicts: tuple[Verdict, ...] = ()) -> RagshieldInfo:
        every = tuple(response.verdicts if response is not None else ()) + verdicts
        blocked = any(v.blocked for v in every)
        stage = stage_of(response) if response is not None else ("service" if blocked else None)
        exposed = [VerdictOut.of(v) for v in every] if self.state.settings.expose_verdicts else None
        return RagshieldInfo(request_id=self.query.id, blocked=blocked, stage=stage, verdicts=exposed)

    def usage(self) -> Usage | None:
        """Token counts of the query and the released answer (None before the run finished)."""
        if self.run is None or self.run.usage is None:
            return None
        prompt, completion = self.run.usage
        return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)

    def chunk(self, delta: Delta, finish: str | None = None, info: RagshieldInfo | None = None) -> bytes:
        body = ChatCompletionChunk(
            id=self.query.id,
            created=self.created,
            model=self.model,
            choices=[ChunkChoice(delta=delta, finish_reason=finish)],
            ragshield=info,
        )
        return b"data: " + body.model_dump_json(exclude_none=True).encode("utf-8") + b"\n\n"

    def usage_chunk(self) -> bytes | None:
        """The `stream_options.include_usage` chunk: no choices, the usage (None when unknown)."""
        usage = self.usage()
        if usage is None:
            return None
        body = ChatCompletionChunk(id=self.query.id, created=self.created, model=self.model, choices=[], usage=usage)
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
            usage=self.usage(),
        )
        return model_response(body)

    def blocked_message(self, response: Response | None, verdicts: tuple[Verdict, ...] = ()) -> str:
        names = [v.guard for v in (*(response.verdicts if response else ()), *verdicts) if v.blocked]
        which = f" ({', '.join(names)})" if self.state.settings.expose_verdicts and names else ""
        return f"the answer was stopped by a guard{which}; request id {self.query.id}"


async def drain_open_exchanges(state: ServiceState) -> None:
    """At shutdown, after the drain: stop and audit every request still open (exactly one line each)."""
    for exchange in list(state.open_exchanges):
        exchange.close()
    await asyncio.sleep(0)
