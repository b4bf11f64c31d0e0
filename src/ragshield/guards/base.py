"""The guard interfaces, the `Defense` bundle the pipeline runs, and shared verdict helpers.

A defense is any mix of three kinds of parts, run by `RagPipeline` in this order:

* `QueryRewriter.rewrite(query) -> Query` before retrieval (query rephrasing);
* `QueryGuard.check(retrieval) -> Verdict` before generation (RAG-CT, rule filters);
* `ContextDecorator.decorate(retrieval) -> RetrievalResult` on the context (canaries,
  re-ranking, summarisation);
* `OutputGuard.open(retrieval) -> OutputMonitor`, fed the streamed deltas.

Verdict scores are higher = more suspicious; a guard blocks when `score >= threshold`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ragshield.types import Action, JSONValue, Query, RetrievalResult, Verdict


@runtime_checkable
class QueryGuard(Protocol):
    """Decides on a query from its retrieval, before any generation."""

    @property
    def name(self) -> str: ...

    def check(self, retrieval: RetrievalResult) -> Verdict: ...


@runtime_checkable
class ContextDecorator(Protocol):
    """Returns a new retrieval whose chunk texts are changed for this request only."""

    @property
    def name(self) -> str: ...

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult: ...


@runtime_checkable
class OutputMonitor(Protocol):
    """Watches one streamed answer.

    `holdback_chars` is how many trailing characters the pipeline must withhold from the
    client until they are checked; `observe` returns a BLOCK verdict to halt the stream.
    """

    holdback_chars: int

    def observe(self, delta: str) -> Verdict | None: ...

    def close(self) -> Verdict: ...

    def redact(self, text: str) -> str:
        """Text to release to the client; monitors that do not redact return it unchanged.

        Called on each released piece in order, and once more after `close()` for the final
        flush; a monitor earlier in the defense may already have changed the piece.
        """
        ...


WITHHELD_MARKER = "[withheld]"
# evidence key: this non-blocking verdict still counts as a violation for per-user blocking (a
# canary exposed in an obfuscated form, a configured repeated redaction); BLOCK verdicts always count
INTENT_SIGNAL = "intent_signal"
# evidence key: a query guard flagged this request, but below the bar at which a flag counts towards
# per-user blocking (`shield`'s `intent: {count_at: ...}`): decorators still watch the request more
# closely (its canaries), the policy does not count it
INTENT_FLAG = "intent_flag"


def flags_request(verdict: Verdict) -> bool:
    """True when a query guard's `verdict` flags its request: an intent signal, or a flag below the
    bar that counts towards per-user blocking (what decides `shield`'s canaries)."""
    return bool(verdict.evidence.get(INTENT_SIGNAL) or verdict.evidence.get(INTENT_FLAG))


@dataclass(frozen=True, slots=True)
class Withheld:
    """A span of the produced answer that must not reach the client.

    `start` / `end` are raw character offsets into the text the generator produced for this
    answer (counted from its first delta; `end` exclusive); `reason` is a short label (`echo`,
    `pii`, `unnatural`, `canary`, `budget`), never the withheld text.
    """

    start: int
    end: int
    reason: str


@runtime_checkable
class SpanRedactor(Protocol):
    """An `OutputMonitor` that withholds spans by position instead of rewriting text.

    Before the pipeline releases the produced text [start, end), it asks every such monitor for
    the spans found so far that overlap it, merges them across monitors and releases
    `WITHHELD_MARKER` once in place of each merged span. Positions refer to the produced text,
    so monitors compose in any order (unlike `redact`, which sees the previous monitor's output).
    """

    def withheld(self, start: int, end: int) -> Sequence[Withheld]: ...


@runtime_checkable
class OutputGuard(Protocol):
    """Opens one `OutputMonitor` per answer, given the (decorated) retrieval it answers from."""

    @property
    def name(self) -> str: ...

    def open(self, retrieval: RetrievalResult) -> OutputMonitor: ...


@dataclass(frozen=True)
class Defense:
    """The parts of one named defense, in the order the pipeline applies them.

    `fail_closed`: when a part raises, the request is blocked (True, the default) or the
    part is skipped with an ALLOW verdict that says so (False).
    """

    name: str = "none"
    rewriters: Sequence[QueryRewriter] = ()
    query_guards: Sequence[QueryGuard] = ()
    decorators: Sequence[ContextDecorator] = ()
    output_guards: Sequence[OutputGuard] = ()
    fail_closed: bool = True

    def __add__(self, other: Defense) -> Defense:
        """Stack two defenses (`rag-ct` + `canary-rag`): parts run in sequence."""
        name = other.name if self.name == "none" else f"{self.name}+{other.name}"
        return Defense(
            name=name,
            rewriters=(*self.rewriters, *other.rewriters),
            query_guards=(*self.query_guards, *other.query_guards),
            decorators=(*self.decorators, *other.decorators),
            output_guards=(*self.output_guards, *other.output_guards),
            fail_closed=self.fail_closed and other.fail_closed,
        )


NO_DEFENSE = Defense()


def threshold_verdict(
    guard: str,
    score: float,
    threshold: float,
    *,
    flagged_reason: str,
    passed_reason: str,
    evidence: Mapping[str, JSONValue] | None = None,
) -> Verdict:
    """A verdict that blocks when `score >= threshold` (higher score = more suspicious)."""
    flagged = score >= threshold
    return Verdict(
        guard=guard,
        action=Action.BLOCK if flagged else Action.ALLOW,
        score=float(score),
        threshold=float(threshold),
        reason=flagged_reason if flagged else passed_reason,
        evidence=dict(evidence or {}),
    )


def error_verdict(guard: str, error: BaseException, *, fail_closed: bool) -> Verdict:
    """The verdict for a guard that raised: BLOCK when failing closed, else ALLOW; both say why.

    Only the exception type goes into the reason: messages can quote chunk text or canaries.
    """
    action = Action.BLOCK if fail_closed else Action.ALLOW
    mode = "failing closed (blocked)" if fail_closed else "failing open (allowed)"
    return Verdict(
        guard=guard,
        action=action,
        score=float("inf") if fail_closed else 0.0,
        # failing open: score below threshold, so the risk (0) agrees with the ALLOW action
        threshold=0.0 if fail_closed else 1.0,
        reason=f"guard error ({type(error).__name__}); {mode}",
        evidence={"error_type": type(error).__name__, "fail_closed": fail_closed},
    )


@dataclass
class AllowAllMonitor:
    """An output monitor that never blocks (used for guards with nothing to watch)."""

    guard: str
    holdback_chars: int = 0
    _parts: list[str] = field(default_factory=list)

    def observe(self, delta: str) -> Verdict | None:
        return None

    def close(self) -> Verdict:
        return Verdict(self.guard, Action.ALLOW, 0.0, 1.0, "nothing to monitor")

    def redact(self, text: str) -> str:
        return text


@runtime_checkable
class QueryRewriter(Protocol):
    """Rewrites a query before retrieval (the query-rephrasing baseline)."""

    @property
    def name(self) -> str: ...

    def rewrite(self, query: Query) -> Query: ...


@runtime_checkable
class ViolationPolicy(Protocol):
    """Per-user blocking state; the pipeline is its only writer.

    `blocked_verdict` returns a BLOCK verdict while the user is blocked, else None.
    `record` notes one answered query (violated or not) and returns a BLOCK verdict when
    this query made the user blocked.
    """

    @property
    def name(self) -> str: ...

    def blocked_verdict(self, user_id: str) -> Verdict | None: ...

    def record(self, user_id: str, *, violated: bool) -> Verdict | None: ...
