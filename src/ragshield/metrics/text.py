"""Text matching primitives shared by the leakage and utility metrics.

* ROUGE-L exactly as `rouge-score` computes it with `use_stemmer=True` (lowercase, split on
  anything but `[a-z0-9]`, Porter-stem tokens longer than 3 characters), but with a
  bit-parallel LCS (Allison-Dix / Hyyro) instead of the O(n*m) Python table, which makes
  comparing hundreds of responses with their chunks take milliseconds instead of minutes.
* TGTB's token stream (`RegexpTokenizer(r"\\w+")`, case kept) for repeat@20.

All scores are similarities in [0, 1]; higher = closer (these are not suspicion scores).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")
_WORD_TOKEN = re.compile(r"\w+")
_STEMMER: Any = None


def _stemmer() -> Any:
    """nltk's Porter stemmer, the one `rouge-score` uses (imported on first use: nltk is slow to import)."""
    global _STEMMER
    if _STEMMER is None:
        from nltk.stem import porter

        _STEMMER = porter.PorterStemmer()
    return _STEMMER


@lru_cache(maxsize=262_144)
def _stem(token: str) -> str:
    # rouge-score stems only tokens longer than 3 characters
    return str(_stemmer().stem(token)) if len(token) > 3 else token


def _lower_same_length(text: str) -> str:
    """`text.lower()`, keeping character offsets (a few code points lower to two characters)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(char.lower() if len(char.lower()) == 1 else char for char in text)


def rouge_tokens(text: str, *, use_stemmer: bool = True) -> list[str]:
    """ROUGE tokens of `text`: rouge-score's tokenizer, with its Porter stemmer unless `use_stemmer=False`."""
    tokens = _ROUGE_TOKEN.findall(_lower_same_length(text))
    return [_stem(token) for token in tokens] if use_stemmer else tokens


def rouge_tokens_with_spans(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """ROUGE tokens plus each token's (start, end) character offsets in `text`."""
    tokens: list[str] = []
    spans: list[tuple[int, int]] = []
    for match in _ROUGE_TOKEN.finditer(_lower_same_length(text)):
        tokens.append(_stem(match.group()))
        spans.append(match.span())
    return tokens, spans


def word_tokens(text: str) -> list[str]:
    """TGTB's tokens: `\\w+` runs, case kept (used for repeat@20)."""
    return _WORD_TOKEN.findall(text)


class LcsReference:
    """One token sequence prepared for many LCS computations against other sequences.

    Precomputes one bit mask per distinct token (bit i set where the reference has that
    token at position i); `lcs(other)` then costs one pass over `other`.
    """

    __slots__ = ("_full", "_masks", "length", "tokens")

    def __init__(self, tokens: Sequence[str]) -> None:
        self.tokens = list(tokens)
        self.length = len(self.tokens)
        masks: dict[str, int] = {}
        for position, token in enumerate(self.tokens):
            masks[token] = masks.get(token, 0) | (1 << position)
        self._masks = masks
        self._full = (1 << self.length) - 1

    def lcs(self, other: Sequence[str]) -> int:
        """Length of the longest common subsequence of the reference and `other`."""
        if not self.length or not other:
            return 0
        masks, full = self._masks, self._full
        row = full  # bit i = 1 while reference position i is still unmatched
        for token in other:
            matched = row & masks.get(token, 0)
            row = ((row + matched) | (row - matched)) & full
        return self.length - row.bit_count()


def lcs_length(first: Sequence[str], second: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences."""
    if len(first) < len(second):
        first, second = second, first
    return LcsReference(second).lcs(first)  # loop over the longer, mask the shorter: fewer big-int bits


@dataclass(frozen=True, slots=True)
class RougeL:
    """ROUGE-L of a prediction against a reference; each in [0, 1], higher = closer.

    `precision` = LCS / prediction tokens, `recall` = LCS / reference tokens, `f1` their
    harmonic mean (rouge-score's `fmeasure`).
    """

    precision: float
    recall: float
    f1: float


def rouge_l_from_lcs(lcs: int, reference_length: int, prediction_length: int) -> RougeL:
    """ROUGE-L from an LCS length and the two token counts (0 when either side is empty)."""
    if lcs <= 0 or reference_length <= 0 or prediction_length <= 0:
        return RougeL(0.0, 0.0, 0.0)
    precision = lcs / prediction_length
    recall = lcs / reference_length
    return RougeL(precision, recall, 2 * precision * recall / (precision + recall))


def rouge_l(reference: str, prediction: str, *, use_stemmer: bool = True) -> RougeL:
    """ROUGE-L of `prediction` against `reference`, equal to rouge-score's `rougeL` with the same
    `use_stemmer` (stemmed by default, as the leakage metrics use it; the attacks' deduplication
    follows the papers' code and does not stem)."""
    reference_tokens = rouge_tokens(reference, use_stemmer=use_stemmer)
    prediction_tokens = rouge_tokens(prediction, use_stemmer=use_stemmer)
    lcs = lcs_length(reference_tokens, prediction_tokens)
    return rouge_l_from_lcs(lcs, len(reference_tokens), len(prediction_tokens))


@dataclass(frozen=True, slots=True)
class WindowMatch:
    """The response window that best matches a reference: ROUGE-L F1 and its token range."""

    f1: float
    start: int  # first token of the window (inclusive)
    end: int  # last token of the window (exclusive)


def best_window(
    reference: LcsReference, tokens: Sequence[str], *, stride: int | None = None, min_f1: float = 0.0
) -> WindowMatch:
    """The window of `tokens`, as long as the reference, with the highest ROUGE-L F1 against it.

    A response that reproduces several chunks one after another is compared chunk by
    chunk this way (as RAG-Thief compares the chunks it extracts), instead of each match
    being diluted by the other chunks' text. Windows start every `stride` tokens
    (default: a quarter of the reference length) plus one window flush with the end, so a
    verbatim copy is found with an offset of at most stride / 2 tokens.

    Returns `WindowMatch(0.0, 0, 0)` without scanning windows when no window can exceed
    `min_f1` (a window's LCS is at most the whole response's LCS).
    """
    size = reference.length
    total = len(tokens)
    if not size or not total:
        return WindowMatch(0.0, 0, 0)
    if total <= size:
        return WindowMatch(rouge_l_from_lcs(reference.lcs(tokens), size, total).f1, 0, total)
    if reference.lcs(tokens) <= min_f1 * size:
        return WindowMatch(0.0, 0, 0)
    step = stride or max(1, size // 4)
    starts = list(range(0, total - size + 1, step))
    if starts[-1] != total - size:
        starts.append(total - size)
    best = WindowMatch(-1.0, 0, 0)
    for start in starts:
        f1 = rouge_l_from_lcs(reference.lcs(tokens[start : start + size]), size, size).f1
        if f1 > best.f1:
            best = WindowMatch(f1, start, start + size)
    return best
