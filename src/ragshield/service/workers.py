"""`WorkerPool`: the blocking work of every request runs on at most `size` threads, never on the
event loop.

Inference, guard checks (canary matching, PII scans) and building an audit line for a large
guard request are blocking CPU work. On the event loop they would stall every other request;
on a thread per request (as before), a guard that hangs would leave its thread behind each time a
request timed out, and threads would grow without bound.

A request takes a *slot* before its work starts and the slot comes back only when the work has
finished, not when the client was answered: work that outlives its request (a hanging guard, a
model that ignores cancellation) keeps its slot, so the pool never holds more than `size`
threads, and new requests wait in line (and time out, failing closed) instead of piling up.
Every piece of work gets its own thread at once (a slot is a thread), so work never waits
behind work that waits for it (a request holding the model lock always has its thread).

`max_concurrent_requests` in the serve config is `size`. The threads are daemons: a guard that
hangs forever cannot keep the process from exiting after SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
_Work = tuple[Callable[[], Any], "Future[Any]", asyncio.AbstractEventLoop]


class WorkerPool:
    """At most `size` worker threads; `await run(fn, timeout)` or `acquire` + `submit`.

    Args:
        size: the most threads (and pieces of work) at once; at least 1.

    Raises:
        ValueError: `size` below 1.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least 1 thread, got {size}")
        self.size = size
        self._slots = asyncio.Semaphore(size)
        self._queue: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._busy = 0
        self._closed = False
        self._count = threading.Lock()

    @property
    def threads(self) -> int:
        """Worker threads alive now (at most `size`)."""
        with self._count:
            return sum(thread.is_alive() for thread in self._threads)

    @property
    def busy(self) -> int:
        """Slots held now (work running, or about to start)."""
        with self._count:
            return self._busy

    async def acquire(self, timeout: float) -> bool:
        """Take a slot within `timeout` seconds; False when none came free in time."""
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=max(timeout, 0.0))
        except TimeoutError:
            return False
        with self._count:
            self._busy += 1
        return True

    def release(self) -> None:
        """Give back a slot taken with `acquire` when no work was submitted for it."""
        with self._count:
            self._busy -= 1
        self._slots.release()

    def submit(self, function: Callable[[], T]) -> Future[T]:
        """Run `function` on a worker thread; needs a slot from `acquire`, which it gives back
        when `function` returns or raises (whenever that is). Call from the event loop."""
        loop = asyncio.get_running_loop()
        future: Future[T] = Future()
        with self._count:
            if self._closed:
                self._busy -= 1
                self._slots.release()
                raise RuntimeError("the worker pool is shut down (the server is stopping)")
            # a slot is a thread: hand the work to an idle one (claimed here, so two submissions
            # never count on the same thread) or start one; never more than `size`
            if self._idle > 0:
                self._idle -= 1
            else:
                thread = threading.Thread(
                    target=self._serve, name=f"ragshield-worker-{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        self._queue.put((function, future, loop))
        return future

    def _serve(self) -> None:
        while True:
            work = self._queue.get()
            if work is None:
                return
            function, future, loop = work
            outcome: tuple[Any, BaseException | None] | None = None
            if future.set_running_or_notify_cancel():
                try:
                    outcome = (function(), None)
                except BaseException as raised:  # handed to whoever awaits the future
                    outcome = (None, raised)
            with self._count:
                self._idle += 1  # idle before the slot comes back, so the next submission reuses this thread
            with contextlib.suppress(RuntimeError):  # the loop closed (shutdown): nobody waits for slots
                loop.call_soon_threadsafe(self.release)
            if outcome is not None:
                value, error = outcome
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(value)

    async def run(self, function: Callable[[], T], timeout: float) -> T:
        """`function()` on a worker thread, waiting at most `timeout` seconds in all (for a slot
        and for the result).

        Raises:
            TimeoutError: no slot came free, or the work did not finish, in time (the work
                keeps its slot until it ends).
            Exception: whatever `function` raised.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(timeout, 0.0)
        if not await self.acquire(timeout):
            raise TimeoutError
        future = asyncio.wrap_future(self.submit(function))
        return await asyncio.wait_for(asyncio.shield(future), timeout=max(0.0, deadline - loop.time()))

    def shutdown(self) -> None:
        """Stop taking work; idle threads exit, running work finishes in the background."""
        with self._count:
            self._closed = True
            count = len(self._threads)
        for _ in range(count):
            self._queue.put(None)
