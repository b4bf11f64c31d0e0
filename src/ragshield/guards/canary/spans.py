"""Where a canary hit lies in the raw text, and which obfuscations its raw form uses.

The matcher's streams see folded text; a hit is mapped back to raw characters only when it occurs
(rare), by folding the raw window again piece by piece (one character, or one escape for the decoded
stream) and keeping, for every folded character, the raw piece it came from.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable
from urllib.parse import unquote

from ragshield.guards.canary.confusables import INVISIBLE_LETTERS
from ragshield.guards.canary.folding import skeleton

ZERO_WIDTH_FORM = "zero-width"
# an escape the decoded stream decodes as one unit (percent-escape, numeric or named HTML reference)
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|&#[0-9]{1,7};|&#[xX][0-9A-Fa-f]{1,6};|&[A-Za-z][A-Za-z0-9]{1,31};|.", re.DOTALL)


class SpanLookup:
    """A raw window folded piece by piece, with each folded character's raw piece (window offsets).

    Build with `by_char` (one raw character at a time, for the skeleton, hex and base64 streams) or
    `by_escape` (one escape at a time, for the decoded stream).
    """

    def __init__(self, window: str, pieces: list[tuple[int, int, str]]) -> None:
        self.window = window
        parts: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        for start, end, folded in pieces:
            parts.append(folded)
            starts.extend([start] * len(folded))
            ends.extend([end] * len(folded))
        self.text = "".join(parts)
        self._starts = starts
        self._ends = ends

    @classmethod
    def by_char(cls, window: str, fold: Callable[[str], str]) -> SpanLookup:
        return cls(window, [(index, index + 1, fold(char)) for index, char in enumerate(window)])

    @classmethod
    def by_escape(cls, window: str) -> SpanLookup:
        pieces = []
        for match in _ESCAPE.finditer(window):
            token = match.group()
            pieces.append((match.start(), match.end(), skeleton(html.unescape(unquote(token)))))
        return cls(window, pieces)

    def raw(self, start: int, end: int) -> tuple[int, int]:
        """The raw window span [first, last) of the folded characters [start, end) (clipped to the window)."""
        start = min(max(start, 0), len(self.text) - 1)
        end = min(max(end, start + 1), len(self.text))
        return self._starts[start], self._ends[end - 1]

    def last(self, target: str, count: int) -> list[tuple[int, int]]:
        """The raw window spans of the last `count` occurrences of `target`, in text order."""
        starts: list[int] = []
        start = self.text.find(target)
        while start != -1:
            starts.append(start)
            start = self.text.find(target, start + 1)
        return [self.raw(begin, begin + len(target)) for begin in starts[-count:]]


def form_of(segment: str, canary: str, reversed_form: bool) -> str:
    """Name the obfuscations that turn `canary` (or its reversal) into the raw `segment`.

    `capitalised` is a copy whose only change is an upper-case first letter, as a model writes a
    canary that opens a sentence; any other change of case is `case`.
    """
    expected = canary[::-1] if reversed_form else canary
    if segment == expected:
        return "reversed" if reversed_form else "plain"
    if (
        not reversed_form
        and segment[1:] == expected[1:]
        and segment[:1] != expected[:1]
        and segment[:1] == expected[:1].upper()
    ):
        return "capitalised"
    symbols = set(expected)
    forms: set[str] = set()
    for char in segment:
        category = unicodedata.category(char)
        if category == "Cf" or char in INVISIBLE_LETTERS:
            forms.add(ZERO_WIDTH_FORM)
        elif category in ("Mn", "Me") or (char.isalnum() and not char.isascii()):
            forms.add("homoglyph")
        elif not char.isalnum():
            forms.add("separators")
        elif char not in symbols:  # an ASCII letter of the canary in the other case
            forms.add("case")
    return "+".join(sorted(forms)) if forms else "plain"
