"""The `Generator` protocol and helpers shared by every backend."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ragshield.errors import GenerationError
from ragshield.parameters import check_parameters
from ragshield.registry import GENERATORS, resolve
from ragshield.types import GenerationRequest


@runtime_checkable
class Generator(Protocol):
    """Streams text deltas for a request. Backends raise `GenerationError` on failure."""

    @property
    def name(self) -> str: ...

    def stream(self, request: GenerationRequest) -> Iterator[str]: ...


@dataclass(frozen=True, slots=True)
class TokenLogprobs:
    """Teacher-forced log-probabilities of a continuation's tokens, in order.

    `offsets[i]` is the character offset in the continuation where token i starts;
    `logprobs[i]` is log P(token i | prompt, tokens before i) in nats (<= 0; higher = likelier).
    """

    offsets: tuple[int, ...]
    logprobs: tuple[float, ...]


@runtime_checkable
class TokenScorer(Protocol):
    """Scores a given continuation of a prompt without sampling (teacher forcing).

    Backends raise `GenerationError` when they cannot score (e.g. a server without prompt
    logprobs) and `ConfigError` when prompt + continuation exceed the context window.
    """

    @property
    def name(self) -> str: ...

    def logprobs(self, prompt: str, continuation: str) -> TokenLogprobs: ...


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


class GenerationCancelled(GenerationError):
    """The caller cancelled the generation (its client left or its deadline passed)."""


class CancelToken:
    """A one-way flag that asks running work to stop; `cancel()` also wakes whoever waits on it.

    The service gives each request one token (`cancel_scope`); a backend checks it once per
    token it generates and `FifoLock.acquire` gives up its place in line when it is set, so a
    cancelled request frees the model within one token.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._mutex = threading.Lock()
        self._wakers: list[threading.Event] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._mutex:
            self._event.set()
            wakers, self._wakers = self._wakers, []
        for waker in wakers:
            waker.set()

    def wake_on_cancel(self, waker: threading.Event) -> None:
        """Set `waker` when this token is cancelled (at once when it already is)."""
        with self._mutex:
            if not self._event.is_set():
                self._wakers.append(waker)
                return
        waker.set()

    def forget(self, waker: threading.Event) -> None:
        with self._mutex, contextlib.suppress(ValueError):
            self._wakers.remove(waker)


_CURRENT_CANCEL: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar("ragshield_cancel", default=None)


@contextlib.contextmanager
def cancel_scope(token: CancelToken) -> Iterator[CancelToken]:
    """Make `token` the current one for this thread's work (generators read it per token)."""
    reset = _CURRENT_CANCEL.set(token)
    try:
        yield token
    finally:
        _CURRENT_CANCEL.reset(reset)


def current_cancel() -> CancelToken | None:
    """The token of the enclosing `cancel_scope` (None outside one)."""
    return _CURRENT_CANCEL.get()


def check_cancelled() -> None:
    """Raise `GenerationCancelled` when the enclosing `cancel_scope`'s token is set."""
    token = _CURRENT_CANCEL.get()
    if token is not None and token.cancelled:
        raise GenerationCancelled("the generation was cancelled")


class _Waiter:
    __slots__ = ("granted", "wake")

    def __init__(self) -> None:
        self.granted = False
        self.wake = threading.Event()


class FifoLock:
    """A lock granted in arrival order, for backends that serve one request at a time.

    `threading.Lock` is not fair: under load a waiting thread can lose the race again and again,
    so with 50 queued requests one can wait far past the request timeout while later ones pass.
    A waiter leaves the line when its `timeout` passes or its `CancelToken` is cancelled, so a
    request that was already answered never takes the model afterwards.
    Usable as a context manager (it then waits with the current `cancel_scope`'s token, and
    raises `GenerationCancelled` when that token is cancelled), also inside a streaming
    generator (closing the stream early releases it).
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._waiters: deque[_Waiter] = deque()
        self._held = False

    def acquire(self, timeout: float | None = None, cancel: CancelToken | None = None) -> bool:
        """Wait for the lock in arrival order.

        Args:
            timeout: seconds to wait at most (None: no limit).
            cancel: stop waiting as soon as this token is cancelled.

        Returns:
            True when the lock is held now; False when `timeout` passed or `cancel` was set first.
        """
        with self._mutex:
            if not self._held and not self._waiters:
                self._held = True
                return True
            if (timeout is not None and timeout <= 0) or (cancel is not None and cancel.cancelled):
                return False
            waiter = _Waiter()
            self._waiters.append(waiter)
        if cancel is not None:
            cancel.wake_on_cancel(waiter.wake)
        try:
            waiter.wake.wait(timeout)
        finally:
            if cancel is not None:
                cancel.forget(waiter.wake)
        with self._mutex:
            if not waiter.granted:
                self._waiters.remove(waiter)
                return False
        # release() handed the lock over directly (no race on wake-up); a caller cancelled at
        # the same moment passes it straight on instead of starting work nobody waits for
        if cancel is not None and cancel.cancelled:
            self.release()
            return False
        return True

    def release(self) -> None:
        with self._mutex:
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.granted = True
                waiter.wake.set()
            else:
                self._held = False

    @property
    def waiting(self) -> int:
        """How many callers wait in line now."""
        with self._mutex:
            return len(self._waiters)

    def __enter__(self) -> FifoLock:
        if not self.acquire(cancel=current_cancel()):
            raise GenerationCancelled("the generation was cancelled while waiting for the model")
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
        ConfigError: a parameter the generator does not take (the message lists the valid ones).
    """
    params = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = str(params.pop("name", "llama-cpp"))
    cls = resolve(GENERATORS, name, kind="generator")
    check_parameters(cls, params, kind="generator", name=name)
    generator: Generator = cls(**params)
    return generator
