"""Run `RagPipeline.stream` off the event loop, on a thread of the service's `WorkerPool`.

Inference is blocking CPU work, and `LlamaCppGenerator` holds a lock for a whole answer. The
whole stream of one request runs on one pool thread (a slot of the pool is a thread), so a
request waiting for the model never starves the request that holds it. A model that serves one
request at a time grants it in arrival order (`FifoLock`).

Items (text deltas, then the final `Response`) cross to the event loop on an `asyncio.Queue`.
`cancel()` (client gone, timeout, shutdown) sets the run's `CancelToken`: a request still in line
for the model leaves the line at once, a generating model stops at its next token
(`LlamaCppGenerator` checks the token per token), and the pipeline's stream is closed, which
frees the model. The pool slot comes back when the thread has finished.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from ragshield.generators.base import CancelToken, GenerationCancelled, cancel_scope
from ragshield.pipeline import RagPipeline
from ragshield.service.workers import WorkerPool
from ragshield.types import Query, Response

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Failed:
    error: BaseException


class _Done:
    pass


_DONE = _Done()


class PipelineRun:
    """One `pipeline.stream(query)` running on a pool thread.

    Use `await run.next(timeout)` until it returns a `Response` (the last item); before that
    it returns `str` text (the deltas already waiting, joined), raises `TimeoutError` when
    nothing arrived in time, and re-raises an exception the pipeline raised.

    Args:
        pipeline: the pipeline to stream from.
        query: the client's query.
        count_tokens: counts tokens of a text (for `usage`); called on the worker thread once the
            answer is complete, so the event loop never tokenizes. None: no usage.
    """

    def __init__(
        self, pipeline: RagPipeline, query: Query, *, count_tokens: Callable[[str], int] | None = None
    ) -> None:
        self.pipeline = pipeline
        self.query = query
        self.token = CancelToken()
        self.count_tokens = count_tokens
        self.usage: tuple[int, int] | None = None  # (prompt, completion) tokens, set before the Response
        self._queue: asyncio.Queue[str | Response | _Failed | _Done] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._finished = False
        self._pending: str | Response | _Failed | _Done | None = None
        self.future: asyncio.Future[None] | None = None

    def start(self, pool: WorkerPool) -> PipelineRun:
        """Submit the run to `pool` (the caller holds a slot from `pool.acquire`)."""
        self.future = asyncio.wrap_future(pool.submit(self._work))
        return self

    def _put(self, item: str | Response | _Failed | _Done) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed (server shutting down): nobody is listening
            self.token.cancel()

    def _usage(self, response: Response) -> None:
        if self.count_tokens is None:
            return
        try:
            self.usage = (self.count_tokens(self.query.text), self.count_tokens(response.text))
        except Exception as error:  # usage is informational: never fail an answer over it
            log.warning("token counting failed: %s", type(error).__name__)

    def _work(self) -> None:
        with cancel_scope(self.token):
            stream = self.pipeline.stream(self.query)  # a generator: close() runs its cleanup
            try:
                for item in stream:
                    if self.token.cancelled:
                        break
                    if isinstance(item, Response):
                        self._usage(item)
                    self._put(item)
            except GenerationCancelled:
                pass  # cancelled while waiting for the model: nobody waits for an answer
            except Exception as error:  # reaches the client as a clean error, never kills the server
                log.warning("pipeline raised %s", type(error).__name__)
                self._put(_Failed(error))
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    close()  # GeneratorExit inside the pipeline closes the model's stream
                self._put(_DONE)

    async def next(self, timeout: float) -> str | Response:
        """The next delta or the final `Response`.

        Raises:
            TimeoutError: nothing arrived within `timeout` seconds (the run keeps going).
            RuntimeError: the run ended without a `Response` (it was cancelled).
            Exception: whatever the pipeline raised.
        """
        if self._finished:
            raise RuntimeError("the pipeline run has already ended")
        if self._pending is not None:
            item, self._pending = self._pending, None
        else:
            item = await asyncio.wait_for(self._queue.get(), timeout=max(timeout, 0.0))
        if isinstance(item, str):
            # a slow client gets the deltas that piled up as one: fewer events, same text
            pieces = [item]
            while not self._queue.empty():
                following = self._queue.get_nowait()
                if not isinstance(following, str):
                    self._pending = following
                    break
                pieces.append(following)
            return "".join(pieces)
        if isinstance(item, _Failed):
            self._finished = True
            raise item.error
        if isinstance(item, _Done):
            self._finished = True
            raise RuntimeError("the pipeline run ended without a response")
        if isinstance(item, Response):
            self._finished = True
        return item

    def cancel(self) -> None:
        """Stop the run: out of the model's line at once, or at the model's next token."""
        self.token.cancel()
