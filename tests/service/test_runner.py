"""The per-request runner's fairness: a one-at-a-time model is granted in arrival order."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from ragshield.service.runner import FairGenerator, FifoLock
from ragshield.types import ChatMessage, GenerationRequest


def test_fifo_lock_grants_in_arrival_order() -> None:
    lock = FifoLock()
    lock.acquire()
    order: list[int] = []

    def waiter(number: int) -> None:
        lock.acquire()
        order.append(number)
        time.sleep(0.001)
        lock.release()

    threads = []
    for number in range(8):
        thread = threading.Thread(target=waiter, args=(number,))
        thread.start()
        threads.append(thread)
        time.sleep(0.02)  # arrive one after the other
    lock.release()
    for thread in threads:
        thread.join(5)
    assert order == list(range(8))


class _Counting:
    """FAKE generator: three deltas."""

    name = "counting-fake"

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        yield from ("a", "b", "c")


def test_fair_generator_releases_its_turn_when_closed_early() -> None:
    fair = FairGenerator(_Counting())
    request = GenerationRequest(messages=(ChatMessage("user", "hi"),))
    first = iter(fair.stream(request))
    assert next(first) == "a"
    first.close()  # a client that left: the next request must not wait forever
    done = threading.Event()
    threading.Thread(target=lambda: (list(fair.stream(request)), done.set())).start()
    assert done.wait(2.0)
