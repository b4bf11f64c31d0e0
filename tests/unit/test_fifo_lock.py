"""Fairness of a one-at-a-time model (llama.cpp): it is granted in arrival order, and a stream
closed early gives its turn to the next request."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from ragshield.generators.base import FifoLock
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


class _OneAtATime:
    """FAKE generator shaped like `LlamaCppGenerator`: three deltas under its FIFO lock."""

    name = "one-at-a-time-fake"

    def __init__(self) -> None:
        self._lock = FifoLock()

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        with self._lock:
            yield from ("a", "b", "c")


def test_a_stream_closed_early_releases_the_model() -> None:
    fair = _OneAtATime()
    request = GenerationRequest(messages=(ChatMessage("user", "hi"),))
    first = iter(fair.stream(request))
    assert next(first) == "a"
    first.close()  # a client that left: the next request must not wait forever
    done = threading.Event()
    threading.Thread(target=lambda: (list(fair.stream(request)), done.set())).start()
    assert done.wait(2.0)


def test_llama_cpp_generator_uses_the_fifo_lock() -> None:
    """The real backend must take requests in arrival order (constructing it loads no model)."""
    from ragshield.generators.llama_cpp import LlamaCppGenerator

    assert isinstance(LlamaCppGenerator()._lock, FifoLock)
