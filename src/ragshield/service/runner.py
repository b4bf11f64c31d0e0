"""Run `RagPipeline.stream` off the event loop, one dedicated thread per request.

Inference is blocking CPU work, and `LlamaCppGenerator` holds a lock for a whole answer:
a request waiting for the model would park its thread on that lock. On the shared
`asyncio.to_thread` pool, enough parked threads starve the request that holds the lock
(its next token needs a pool thread too) and the service deadlocks. A dedicated thread per
request cannot starve that way; `max_concurrent_requests` bounds how many exist.

A model that serves one request at a time grants it in arrival order (`FifoLock` in
`LlamaCppGenerator`), so with many requests waiting the longest wait is bounded by the queue
length times one answer.

Items (text deltas, then the final `Response`) cross to the event loop on an
`asyncio.Queue`. `cancel()` (client gone, timeout) makes the thread stop at the next item
and close the pipeline's generator, which closes the model stream and frees the model.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass

from ragshield.rag.pipeline import RagPipeline
from ragshield.types import Query, Response

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Failed:
    error: BaseException


class _Done:
    pass


_DONE = _Done()


class PipelineRun:
    """One `pipeline.stream(query)` running in its own thread.

    Use `await run.next(timeout)` until it returns a `Response` (the last item); before that
    it returns `str` text (the deltas already waiting, joined), raises `TimeoutError` when
    nothing arrived in time, and re-raises an exception the pipeline raised.
    """

    def __init__(self, pipeline: RagPipeline, query: Query) -> None:
        self.pipeline = pipeline
        self.query = query
        self._stop = threading.Event()
        self._queue: asyncio.Queue[str | Response | _Failed | _Done] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._work, name=f"ragshield-{query.id[:8]}", daemon=True)
        self._finished = False
        self._pending: str | Response | _Failed | _Done | None = None

    def start(self) -> PipelineRun:
        self._thread.start()
        return self

    def _put(self, item: str | Response | _Failed | _Done) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed (server shutting down): nobody is listening
            self._stop.set()

    def _work(self) -> None:
        stream = self.pipeline.stream(self.query)  # a generator: close() runs its cleanup
        try:
            for item in stream:
                if self._stop.is_set():
                    break
                self._put(item)
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
        """Ask the thread to stop at its next item; it closes the pipeline's stream itself."""
        self._stop.set()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()
