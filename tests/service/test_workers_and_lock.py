"""The two primitives behind cancellation and bounded threads: `FifoLock` (arrival order, leaves
the line on timeout or cancel) and `WorkerPool` (at most `size` threads; a slot comes back when
the work ends, not when its caller stopped waiting)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from ragshield.generators.base import CancelToken, FifoLock, GenerationCancelled, cancel_scope, check_cancelled
from ragshield.service.workers import WorkerPool


def _waiter(lock: FifoLock, order: list[int], number: int, **kwargs: object) -> threading.Thread:
    def run() -> None:
        if lock.acquire(**kwargs):  # type: ignore[arg-type]
            order.append(number)
            time.sleep(0.01)
            lock.release()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_fifo_lock_grants_in_arrival_order() -> None:
    lock, order = FifoLock(), []
    lock.acquire()
    threads = []
    for number in range(5):
        threads.append(_waiter(lock, order, number))
        while lock.waiting < number + 1:
            time.sleep(0.001)
    lock.release()
    for thread in threads:
        thread.join(5)
    assert order == [0, 1, 2, 3, 4]


def test_a_waiter_leaves_the_line_at_its_timeout() -> None:
    lock = FifoLock()
    lock.acquire()
    started = time.monotonic()
    assert lock.acquire(timeout=0.1) is False
    assert 0.09 < time.monotonic() - started < 1.0
    assert lock.waiting == 0
    lock.release()
    assert lock.acquire(timeout=0) is True


def test_a_cancelled_waiter_leaves_at_once_and_never_gets_the_lock() -> None:
    lock, order = FifoLock(), []
    lock.acquire()
    token = CancelToken()
    cancelled = _waiter(lock, order, 1, cancel=token)
    while lock.waiting < 1:
        time.sleep(0.001)
    later = _waiter(lock, order, 2)
    while lock.waiting < 2:
        time.sleep(0.001)
    started = time.monotonic()
    token.cancel()
    cancelled.join(5)
    assert time.monotonic() - started < 0.5 and lock.waiting == 1
    lock.release()
    later.join(5)
    assert order == [2]


def test_a_waiter_cancelled_as_the_lock_is_handed_over_passes_it_on() -> None:
    lock, order = FifoLock(), []
    lock.acquire()
    token = CancelToken()
    first = _waiter(lock, order, 1, cancel=token)
    while lock.waiting < 1:
        time.sleep(0.001)
    second = _waiter(lock, order, 2)
    while lock.waiting < 2:
        time.sleep(0.001)
    token.cancel()
    lock.release()  # may hand the lock to the cancelled waiter before it noticed: it passes it on
    first.join(5)
    second.join(5)
    assert order == [2]


def test_the_lock_as_a_context_manager_honours_the_cancel_scope() -> None:
    lock, token = FifoLock(), CancelToken()
    lock.acquire()
    raised: list[BaseException] = []

    def run() -> None:
        with cancel_scope(token):
            try:
                with lock:
                    pass
            except GenerationCancelled as error:
                raised.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    while lock.waiting < 1:
        time.sleep(0.001)
    token.cancel()
    thread.join(5)
    assert len(raised) == 1 and lock.waiting == 0
    with cancel_scope(token), pytest.raises(GenerationCancelled):
        check_cancelled()
    check_cancelled()  # outside a scope: nothing to cancel


def test_worker_pool_threads_and_slots_are_bounded() -> None:
    async def scenario() -> tuple[int, int, float]:
        pool = WorkerPool(2)
        release = threading.Event()
        with pytest.raises(TimeoutError):
            await pool.run(release.wait, timeout=0.05)  # the caller gives up; the work keeps its slot
        with pytest.raises(TimeoutError):
            await pool.run(release.wait, timeout=0.05)
        assert not await pool.acquire(0.05)  # both slots are held by the hanging work
        release.set()
        started = time.monotonic()
        results = await asyncio.gather(*(pool.run(lambda n=n: n * n, timeout=5) for n in range(10)))
        assert results == [n * n for n in range(10)]
        pool.shutdown()
        return pool.threads, pool.busy, time.monotonic() - started

    threads, busy, seconds = asyncio.run(scenario())
    assert threads <= 2 and busy == 0 and seconds < 2
