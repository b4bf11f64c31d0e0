"""Per-user blocking: >= k integrity violations in a user's last W queries blocks the user.

Extraction needs many probes, so counting violations over a sliding window turns a per-query
detector into a per-user one, and the window bounds how often a benign user is blocked by chance:
with a per-query false-positive rate p, a window of W benign queries reaches k false alarms with
probability P(Binomial(W, p) >= k) (`false_block_bound`, CanaryRAG appendix B.1).

State lives in a `WindowStore` (`ragshield.guards.policy_store`: memory, SQLite or Redis); its
names are re-exported here, where callers import them. A store that cannot be reached raises
`PolicyStoreUnavailable`, never a blocking decision of its own: an outage is a fault of the
service, not a verdict on a user.

User ids are opaque to the stores; callers that combine ids (an application key's user and the
application's end user) build them with `policy_identity`, so two combinations never collide.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ragshield.errors import ConfigError
from ragshield.guards.policy_store import (
    STORE_FORMS,
    MemoryStore,
    PolicyStoreUnavailable,
    RedisStore,
    SQLiteStore,
    WindowStore,
    is_store_outage,
    make_store,
)
from ragshield.types import Action, Verdict

__all__ = [
    "POLICY_NAME",
    "STORE_FORMS",
    "MemoryStore",
    "PolicyStoreUnavailable",
    "RedisStore",
    "SQLiteStore",
    "SlidingWindowPolicy",
    "WindowStore",
    "false_block_bound",
    "is_store_outage",
    "make_policy",
    "make_store",
    "policy_identity",
    "validate",
]

POLICY_NAME = "violation-policy"


def policy_identity(*parts: str) -> str:
    """One policy user id from its parts, e.g. `("app", "u-42") -> "app/u-42"`.

    Parts are joined with `/` after escaping `%` and `/` inside each part, so the identity names
    its parts unambiguously: key user `app` with end user `victim` is `app/victim`, while a key
    whose own user id is `app/victim` is `app%2Fvictim`. Ids without `/` or `%` are unchanged.
    """
    return "/".join(part.replace("%", "%25").replace("/", "%2F") for part in parts)


def false_block_bound(p: float, window: int, k: int) -> float:
    """P(Binomial(window, p) >= k): the chance that `window` benign queries, each a false positive
    with probability `p`, trigger a block (>= `k` violations).

    Raises:
        ConfigError: `p` outside [0, 1], `window` < 1 or `k` < 0.
    """
    if not 0.0 <= p <= 1.0:
        raise ConfigError(f"p is a probability; got {p}")
    if window < 1:
        raise ConfigError(f"window must be at least 1, got {window}")
    if k < 0:
        raise ConfigError(f"k must be 0 or more, got {k}")
    if k == 0:
        return 1.0
    if k > window:
        return 0.0
    from scipy.stats import binom

    return float(binom.sf(k - 1, window, p))


@dataclass
class SlidingWindowPolicy:
    """A `ViolationPolicy`: >= `k` violations in a user's last `window` queries blocks the user for
    `block_seconds`.

    The verdict score is the number of violations in the window (higher = more suspicious); the
    threshold is `k`. A block clears the window, so after the block the user starts afresh.
    """

    store: WindowStore
    window: int = 20
    k: int = 3
    block_seconds: float = 3600.0
    name: str = POLICY_NAME
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        validate(self.window, self.k, self.block_seconds)

    def blocked_verdict(self, user_id: str) -> Verdict | None:
        """A BLOCK verdict while `user_id` is blocked, else None."""
        until = self.store.blocked_until(user_id)
        remaining = until - self.clock()
        if remaining <= 0:
            return None
        return Verdict(
            guard=self.name,
            action=Action.BLOCK,
            score=float(self.k),
            threshold=float(self.k),
            reason=f"user is blocked for {remaining:.0f} more seconds after repeated integrity violations",
            evidence={"blocked_until": until, "window": self.window, "k": self.k},
        )

    def record(self, user_id: str, *, violated: bool) -> Verdict | None:
        """Note one answered query; a BLOCK verdict when this violation makes the user blocked."""
        count = self.store.push(user_id, violated, self.window)
        if not violated or count < self.k:
            return None
        until = self.clock() + self.block_seconds
        self.store.block(user_id, until, self.block_seconds)
        self.store.clear(user_id)
        return Verdict(
            guard=self.name,
            action=Action.BLOCK,
            score=float(count),
            threshold=float(self.k),
            reason=f"{count} violations in the last {self.window} queries (limit {self.k}): "
            f"user blocked for {self.block_seconds:.0f} seconds",
            evidence={"violations": count, "window": self.window, "k": self.k, "blocked_until": until},
        )

    def false_block_bound(self, p: float) -> float:
        """This policy's chance of blocking a benign user within one window at per-query FPR `p`."""
        return false_block_bound(p, self.window, self.k)


def validate(window: int, k: int, block_seconds: float) -> None:
    if window < 1:
        raise ConfigError(f"policy window must be at least 1 query, got {window}")
    if not 1 <= k <= window:
        raise ConfigError(f"policy k must be between 1 and the window ({window}), got {k}")
    if block_seconds < 0:
        raise ConfigError(f"policy block_seconds must be 0 or more, got {block_seconds}")


def make_policy(
    window: int = 20, k: int = 3, block_seconds: float = 3600.0, store: str = "memory"
) -> SlidingWindowPolicy:
    """The per-user blocking policy from `PolicyConfig` settings (see `SlidingWindowPolicy`)."""
    validate(window, k, block_seconds)
    return SlidingWindowPolicy(make_store(store), window=window, k=k, block_seconds=block_seconds)
