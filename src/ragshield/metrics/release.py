"""What an answer released of its retrieved context, measured by brute force (a reference for the guard).

Both measures fold text the way any reader would read it (case, separators, look-alikes,
leetspeak; `guards.release.fold`) and are independent of the streaming matcher they check:

* `longest_copied_words(released, source)`: the most consecutive words of `source` whose folded
  text occurs in the folded `released` text (windows of at least `min_symbols` folded symbols).
* `copied_symbols(released, sources)`: how many folded symbols of `released` lie in a run of at
  least `min_symbols` symbols that also occurs in one of `sources` ("released characters of
  retrieved text").
"""

from __future__ import annotations

from collections.abc import Iterable

from ragshield.guards.release.fold import text_symbols

MIN_SYMBOLS = 12


def longest_copied_words(released: str, source: str, *, min_symbols: int = MIN_SYMBOLS) -> int:
    """The longest run of consecutive `source` words found (folded) in `released`, in words."""
    folded = text_symbols(released)
    words = [text_symbols(word) for word in source.split()]
    best = 0
    for start in range(len(words)):
        for end in range(start + best + 1, len(words) + 1):
            window = "".join(words[start:end])
            if len(window) < min_symbols:
                continue
            if window not in folded:
                break
            best = end - start
    return best


def copied_symbols(released: str, sources: Iterable[str], *, min_symbols: int = MIN_SYMBOLS) -> int:
    """Folded symbols of `released` inside a run of >= `min_symbols` symbols that a source contains."""
    folded = text_symbols(released)
    grams: set[str] = set()
    for source in sources:
        symbols = text_symbols(source)
        grams.update(symbols[i : i + min_symbols] for i in range(len(symbols) - min_symbols + 1))
    covered = [False] * len(folded)
    for start in range(len(folded) - min_symbols + 1):
        if folded[start : start + min_symbols] in grams:
            for index in range(start, start + min_symbols):
                covered[index] = True
    return sum(covered)
