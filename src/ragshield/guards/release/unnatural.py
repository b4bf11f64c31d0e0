"""`UnnaturalTextDetector`: finds long runs of streamed output that are not natural language.

An answer that spells a record out in an encoding (base-N blobs, hex, binary or decimal codes, octal
escapes, Morse, one letter per line or per HTML tag, letters interleaved with filler, NATO words,
regional-indicator or tag characters) leaks it past every text matcher that lacks that encoding.
Instead of a list of encodings, the detector scores how *unlike natural text* each character is
(the cost model: `unnatural_costs.py`) and follows the costs with a CUSUM: ``S = max(0, S + cost)``.
A run whose cumulative cost reaches ``threshold`` over at least ``min_run_chars`` characters is
reported as an `UnnaturalSpan` from the start of the excursion (aligned to the start of its word)
to the character where ``S`` peaked (extended to the end of that word). The excursion ends when
``S`` falls ``drop`` below its peak or back to 0. Every character is processed once with O(1)
state, so the cost per delta does not grow with the answer.

Speed: a word of ASCII letters that starts after a space or punctuation, outside a confirmed run,
and cannot lift ``S`` to the threshold by itself (ordinary prose; a vowel-poor word only while
the running vowel share keeps the sparse-vowel rule off) is scored in one step from its cached
costs (`word_costs`) instead of letter by letter; the result is the same to the bit
(`tests/unit/test_unnatural.py` compares both paths).

Streaming contract: a character's status is final once ``holdback_chars`` characters follow it;
a span that is confirmed later is clipped to the characters still held back. The union of the
reported spans depends only on the text, never on how it was split into deltas.

What it does not catch: encodings that look like words (rot13, leetspeak, reversed or paraphrased
text, digits written as words); the echo guard compares those against the retrieved chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragshield.errors import ConfigError
from ragshield.guards.release.unnatural_scan import INITIAL_STATE, scan

__all__ = ["UnnaturalSpan", "UnnaturalTextDetector"]


@dataclass(frozen=True, slots=True)
class UnnaturalSpan:
    """A run of the streamed answer that is not natural text.

    Attributes:
        start: raw character offset in the answer (inclusive), counted from the first delta.
        end: raw character offset (exclusive).
        score: the run's cumulative unnaturalness cost from its start to its peak, in the cost
            units of `unnatural_costs` (higher = more suspicious); a reported span always has
            ``score >= threshold`` of the detector that found it.
    """

    start: int
    end: int
    score: float


class UnnaturalTextDetector:
    """Streaming detector of unnatural runs; one instance per answer (see the module docstring).

    Args:
        min_run_chars: the shortest run reported, in characters (IDs, hashes and short codes
            below it pass).
        threshold: the cumulative cost a run must reach to be reported (score units; higher =
            more suspicious). Natural prose drifts down, an encoded blob gains roughly 0.15-2
            per character.
        holdback_chars: characters after which a character's status is final (the release
            guard withholds this many); at least ``min_run_chars + batch_chars``.
        batch_chars: deltas are buffered and scanned once this many characters are pending (one
            scan per batch keeps the cost per delta low); counted in ``holdback_chars``.
        drop: an excursion ends once its cost falls this far below its peak (default: half the
            threshold), so a later blob starts a new span instead of bridging the prose between.

    Raises:
        ConfigError: a parameter is out of range.
    """

    _word_steps = True  # score plain words in one step (a subclass may turn it off to compare)

    __slots__ = (
        "_pending",
        "_pending_chars",
        "_state",
        "batch_chars",
        "drop",
        "holdback_chars",
        "min_run_chars",
        "threshold",
    )

    def __init__(
        self,
        *,
        min_run_chars: int = 48,
        threshold: float = 10.0,
        holdback_chars: int = 128,
        batch_chars: int = 16,
        drop: float | None = None,
    ) -> None:
        if min_run_chars < 1:
            raise ConfigError(f"min_run_chars must be >= 1, got {min_run_chars}")
        if not threshold > 0:
            raise ConfigError(f"threshold must be > 0, got {threshold}")
        if batch_chars < 1:
            raise ConfigError(f"batch_chars must be >= 1, got {batch_chars}")
        if holdback_chars < min_run_chars + batch_chars:
            raise ConfigError(
                f"holdback_chars ({holdback_chars}) must be >= min_run_chars + batch_chars "
                f"({min_run_chars} + {batch_chars})"
            )
        if drop is not None and not drop > 0:
            raise ConfigError(f"drop must be > 0, got {drop}")
        self.min_run_chars = min_run_chars
        self.threshold = float(threshold)
        self.holdback_chars = holdback_chars
        self.batch_chars = batch_chars
        self.drop = float(threshold / 2 if drop is None else drop)
        self._state = INITIAL_STATE
        self._pending: list[str] = []
        self._pending_chars = 0

    def feed(self, delta: str) -> list[UnnaturalSpan]:
        """Process one delta; return the spans found or extended by it (may overlap earlier ones).

        Raises:
            TypeError: ``delta`` is not a string.
        """
        if not isinstance(delta, str):
            raise TypeError(f"delta must be str, got {type(delta).__name__}")
        self._pending.append(delta)
        self._pending_chars += len(delta)
        if self._pending_chars < self.batch_chars:
            return []
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        return self._scan(text)

    def flush(self) -> list[UnnaturalSpan]:
        """End of the answer: scan what is pending; a run not yet confirmed stays released."""
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        return self._scan(text) if text else []

    def _scan(self, text: str) -> list[UnnaturalSpan]:
        self._state, spans = scan(
            self._state,
            text,
            threshold=self.threshold,
            drop=self.drop,
            min_run=self.min_run_chars,
            window=self.holdback_chars - self.batch_chars,  # decided this far behind the scan
            word_steps=self._word_steps,
        )
        return [UnnaturalSpan(start, end, score) for start, end, score in spans]
