"""`per_chunk: auto`: where to put canaries so that every copied span longer than an allowance holds one.

The guarantee, in characters of the decorated chunk: every window of `cover_chars` + canary length
characters contains a whole canary. With canary starts s_0 < s_1 < ... in the decorated text, a
window [x, x + cover + L) holds canary i exactly when s_i - cover <= x <= s_i, so it suffices that

* the first canary starts within `cover_chars` of the chunk's start,
* consecutive canaries start at most `cover_chars` apart,
* at most `cover_chars` characters follow the last canary.

Each canary is inserted with one space (L + 1 characters). `auto_positions` walks the chunk and
puts each canary at the last word boundary the spacing allows, preferring a sentence boundary in the
second half of the allowed range (so canaries read as part of the text's structure); the intra-chunk
flavour picks a random boundary in that half instead. Only a token longer than the allowance
(a URL, a base64 blob) gets a canary inside it.
"""

from __future__ import annotations

import bisect
import re
import secrets
from dataclasses import dataclass

from ragshield.errors import ConfigError

_TOKEN = re.compile(r"\S+")
# anchored at the start of the punctuation run, so a token of many marks is scanned once, not once per mark
_TRAILING = re.compile(r"(?<![.!?,;:])[.!?,;:]+$")
_SENTENCE_END = re.compile(r"[.!?]")


@dataclass(frozen=True, slots=True)
class Boundaries:
    """Insertion points of one text (sorted original-text offsets) and the preferred subset."""

    points: list[int]
    preferred: set[int]


def word_starts(text: str, sentence_starts: set[int]) -> Boundaries:
    """Before each whitespace-delimited token; sentence starts preferred (insert ``canary + ' '``)."""
    points = [match.start() for match in _TOKEN.finditer(text)]
    return Boundaries(points, {point for point in points if point in sentence_starts})


def word_ends(text: str) -> Boundaries:
    """After each token, before its trailing punctuation; sentence ends preferred (insert ``' ' + canary``)."""
    points: list[int] = []
    preferred: set[int] = set()
    for match in _TOKEN.finditer(text):
        trailing = _TRAILING.search(match.group())
        at = match.end() - (len(trailing.group()) if trailing else 0)
        at = at if at > match.start() else match.end()
        points.append(at)
        if (trailing and _SENTENCE_END.search(trailing.group())) or text.startswith("\n", match.end()):
            preferred.add(at)
    return Boundaries(points, preferred)


def check_cover(cover_chars: int, length: int) -> None:
    """Raise `ConfigError` unless canaries of `length` symbols can keep `cover_chars` spacing."""
    if cover_chars < 2 * (length + 1):
        raise ConfigError(
            f"cover_chars {cover_chars} is too small for canaries of {length} symbols: use at least "
            f"{2 * (length + 1)} (below that, canaries would make up half of every chunk)"
        )


def auto_positions(
    text: str,
    boundaries: Boundaries,
    *,
    cover_chars: int,
    length: int,
    randomise: bool = False,
    first: int | None = None,
) -> list[int]:
    """Original-text offsets where canaries go so that the decorated text meets the guarantee.

    Args:
        text: the chunk text.
        boundaries: where canaries may go (`word_starts` or `word_ends`).
        cover_chars: the allowance; consecutive canaries start at most this many decorated
            characters apart.
        length: canary length in symbols (each insertion adds `length` + 1 characters).
        randomise: pick a random boundary in the second half of each allowed range.
        first: force the first canary here (sentence-begin opens the chunk with one).

    Raises:
        ConfigError: `cover_chars` too small for `length` (see `check_cover`).
    """
    check_cover(cover_chars, length)
    # in original-text offsets (one insertion's own offset, 0 or 1 for the leading space, absorbed):
    # first canary at most cover - 1 in, consecutive ones at most cover - (length + 1) apart, and
    # at most cover - 1 characters after the last insertion point
    step = cover_chars - (length + 1)
    last_needed = len(text) + 1 - cover_chars
    positions: list[int] = []
    low, high = 0, min(cover_chars - 1, len(text))
    while True:
        at = first if first is not None and not positions else _pick(boundaries, low, high, randomise)
        positions.append(at)
        if at >= last_needed:
            return positions
        low, high = at + 1, min(at + step, len(text))


def _pick(boundaries: Boundaries, low: int, high: int, randomise: bool) -> int:
    """A boundary in [low, high]: preferred late, else the latest; `high` itself when there is none."""
    points = boundaries.points
    begin, end = bisect.bisect_left(points, low), bisect.bisect_right(points, high)
    if begin == end:
        return high  # one token spans the whole range: the canary goes inside it
    middle = low + (high - low) // 2
    late = points[bisect.bisect_left(points, middle, begin, end) : end]
    if randomise and late:
        return late[secrets.randbelow(len(late))]
    preferred = [point for point in late if point in boundaries.preferred]
    return preferred[-1] if preferred else points[end - 1]
