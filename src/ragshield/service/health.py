"""`StoreProbe`: is the blocking-policy store reachable? For `/readyz` and the startup warning.

The probe runs on one thread of its own (never a request's worker slot, so `/readyz` answers
while every slot is busy), at most one check at a time, cached for a second, and gives up after
`timeout_s` seconds (a hung store reads as down).
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

log = logging.getLogger(__name__)
STORE_DOWN = "policy_store_unavailable"


class StoreProbe:
    """Pings `policy.store` (any store with a `ping()`); no policy or no `ping`: always fine.

    Args:
        policy: the pipeline's blocking policy (None: nothing to probe).
        timeout_s: seconds a ping may take before the store counts as down.
        cache_s: seconds a result is reused (probes are cheap, but a load balancer polls often).
    """

    def __init__(self, policy: Any, *, timeout_s: float = 2.0, cache_s: float = 1.0) -> None:
        self.store = getattr(policy, "store", None)
        self.timeout_s = timeout_s
        self.cache_s = cache_s
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragshield-store-probe")
        self._checked_at = float("-inf")
        self._result: str | None = None
        self._running: asyncio.Future[str | None] | None = None

    async def check(self) -> str | None:
        """None when the store answered, else `policy_store_unavailable`."""
        ping = getattr(self.store, "ping", None)
        if not callable(ping):
            return None
        if time.monotonic() - self._checked_at < self.cache_s:
            return self._result
        if self._running is None or self._running.done():
            self._running = asyncio.ensure_future(self._ping(ping))
        return await asyncio.shield(self._running)

    async def _ping(self, ping: Any) -> str | None:
        try:
            await asyncio.wait_for(asyncio.wrap_future(self._executor.submit(ping)), timeout=self.timeout_s)
            result = None
        except Exception as error:  # any failure to answer is an outage as far as readiness goes
            log.warning("policy store check failed: %s", type(error).__name__)
            result = STORE_DOWN
        self._result, self._checked_at = result, time.monotonic()
        return result

    async def persistence_warning(self) -> str | None:
        """The store's warning about lost blocks on a restart (Redis without persistence), or a
        warning that it could not be reached at startup; None when all is well or unknown."""
        check = getattr(self.store, "persistence_warning", None)
        if not callable(check):
            return None
        try:
            warning: str | None = await asyncio.wait_for(
                asyncio.wrap_future(self._executor.submit(check)), timeout=self.timeout_s
            )
        except Exception as error:
            return (
                f"the policy store did not answer at startup ({type(error).__name__}); requests get 503 until it does"
            )
        return warning

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
