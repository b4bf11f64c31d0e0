"""The `Generator` protocol and helpers shared by every backend."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from ragshield.registry import GENERATORS, resolve
from ragshield.types import GenerationRequest


@runtime_checkable
class Generator(Protocol):
    """Streams text deltas for a request. Backends raise `GenerationError` on failure."""

    @property
    def name(self) -> str: ...

    def stream(self, request: GenerationRequest) -> Iterator[str]: ...


class StreamEnd(str):
    """The last item a generator may yield: EMPTY text that says why the model stopped.

    `reason` is `length` when the `max_tokens` limit cut the answer (`stop` is the default and
    is never sent). It is a `str` of length 0, so code that joins or counts deltas is unaffected;
    `RagPipeline` turns it into `Response.finish_reason`.
    """

    reason: str

    def __new__(cls, reason: str) -> StreamEnd:
        end = super().__new__(cls, "")
        end.reason = reason
        return end


class FifoLock:
    """A lock granted in arrival order, for backends that serve one request at a time.

    `threading.Lock` is not fair: under load a waiting thread can lose the race again and again,
    so with 50 queued requests one can wait far past the request timeout while later ones pass.
    Usable as a context manager, also inside a streaming generator (closing the stream early
    releases it).
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiters: deque[threading.Event] = deque()
        self._held = False

    def acquire(self) -> None:
        with self._mutex:
            if not self._held and not self._waiters:
                self._held = True
                return
            turn = threading.Event()
            self._waiters.append(turn)
        turn.wait()  # release() hands the lock over directly: no race on wake-up

    def release(self) -> None:
        with self._mutex:
            if self._waiters:
                self._waiters.popleft().set()
            else:
                self._held = False

    def __enter__(self) -> FifoLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def complete(generator: Generator, request: GenerationRequest) -> str:
    """The whole answer as one string."""
    return "".join(generator.stream(request))


async def astream(generator: Generator, request: GenerationRequest) -> AsyncIterator[str]:
    """Async iteration over a sync generator's deltas; each step runs in a worker thread so the
    event loop is never blocked by model inference."""
    iterator = iter(generator.stream(request))
    sentinel = object()
    while True:
        delta = await asyncio.to_thread(next, iterator, sentinel)
        if delta is sentinel:
            return
        yield str(delta)


def make_generator(spec: Mapping[str, Any] | str) -> Generator:
    """A generator from a config mapping such as `{name: llama-cpp, max_ctx: 2048}` or a name.

    Raises:
        UnknownNameError: unknown generator name.
    """
    params = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = str(params.pop("name", "llama-cpp"))
    cls = resolve(GENERATORS, name, kind="generator")
    generator: Generator = cls(**params)
    return generator
