"""The `Target` protocol: a RAG application as a black-box client sees it.

A target takes one query (and, for multi-turn attacks, the earlier turns of the same
conversation) and returns the text the application answered, whether it refused, and the
metadata it exposed. Targets are async so the campaign engine (`ragshield.campaign`) can keep
many requests in flight; a target that wraps synchronous code runs it in a worker thread.

A target raises `TargetError` when a request did not produce an answer. `retryable` says
whether the same request may succeed later (timeouts, HTTP 408, 429 and 5xx, dropped
connections); `retry_after` carries the server's `Retry-After` in seconds when it sent one.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ragshield.errors import RagShieldError
from ragshield.types import ChatMessage, JSONValue, Response

#: HTTP statuses worth retrying: request timeout, too many requests, and server errors
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: what an answer may hold at most (characters); a longer one is cut, so a hostile target
#: cannot fill memory or the transcript
MAX_ANSWER_CHARS = 200_000


class TargetError(RagShieldError):
    """A request to a target produced no answer.

    Args:
        message: what failed, naming the target's URL and the cause (never the query text).
        retryable: the same request may succeed later (timeout, 408, 429, 5xx, connection drop).
        retry_after: seconds the server asked the client to wait (`Retry-After`), if any.
        status: the HTTP status, when there was one.
        unreachable: nothing answered at all (connection refused, DNS failure).
        code: the server's error code (OpenAI-style `error.code`), if it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
        unreachable: bool = False,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.unreachable = unreachable
        self.code = code


@dataclass(frozen=True, slots=True)
class TargetReply:
    """What the target answered to one query.

    `finish_reason` is `stop`, `length`, `refused` (the application declined, e.g. a
    `content_filter` finish or a guard's refusal) or `blocked` (the user is blocked).
    `response` is the full `Response` when the target is ragshield's own pipeline (retrieval,
    verdicts, timings); None for remote targets, which expose only `text` and `metadata`.
    `latency_ms` is the wall time of the request that answered (the last attempt).
    """

    text: str
    finish_reason: str = "stop"
    metadata: Mapping[str, JSONValue] = field(default_factory=dict)
    response: Response | None = None
    latency_ms: float = 0.0

    @property
    def refused(self) -> bool:
        return self.finish_reason in ("refused", "blocked")


@runtime_checkable
class Target(Protocol):
    """A RAG application under test.

    `name` labels transcripts; `url` says where requests go (shown in errors). `send` answers
    one query; `history` holds the earlier turns of the conversation (user and assistant
    messages, oldest first), empty for single-turn use. `aclose` releases connections.
    """

    @property
    def name(self) -> str: ...

    @property
    def url(self) -> str: ...

    async def send(self, query: str, history: Sequence[ChatMessage] = ()) -> TargetReply: ...

    async def aclose(self) -> None: ...


def retry_after_seconds(value: str | None, *, cap: float = 300.0) -> float | None:
    """A `Retry-After` header (seconds, or an HTTP date) in seconds, at most `cap`; None when
    absent or unreadable (a server must not park the campaign for a day)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return min(cap, max(0.0, seconds))


def clip_answer(text: str) -> str:
    return text[:MAX_ANSWER_CHARS]
