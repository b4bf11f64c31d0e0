"""`context-echo`: nothing retrieved leaves verbatim or encoded beyond an allowance, whoever asks.

`ContextEchoGuard.open(retrieval)` indexes the chunks exactly as the model saw them (decorated, with
canaries) in every alphabet and direction the views need (`sources.py`), plus the PII values of the
retrieved records when a PII store is configured. `EchoMonitor` feeds every delta to all views of
the answer (`views.py`, `radix.py`); a `Track` per view follows the runs that copy a source, and the
monitor withholds:

* `echo`: a run longer than the allowance (`allowance_words` chunk words, or `allowance_chars`
  folded symbols), exact or a near copy with an edit every few symbols (`near.py`): the whole run,
  as far back as it is still unreleased;
* `budget`: any run of at least `gram` symbols of a chunk this user has already received more than
  `budget_share` of, in earlier answers and this one (see `budget.py`);
* `pii`: a whole PII value of a retrieved record that the user's message does not contain;
* `unnatural`: a long run of output that is not natural language, when records were retrieved.

Withheld spans are positions in the produced text (`SpanRedactor`); the pipeline replaces them with
one marker each and the answer goes on (`action: redact`, the default), or the first span halts the
stream (`action: halt`). Score: withheld characters (higher = more leaked text contained; the
verdict is REDACT from 1). Evidence: chunk ids, counts per reason, never text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragshield.guards.base import INTENT_SIGNAL, Withheld
from ragshield.guards.release.budget import AnswerBudget, BudgetStore
from ragshield.guards.release.public import FrequentGrams
from ragshield.guards.release.sources import RequestSources, build_sources
from ragshield.guards.release.tracks import Source
from ragshield.types import Action, JSONValue, RetrievalResult, Verdict

if TYPE_CHECKING:
    from ragshield.guards.release.unnatural import UnnaturalTextDetector

NAME = "context-echo"
ACTIONS = ("redact", "halt")


@dataclass(frozen=True)
class EchoSettings:
    """The guard's parameters (see `ContextEchoGuard`)."""

    allowance_words: int | None = 8
    allowance_chars: int | None = None
    gram: int = 12
    pii_gram: int = 5
    action: str = "redact"
    holdback_chars: int = 160
    scan_chars: int = 64
    budget_share: float = 0.3
    unnatural: bool = True
    count_redactions: bool = False  # a redacted answer counts towards per-user blocking


