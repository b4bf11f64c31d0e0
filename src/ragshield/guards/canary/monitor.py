"""`CanaryMonitor` and `CanaryGuard`: CanaryRAG's checks on one streamed answer.

Target path: every delta goes through an incremental `CanaryScanner`. What a canary in any supported
form does depends on `on_violation`:

* `redact` (default): the form's raw span is withheld from the client (the pipeline asks
  `withheld(start, end)` before it releases each piece and writes a marker in its place) and the
  answer goes on; the verdict is REDACT. A small model copies canaries for benign users too, so a
  refusal would cost them the whole answer; withholding the span costs them a few characters.
* `halt`: the stream stops at the first canary; the verdict is BLOCK.

Either way the pipeline withholds the last `holdback_chars` characters from the client until they
are checked, and `holdback_chars` covers the longest supported form, so no part of a canary form
ever reaches the client, however the form is split across deltas (a form spread wider than that is
still detected, but its beginning may already have been released).

Oracle path (optional): started when the monitor opens; its outcome is checked at every delta (an
early violation halts the target at once) and awaited in `close`. An oracle violation always blocks:
it signals suppression or obfuscation by the query, which has no span to withhold.

Verdicts name the leaked chunk ids and the forms, never a canary. The score is the number of canary
integrity violations: canaries exposed on the target path plus canaries the oracle failed to
recover below its minimum share (higher = more suspicious; acts at >= 1).
`evidence["exposed_obfuscated"]` counts the canaries found in a form other than `plain` or
`capitalised` (a model copying a canary that opens a sentence writes it that way): an encoded,
spaced, reversed or edited canary is a signal of intent, a plain copy is not. When it is at least
one, `evidence["intent_signal"]` is set, so a redacting verdict still counts for per-user blocking.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ragshield.errors import ConfigError
from ragshield.guards.base import INTENT_SIGNAL, Withheld
from ragshield.guards.canary.matcher import CanaryHit, CanaryMatcher
from ragshield.guards.canary.oracle import OracleHealth, OracleOutcome, OraclePath, OracleRun
from ragshield.types import Action, JSONValue, RetrievalResult, Verdict

THRESHOLD = 1.0  # one violated canary is enough: canaries do not occur by chance (see canaries.py)
ON_VIOLATION = ("redact", "halt")
COPY_FORMS = frozenset({"plain", "capitalised"})  # what a copying model writes; not a sign of intent
WITHHELD_REASON = "canary"


def check_on_violation(value: str) -> str:
    """`value` when it is a valid `on_violation` setting.

    Raises:
        ConfigError: anything other than `redact` or `halt`.
    """
    if value not in ON_VIOLATION:
        raise ConfigError(f"canary-rag on_violation must be one of {', '.join(ON_VIOLATION)}, got {value!r}")
    return value


@dataclass
class CanaryMonitor:
    """An `OutputMonitor` for one answer (see the module docstring).

    Args:
        markers: chunk id -> canaries inserted for this request.
        guard: the guard name used in verdicts.
        oracle: the oracle run for this request (None: no oracle).
        oracle_note: why the oracle is not running (or runs although unhealthy), stated in every
            verdict (None: nothing to say).
        oracle_status: `on`, `forced` (runs although it failed its self-check), `disabled`
            (failed its self-check or has no model) or `off` (configured).
        fail_closed: block when the oracle errs or times out (True) or allow, saying so (False).
        early_halt: check the oracle at every delta and halt the target as soon as it reports a
            violation (True); False waits for `close` (the answer streams on meanwhile).
        on_violation: `redact` (withhold each canary form's span, the answer goes on) or `halt`
            (stop the stream at the first canary form).
        scan_chars: deltas are buffered and scanned once this many characters are pending (fewer
            calls per token); the holdback grows by the same amount, so nothing unscanned is
            ever released.
    """

    markers: Mapping[str, tuple[str, ...]]
    guard: str = "canary-rag"
    oracle: OracleRun | None = None
    oracle_note: str | None = None
    oracle_status: str = "on"
    fail_closed: bool = True
    early_halt: bool = True
    on_violation: str = "redact"
    scan_chars: int = 32
    holdback_chars: int = field(init=False)
    _hits: list[CanaryHit] = field(default_factory=list, init=False)
    _pending: list[str] = field(default_factory=list, init=False)
    _pending_chars: int = field(default=0, init=False)
    _decided: Verdict | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        check_on_violation(self.on_violation)
        self._owner = {canary: chunk_id for chunk_id, canaries in self.markers.items() for canary in canaries}
        self._matcher = CanaryMatcher(self._owner)
        self._scanner = self._matcher.scanner()
        # a form ends at most `scan_chars - 1` characters before the scanned point, and spans at
        # most `max_form_chars`: withholding their sum keeps every unchecked form from the client
        self.holdback_chars = self._matcher.max_form_chars + max(1, self.scan_chars)

    def observe(self, delta: str) -> Verdict | None:
        """BLOCK when the oracle found a violation, or (halt mode) the scanned text completes a canary form.

        In redact mode a canary form is recorded for `withheld` and the stream goes on (None).
        """
        if self._decided is not None:
            return self._decided
        self._pending.append(delta)
        self._pending_chars += len(delta)
        hits: list[CanaryHit] = []
        if self._pending_chars >= self.scan_chars:
            hits = self._scanner.feed("".join(self._pending))
            self._pending.clear()
            self._pending_chars = 0
        if hits:
            self._hits.extend(hits)
            if self.on_violation == "halt":
                return self._decide(self._verdict(self.oracle.peek() if self.oracle else None, final=False))
        if self.oracle is not None and self.early_halt:
            outcome = self.oracle.peek()
            if outcome is not None and outcome.violated:
                return self._decide(self._verdict(outcome, final=False))
        return None

    def close(self) -> Verdict:
        """The final verdict: target hits in the held-back tail, then the oracle's outcome.

        After a halt this returns the halting verdict again (the guard's one decision).
        """
        if self._decided is not None:
            if self.oracle is not None:
                self.oracle.cancel()
            return self._decided
        self._hits.extend(self._scanner.feed("".join(self._pending)) + self._scanner.flush())
        self._pending.clear()
        if self._hits and self.on_violation == "halt":
            if self.oracle is not None:
                self.oracle.cancel()
            return self._decide(self._verdict(self.oracle.peek() if self.oracle else None, final=True))
        outcome = self.oracle.result() if self.oracle is not None else None
        if self.oracle is not None and outcome is None:
            self.oracle.cancel()  # timed out: stop paying for a late answer
        return self._verdict(outcome, final=True)

    def withheld(self, start: int, end: int) -> list[Withheld]:
        """The canary forms found so far that overlap the produced text [start, end) (raw offsets)."""
        return [
            Withheld(hit.start, hit.end, WITHHELD_REASON) for hit in self._hits if hit.start < end and hit.end > start
        ]

    def redact(self, text: str) -> str:
        return text  # spans are withheld by position (`withheld`); released text is never rewritten

    # -- verdicts ------------------------------------------------------------------------

    def _decide(self, verdict: Verdict) -> Verdict:
        if verdict.blocked:
            self._decided = verdict
        return verdict

    def _verdict(self, outcome: OracleOutcome | None, *, final: bool) -> Verdict:
        chunk_ids = sorted({self._owner[hit.canary] for hit in self._hits})
        forms = sorted({hit.form for hit in self._hits})
        leaked = len({hit.canary for hit in self._hits})
        obfuscated = len({hit.canary for hit in self._hits if hit.form not in COPY_FORMS})
        evidence: dict[str, JSONValue] = {
            "leaked_chunk_ids": chunk_ids,
            "forms": forms,
            "leaked_canaries": leaked,
            "exposed_obfuscated": obfuscated,
            "on_violation": self.on_violation,
        }
        if obfuscated:
            evidence[INTENT_SIGNAL] = True  # counts for per-user blocking even when only redacted
        evidence["oracle"] = self._oracle_evidence(outcome, final=final)
        reasons = []
        if leaked:
            where = ", ".join(chunk_ids)
            done = "withheld, the answer went on" if self.on_violation == "redact" else "the stream halted"
            reasons.append(f"{leaked} canary(ies) of chunk(s) {where} in the output ({', '.join(forms)}): {done}")
        shortfall = 0
        error_block = False
        if outcome is not None and outcome.error is not None:
            reasons.append(f"oracle failed ({outcome.error}); {'failing closed' if self.fail_closed else 'ignored'}")
            error_block = self.fail_closed
        elif outcome is not None and outcome.violated:
            shortfall = outcome.shortfall
            reasons.append(outcome.describe())
        elif self.oracle is not None and outcome is None and final:
            reasons.append(f"oracle gave no answer in time; {'failing closed' if self.fail_closed else 'ignored'}")
            error_block = self.fail_closed
        score = float(leaked + shortfall) if not error_block else float("inf")
        # a canary form alone is withheld in redact mode; the oracle's verdicts always block
        blocked = score >= THRESHOLD and (self.on_violation == "halt" or shortfall > 0 or error_block)
        action = Action.BLOCK if blocked else (Action.REDACT if score >= THRESHOLD else Action.ALLOW)
        if not reasons:
            reasons.append("no canary in the output" + (f"; {outcome.describe()}" if outcome else ""))
        if self.oracle_note:
            reasons.append(self.oracle_note)
        return Verdict(
            guard=self.guard,
            action=action,
            score=score,
            threshold=THRESHOLD,
            reason="; ".join(reasons),
            evidence=evidence,
        )

    def _oracle_evidence(self, outcome: OracleOutcome | None, *, final: bool) -> dict[str, JSONValue]:
        if self.oracle is None:
            return {"status": self.oracle_status, "result": "not run"}
        if outcome is None:
            return {"status": self.oracle_status, "result": "timeout" if final else "running"}
        return {"status": self.oracle_status, **outcome.evidence()}


@dataclass
class CanaryGuard:
    """An `OutputGuard`: opens a `CanaryMonitor` (and starts the oracle) for each answer.

    Args:
        oracle: the oracle path (None: target path only).
        health: the oracle's self-check (None when it did not run).
        oracle_note, oracle_status, early_halt, on_violation: see `CanaryMonitor`.

    Raises:
        ConfigError: `on_violation` is not `redact` or `halt`.
    """

    name: str = "canary-rag"
    oracle: OraclePath | None = None
    health: OracleHealth | None = None
    oracle_note: str | None = None
    oracle_status: str = "on"
    fail_closed: bool = True
    early_halt: bool = True
    on_violation: str = "redact"

    def __post_init__(self) -> None:
        check_on_violation(self.on_violation)

    def open(self, retrieval: RetrievalResult) -> CanaryMonitor:
        """A monitor for an answer from the decorated `retrieval`.

        Raises:
            ConfigError: the retrieval has chunks but no canaries (the injector did not run).
        """
        if retrieval.hits and not any(retrieval.markers.get(hit.chunk.id) for hit in retrieval.hits):
            raise ConfigError("canary-rag's output guard got a context without canaries; add its CanaryInjector")
        run = self.oracle.start(retrieval) if self.oracle is not None else None
        return CanaryMonitor(
            retrieval.markers,
            guard=self.name,
            oracle=run,
            oracle_note=self.oracle_note,
            oracle_status=self.oracle_status,
            fail_closed=self.fail_closed,
            early_halt=self.early_halt,
            on_violation=self.on_violation,
        )
