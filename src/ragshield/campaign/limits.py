"""Request pacing and retries of the campaign engine.

`RateLimiter` spaces request starts at least `1 / rate` seconds apart (every attempt counts,
retries included), so in any window of T seconds at most `T * rate + 1` requests start.
`retrying` is tenacity's async retry loop with the campaign's rules: only retryable
`TargetError`s (timeouts, 408, 429, 5xx, dropped connections) are retried; a server's
`Retry-After` is honoured as given (capped at `max_wait_s`), otherwise the wait grows
exponentially with jitter.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from ragshield.errors import ConfigError
from ragshield.targets.base import TargetError


class RateLimiter:
    """At most `rate` request starts per second (None or 0: no limit)."""

    def __init__(self, rate: float | None) -> None:
        if rate is not None and rate < 0:
            raise ConfigError(f"the request rate limit must be >= 0 per second, got {rate}")
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        if not self.interval:
            return
        # the lock is held through the sleep, and the next slot counts from when this one
        # really started, so late wake-ups never bunch two starts together
        async with self._lock:
            wait = self._next - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._next = time.monotonic() + self.interval


def _retryable(error: BaseException) -> bool:
    return isinstance(error, TargetError) and error.retryable


def retrying(
    *, retries: int, initial_wait_s: float = 0.5, max_wait_s: float = 30.0, on_retry: Callable[[TargetError], None]
) -> AsyncRetrying:
    """An `AsyncRetrying` that makes at most `retries + 1` attempts (module docstring: the rules)."""
    if retries < 0:
        raise ConfigError(f"retries must be >= 0, got {retries}")
    backoff = wait_exponential_jitter(initial=initial_wait_s, max=max_wait_s, jitter=initial_wait_s)

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        if isinstance(error, TargetError) and error.retry_after is not None:
            return min(error.retry_after, max_wait_s)
        return float(backoff(state))

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        if isinstance(error, TargetError):
            on_retry(error)

    kwargs: dict[str, Any] = {
        "stop": stop_after_attempt(retries + 1),
        "wait": wait,
        "retry": retry_if_exception(_retryable),
        "before_sleep": before_sleep,
        "reraise": True,
    }
    return AsyncRetrying(**kwargs)