@dataclass
class EchoMonitor:
    """An `OutputMonitor` and `SpanRedactor` for one answer (see the module docstring)."""

    guard: str
    settings: EchoSettings
    request: RequestSources
    budget: BudgetStore | None = None
    unnatural: UnnaturalTextDetector | None = None
    answer_budget: AnswerBudget | None = None
    holdback_chars: int = 0
    _spans: list[Withheld] = field(default_factory=list)
    _offset: int = 0  # produced characters scanned so far
    _pending: list[str] = field(default_factory=list)
    _pending_chars: int = 0
    _reasons: Counter[str] = field(default_factory=Counter)
    _echoed: set[str] = field(default_factory=set)
    _closed: Verdict | None = None

    def __post_init__(self) -> None:
        self.views = self.request.views(self)
        # deltas are scanned in batches of `scan_chars` (fewer calls per token); nothing unscanned
        # is released, because the holdback grows by the same amount
        extra = self.unnatural.holdback_chars if self.unnatural is not None else 0
        self.holdback_chars = self.settings.holdback_chars + self.settings.scan_chars + extra
        self._scan_chars = self.settings.scan_chars  # read on every delta

    # -- OutputMonitor -------------------------------------------------------------------

    def observe(self, delta: str) -> Verdict | None:
        if not delta:
            return None
        self._pending.append(delta)
        self._pending_chars += len(delta)
        if self._pending_chars < self._scan_chars:
            return None
        before = len(self._spans)
        self._scan()
        if self.settings.action == "halt" and len(self._spans) > before:
            return self._verdict(halted=True)
        return None

    def close(self) -> Verdict:
        if self._closed is None:
            self._scan()
            self.views.flush()
            if self.unnatural is not None:
                for span in self.unnatural.flush():
                    self._withhold(span.start, span.end, "unnatural")
            self._record_budget()
            self._closed = self._verdict(halted=False)
        return self._closed

    def _scan(self) -> None:
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        self.views.feed(text, self._offset)
        if self.unnatural is not None:
            for span in self.unnatural.feed(text):
                self._withhold(span.start, span.end, "unnatural")
        self._offset += len(text)

    def withheld(self, start: int, end: int) -> Sequence[Withheld]:
        return [span for span in self._spans if span.start < end and span.end > start]

    def redact(self, text: str) -> str:
        return text  # positions only (`withheld`)

    # -- RunSink -------------------------------------------------------------------------

    def run(self, source: Source, first: int, last: int, start_raw: int, end_raw: int) -> None:
        low, high = min(first, last), max(first, last)
        if source.kind == "pii":
            if high - low + 1 >= len(source.symbols):
                self._withhold(start_raw, end_raw, "pii")
            return
        chunk_ids = self.request.over_budget
        if source.key in chunk_ids and source.private_in(low, high, words=False):
            self._echoed.add(source.key)
            self._withhold(start_raw, end_raw, "budget")
            return
        if self._exceeds(source, low, high):
            self._echoed.add(source.key)
            self._withhold(start_raw, end_raw, "echo")
        elif self.answer_budget is not None:
            # a new run reports its first gram whole, a growing run one symbol at a time
            positions = range(low, high + 1) if high - low + 1 <= self.request.text.m else (last,)
            if self.answer_budget.add(source.key, [source.canon[p] for p in positions if source.is_private(p)]):
                # this answer (with earlier ones) passed the budget: the rest of the record is withheld
                self.request.over_budget.add(source.key)
                self._echoed.add(source.key)
                self._withhold(start_raw, end_raw, "budget")

    def _exceeds(self, source: Source, low: int, high: int) -> bool:
        """Does the run over source positions [low, high] copy more private text than allowed?"""
        settings = self.settings
        if (
            settings.allowance_chars is not None
            and source.private_in(low, high, words=False) > settings.allowance_chars
        ):
            return True
        if settings.allowance_words is not None:
            return source.private_in(low, high, words=True) > settings.allowance_words
        return False

    def _withhold(self, start: int, end: int, reason: str) -> None:
        if end <= start:
            return
        last = self._spans[-1] if self._spans else None
        if last is not None and last.reason == reason and start <= last.end and end >= last.start:
            merged = Withheld(min(start, last.start), max(end, last.end), reason)
            self._reasons[reason] += merged.end - merged.start - (last.end - last.start)
            self._spans[-1] = merged
            return
        self._spans.append(Withheld(start, end, reason))
        self._reasons[reason] += end - start

    # -- budget and verdict --------------------------------------------------------------

    def _record_budget(self) -> None:
        if self.budget is None or self.answer_budget is None:
            return
        for chunk_id, bits in self.answer_budget.released_now().items():
            self.budget.add(self.request.user_id, chunk_id, bits)

    def _verdict(self, *, halted: bool) -> Verdict:
        withheld = sum(self._reasons.values())
        evidence: dict[str, JSONValue] = {
            "withheld_chars": dict(self._reasons),
            "echoed_chunk_ids": sorted(self._echoed),
            "over_budget_chunk_ids": sorted(self.request.over_budget),
            "pii_values_indexed": self.request.pii_count,
            "pii_source": self.request.pii_source,
        }
        if halted:
            action, reason = Action.BLOCK, "retrieved text in the output beyond the allowance; stream halted"
        elif withheld:
            kinds = ", ".join(f"{count} chars {kind}" for kind, count in sorted(self._reasons.items()))
            action, reason = Action.REDACT, f"withheld {kinds}"
            if self.settings.count_redactions:
                evidence[INTENT_SIGNAL] = True
                reason += "; counts towards per-user blocking (count_redactions)"
        else:
            action, reason = Action.ALLOW, "no retrieved text beyond the allowance in the output"
        return Verdict(self.guard, action, float(withheld), 1.0, reason, evidence)


@dataclass
class ContextEchoGuard:
    """An `OutputGuard` that contains what an answer releases of its retrieved context.

    Args:
        settings: allowance, gram lengths, action and holdback.
        frequent: knowledge-base grams that are not private (None: none).
        pii: a `ChunkPiiStore` giving each original chunk's PII values (None: no PII containment).
        originals: chunk id -> original chunk text lookup for the PII store (decorated chunks differ).
        budget: the per-user release budget store (None: no budget).
    """

    name: str = NAME
    settings: EchoSettings = field(default_factory=EchoSettings)
    frequent: FrequentGrams | None = None
    pii: Any = None
    originals: Any = None
    budget: BudgetStore | None = None

    def open(self, retrieval: RetrievalResult) -> EchoMonitor:
        request = build_sources(retrieval, self.settings, self.frequent, self.pii, self.originals)
        answer_budget = None
        if self.budget is not None and request.canonical:
            earlier = self.budget.released(retrieval.query.user_id, request.canonical)
            answer_budget = AnswerBudget(self.settings.budget_share, self.settings.gram, request.canonical, earlier)
            request.over_budget.update(chunk_id for chunk_id in request.canonical if answer_budget.over(chunk_id))
        detector = None
        if self.settings.unnatural and retrieval.hits:
            from ragshield.guards.release.unnatural import UnnaturalTextDetector

            detector = UnnaturalTextDetector()
        return EchoMonitor(
            self.name, self.settings, request, budget=self.budget, unnatural=detector, answer_budget=answer_budget
        )
