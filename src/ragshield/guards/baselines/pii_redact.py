"""PII redaction output guard (`pii-redact`): PII in the streamed answer is replaced before release.

Stackable on any defense (`rag-ct+canary-rag+pii-redact`). The monitor never blocks: it
REDACTS. `RagPipeline` withholds the last `holdback_chars` characters of the stream and
passes each released piece through `redact()`; the monitor also sees every delta through
`observe()`, so it scans the whole produced text around the piece - including the withheld
tail - with `PiiAnalyzer` (presidio pattern recognizers, a US postal-address pattern and,
with the `ner` extra, spaCy NER for person names, places and written dates of birth), and
masks every PII span that overlaps the piece. A span that straddles two pieces is masked in both (the placeholder is
emitted once, where the span starts), and a span is always seen whole when it is at most
half the holdback long (default holdback 128 characters: spans up to 64 characters, more
than any phone, SSN, card or IBAN and nearly every email address).

`close()` returns one verdict: REDACT with the number of PII spans per kind found in the
whole answer (counts only, never the values), or ALLOW when there were none.

Scanning cost: presidio's phone recognizer (python-phonenumbers over 8 regions, ~6 ms per
300 characters here) and spaCy NER (a few ms per 300 characters) dominate; scans are cached
across pieces (see `PiiRedactionMonitor`). NER reads a scan window of a few hundred
characters, so a name is judged with that much context, not the whole answer's.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ragshield.errors import ConfigError
from ragshield.guards.base import Defense
from ragshield.pii.analyzer import PATTERN_KINDS, PiiAnalyzer
from ragshield.pii.patterns import PiiMatch
from ragshield.types import Action, RetrievalResult, Verdict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ragshield.guards.factory import DefenseContext

NAME = "pii-redact"
DEFAULT_HOLDBACK = 128
DEFAULT_PLACEHOLDER = "[{kind}]"
_LOOKBEHIND = 96  # text before the piece that is rescanned: context words, and spans begun earlier


class PiiRedactionMonitor:
    """OutputMonitor for one answer; see the module docstring for the streaming rule.

    Scans are cached: one scan of the produced text from `_LOOKBEHIND` characters before
    the piece to the end of the produced text serves every later piece that ends at least
    `holdback_chars // 2` characters before the end of that scan (so spans up to that
    length are always seen whole). The pipeline releases a piece per delta; this rescans
    about once every holdback / 2 released characters instead of once per delta.
    """

    def __init__(self, guard: PiiRedactor) -> None:
        self.guard = guard
        self.holdback_chars = guard.holdback_chars
        self._margin = max(1, guard.holdback_chars // 2)
        self._produced: list[str] = []
        self._text = ""  # produced text joined lazily
        self._released = 0  # offset in the produced text of the next piece to redact
        self._aligned = True  # False once a piece does not match the produced text (another monitor rewrote it)
        self._scan: tuple[int, int, list[PiiMatch]] | None = None  # (origin, end, matches at absolute offsets)

    def observe(self, delta: str) -> Verdict | None:
        self._produced.append(delta)
        return None

    def _buffer(self) -> str:
        if self._produced:
            self._text += "".join(self._produced)
            self._produced.clear()
        return self._text

    def _matches(self, buffer: str, start: int, end: int) -> list[PiiMatch]:
        """PII spans of the produced text, valid around [start, end) (cached scan or a fresh one)."""
        origin = max(0, start - _LOOKBEHIND)
        cached = self._scan
        if cached is None or cached[0] > origin or cached[1] < end + self._margin:
            found = self.guard.analyzer.find(buffer[origin:])
            shifted = [PiiMatch(m.kind, m.value, m.start + origin, m.end + origin) for m in found]
            cached = self._scan = (origin, len(buffer), shifted)
        return cached[2]

    def redact(self, text: str) -> str:
        if not text:
            return text
        buffer = self._buffer()
        start = self._released
        if not self._aligned or not buffer.startswith(text, start):
            # the piece is not the next slice of the produced text: scan it on its own
            self._aligned = False
            return self.guard.analyzer.redact(text, placeholder=self.guard.placeholder)
        end = start + len(text)
        pieces: list[str] = []
        position = start
        for match in self._matches(buffer, start, end):
            if match.end <= start or match.start >= end:
                continue
            pieces.append(buffer[position : max(match.start, start)])
            if match.start >= start:  # the placeholder goes where the span starts
                pieces.append(self.guard.placeholder.format(kind=match.kind.upper()))
            position = min(match.end, end)
        pieces.append(buffer[position:end])
        self._released = end
        return "".join(pieces)

    def close(self) -> Verdict:
        found: Sequence[PiiMatch] = self.guard.analyzer.find(self._buffer())
        counts = Counter(match.kind for match in found)
        total = sum(counts.values())
        return Verdict(
            guard=self.guard.name,
            action=Action.REDACT if total else Action.ALLOW,
            score=float(total),
            threshold=1.0,
            reason=f"{total} PII span(s) redacted from the answer" if total else "no PII found in the answer",
            evidence={
                "redacted": total,
                "by_kind": dict(sorted(counts.items())),
                "aligned": self._aligned,
                "ner": self.guard.analyzer.ner_enabled,
            },
        )


class PiiRedactor:
    """OutputGuard: redacts PII (`PiiAnalyzer`: patterns, addresses, spaCy NER) from streamed answers.

    Args:
        analyzer: the PII analyzer (default: `PiiAnalyzer(kinds=kinds)`, with NER when the
            `ner` extra is installed; loads presidio and spaCy on first use).
        kinds: pattern kinds to redact when no analyzer is given (default `PATTERN_KINDS`).
        holdback_chars: characters withheld until scanned; spans up to half of it are always caught whole.
        placeholder: replacement text; `{kind}` becomes the kind in capitals (`[EMAIL]`).

    The verdict score is the number of PII spans found (higher = more suspicious); the
    action is REDACT (never BLOCK) when it is at least 1.
    """

    def __init__(
        self,
        analyzer: PiiAnalyzer | None = None,
        *,
        kinds: Sequence[str] = PATTERN_KINDS,
        holdback_chars: int = DEFAULT_HOLDBACK,
        placeholder: str = DEFAULT_PLACEHOLDER,
        name: str = NAME,
    ) -> None:
        if holdback_chars < 1:
            raise ConfigError(f"pii-redact holdback_chars must be >= 1, got {holdback_chars}")
        self.name = name
        self.analyzer = analyzer or PiiAnalyzer(kinds=kinds)
        self.holdback_chars = holdback_chars
        self.placeholder = placeholder

    @property
    def scanner(self) -> PiiAnalyzer:
        """The analyzer, under the name the pattern-only guard used."""
        return self.analyzer

    def open(self, retrieval: RetrievalResult) -> PiiRedactionMonitor:
        return PiiRedactionMonitor(self)


def build_defense(
    context: DefenseContext,
    *,
    kinds: Sequence[str] = PATTERN_KINDS,
    ner: bool | None = None,
    addresses: bool = True,
    holdback_chars: int = DEFAULT_HOLDBACK,
    placeholder: str = DEFAULT_PLACEHOLDER,
    min_score: float = 0.3,
) -> Defense:
    """PII redaction of the answer: presidio patterns (`kinds`), US addresses (`addresses`) and
    spaCy NER for names, places and dates of birth (`ner`: True requires the `ner` extra,
    False turns it off, None uses it when installed).

    Raises:
        ConfigError: unknown PII kind, invalid holdback.
        BackendUnavailable: `ner=True` without the `ner` extra.
    """
    analyzer = PiiAnalyzer(kinds=tuple(kinds), ner=ner, addresses=addresses, min_score=min_score)
    redactor = PiiRedactor(analyzer, holdback_chars=holdback_chars, placeholder=placeholder)
    return Defense(name=NAME, output_guards=(redactor,), fail_closed=context.fail_closed)
