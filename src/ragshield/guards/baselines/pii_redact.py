"""PII redaction output guard (`pii-redact`): PII in the streamed answer is replaced before release.

Stackable on any defense (`rag-ct+canary-rag+pii-redact`). The monitor never blocks: it
REDACTS. `RagPipeline` withholds the last `holdback_chars` characters of the stream and
passes each released piece through `redact()`; the monitor also sees every delta through
`observe()`, so it scans the whole produced text around the piece - including the withheld
tail - with `PiiScanner` (presidio pattern recognizers), and masks every PII span that
overlaps the piece. A span that straddles two pieces is masked in both (the placeholder is
emitted once, where the span starts), and a span is visible whole as long as it is shorter
than the holdback (default 96 characters: longer than any email, phone, SSN, card or IBAN).

`close()` returns one verdict: REDACT with the number of PII spans per kind found in the
whole answer (counts only, never the values), or ALLOW when there were none.

Scanning cost: presidio's phone recognizer is the expensive part; it runs only on windows
with at least 7 digits, so ordinary prose costs microseconds per piece.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ragshield.errors import ConfigError
from ragshield.guards.base import Defense
from ragshield.metrics.pii import DEFAULT_KINDS, PiiMatch, PiiScanner
from ragshield.types import Action, RetrievalResult, Verdict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ragshield.guards.factory import DefenseContext

NAME = "pii-redact"
DEFAULT_HOLDBACK = 96
DEFAULT_PLACEHOLDER = "[{kind}]"
_LOOKBEHIND = 96  # text before the piece that is rescanned: context words, and spans begun earlier


class PiiRedactionMonitor:
    """OutputMonitor for one answer; see the module docstring for the streaming rule."""

    def __init__(self, guard: PiiRedactor) -> None:
        self.guard = guard
        self.holdback_chars = guard.holdback_chars
        self._produced: list[str] = []
        self._text = ""  # produced text joined lazily
        self._released = 0  # offset in the produced text of the next piece to redact
        self._aligned = True  # False once a piece does not match the produced text (another monitor rewrote it)

    def observe(self, delta: str) -> Verdict | None:
        self._produced.append(delta)
        return None

    def _buffer(self) -> str:
        if self._produced:
            self._text += "".join(self._produced)
            self._produced.clear()
        return self._text

    def redact(self, text: str) -> str:
        if not text:
            return text
        buffer = self._buffer()
        start = self._released
        if not self._aligned or not buffer.startswith(text, start):
            # the piece is not the next slice of the produced text: scan it on its own
            self._aligned = False
            return self.guard.scanner.redact(text, placeholder=self.guard.placeholder)
        end = start + len(text)
        origin = max(0, start - _LOOKBEHIND)
        window = buffer[origin:]
        pieces: list[str] = []
        position = start
        for match in self.guard.scanner.find(window):
            span_start, span_end = match.start + origin, match.end + origin
            if span_end <= start or span_start >= end:
                continue
            cut_start, cut_end = max(span_start, start), min(span_end, end)
            pieces.append(buffer[position:cut_start])
            if span_start >= start:  # the placeholder goes where the span starts
                pieces.append(self.guard.placeholder.format(kind=match.kind.upper()))
            position = cut_end
        pieces.append(buffer[position:end])
        self._released = end
        return "".join(pieces)

    def close(self) -> Verdict:
        found: Sequence[PiiMatch] = self.guard.scanner.find(self._buffer())
        counts = Counter(match.kind for match in found)
        total = sum(counts.values())
        return Verdict(
            guard=self.guard.name,
            action=Action.REDACT if total else Action.ALLOW,
            score=float(total),
            threshold=1.0,
            reason=f"{total} PII span(s) redacted from the answer" if total else "no PII found in the answer",
            evidence={"redacted": total, "by_kind": dict(sorted(counts.items())), "aligned": self._aligned},
        )


class PiiRedactor:
    """OutputGuard: redacts PII (presidio pattern recognizers) from streamed answers.

    Args:
        scanner: the PII scanner (default: `PiiScanner(kinds)`; loads presidio on first use).
        kinds: PII kinds to redact (default `DEFAULT_KINDS`).
        holdback_chars: characters withheld until scanned; must exceed the longest PII span to catch whole.
        placeholder: replacement text; `{kind}` becomes the kind in capitals (`[EMAIL]`).

    The verdict score is the number of PII spans found (higher = more suspicious); the
    action is REDACT (never BLOCK) when it is at least 1.
    """

    def __init__(
        self,
        scanner: PiiScanner | None = None,
        *,
        kinds: Sequence[str] = DEFAULT_KINDS,
        holdback_chars: int = DEFAULT_HOLDBACK,
        placeholder: str = DEFAULT_PLACEHOLDER,
        name: str = NAME,
    ) -> None:
        if holdback_chars < 1:
            raise ConfigError(f"pii-redact holdback_chars must be >= 1, got {holdback_chars}")
        self.name = name
        self.scanner = scanner or PiiScanner(kinds)
        self.holdback_chars = holdback_chars
        self.placeholder = placeholder

    def open(self, retrieval: RetrievalResult) -> PiiRedactionMonitor:
        return PiiRedactionMonitor(self)


def build_defense(
    context: DefenseContext,
    *,
    kinds: Sequence[str] = DEFAULT_KINDS,
    holdback_chars: int = DEFAULT_HOLDBACK,
    placeholder: str = DEFAULT_PLACEHOLDER,
    min_score: float = 0.3,
    **unknown: Any,
) -> Defense:
    """PII redaction of the answer (presidio pattern recognizers, no NLP model).

    Raises:
        ConfigError: unknown parameter, unknown PII kind, invalid holdback.
    """
    if unknown:
        raise ConfigError(f"unknown pii-redact parameter(s): {', '.join(sorted(unknown))}")
    redactor = PiiRedactor(
        PiiScanner(tuple(kinds), min_score=min_score), holdback_chars=holdback_chars, placeholder=placeholder
    )
    return Defense(name=NAME, output_guards=(redactor,), fail_closed=context.fail_closed)
