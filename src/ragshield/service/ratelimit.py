"""Per-key request rate limit (`rate_limit:` in the serve config), on the `limits` library.

At most `requests` requests per API key (its user id; the anonymous user without keys) in any
`per_seconds`-second window: `limits`' moving window, which keeps one timestamp per admitted
request, so a client can never exceed the rate over any window, however it times its requests
(a fixed window admits twice the rate across a boundary). `limits` has no token bucket; the
moving window gives the same bound with a burst of at most `requests`.

The counts live where the blocking policy's state lives, so every replica behind a load balancer
shares one limit: in the policy's Redis when it uses one (`limits`' Redis storage, its own keys
under the `LIMITS` prefix), else in this process's memory (SQLite has no `limits` storage; one
process serves all of its requests anyway). `rate_limit.store` overrides it.

Past the limit a request is answered 429 `rate_limit_exceeded` with `Retry-After` (whole seconds
until a slot frees). If the Redis store cannot be reached the check fails closed (503
`rate_limit_store_unavailable`) unless the service is configured `fail_closed: false`.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from ragshield.errors import ConfigError, require_extra
from ragshield.service.settings import RateLimitConfig
from ragshield.service.state import ApiError

log = logging.getLogger(__name__)
NAMESPACE = "ragshield-rate"


def storage_uri(config: RateLimitConfig, policy_store: str | None) -> str:
    """The `limits` storage URI for `config`: its own store, else the policy's Redis, else memory."""
    store = config.store
    if store is None:
        store = policy_store if policy_store and policy_store.startswith(("redis://", "rediss://")) else "memory"
    return "memory://" if store == "memory" else store


@dataclass(frozen=True)
class Admission:
    """One rate-limit decision: admitted, or not and for how many more seconds (>= 1)."""

    admitted: bool
    retry_after_s: int = 0


class RateLimiter:
    """The per-key limiter of one app.

    Args:
        config: the limit.
        policy_store: the blocking policy's `store` setting (`memory`, `sqlite:PATH`, `redis://...`).
        fail_closed: refuse requests (503) while the store cannot be reached; False: admit them.

    Raises:
        BackendUnavailable: `limits` (extra `guard` or `server`), or `redis` for a Redis store, is
            not installed.
        ConfigError: the storage URI is not usable.
    """

    def __init__(self, config: RateLimitConfig, *, policy_store: str | None = None, fail_closed: bool = True) -> None:
        limits = require_extra("limits", extra="guard", needed_for="the per-key rate limit (rate_limit:)")
        strategies = require_extra("limits.strategies", extra="guard", package="limits")
        self.uri = storage_uri(config, policy_store)
        if self.uri.startswith("redis"):
            require_extra("redis", extra="redis", needed_for="a rate limit shared through Redis")
        try:
            # a Redis that does not answer must not hold a request (and its worker) for long
            options: dict[str, Any] = (
                {"socket_timeout": 2.0, "socket_connect_timeout": 2.0} if self.uri.startswith("redis") else {}
            )
            storage = limits.storage.storage_from_string(self.uri, **options)
        except Exception as error:  # limits raises its own ConfigurationError and ValueError
            raise ConfigError(f"rate_limit store is not usable ({type(error).__name__}); check its URL") from None
        self.config = config
        self.fail_closed = fail_closed
        self.item: Any = limits.RateLimitItemPerSecond(config.requests, config.per_seconds, namespace=NAMESPACE)
        self._limiter: Any = strategies.MovingWindowRateLimiter(storage)

    @property
    def shared(self) -> bool:
        """True when the counts live outside this process (Redis): a blocking call per request."""
        return not self.uri.startswith("memory")

    def admit(self, user: str) -> Admission:
        """Count one request of `user` when the limit allows it.

        Raises:
            ApiError: 503 `rate_limit_store_unavailable` when the store cannot be reached and the
                service fails closed.
        """
        try:
            if self._limiter.hit(self.item, user):
                return Admission(True)
            reset_at = float(self._limiter.get_window_stats(self.item, user).reset_time)
        except Exception as error:  # a storage outage (redis ConnectionError, TimeoutError, ...)
            log.warning("rate-limit store unavailable (%s)", type(error).__name__)
            if not self.fail_closed:
                return Admission(True)
            raise ApiError(
                503,
                "the rate-limit store is unavailable, so the request was not answered; retry later",
                type="server_error",
                code="rate_limit_store_unavailable",
            ) from None
        return Admission(False, max(1, math.ceil(reset_at - time.time())))


def rate_limited_error(config: RateLimitConfig, admission: Admission) -> ApiError:
    """The 429 a client gets past its limit, with `Retry-After`."""
    return ApiError(
        429,
        f"rate limit of {config.requests} requests per {config.per_seconds}s for this API key reached; "
        f"retry after {admission.retry_after_s}s",
        type="rate_limit_error",
        code="rate_limit_exceeded",
        headers={"Retry-After": str(admission.retry_after_s)},
    )
