"""`UnescapeView`: the answer with its escapes decoded, twice (double URL-encoding), for one track.

Percent-escapes, HTML character references, `\\xHH`, `\\uHHHH`, `U+HHHH`, octal `\\NNN` escapes and
bare decimal character codes are decoded, each decoded character owned by its escape's first raw
offset; the second pass decodes marked escapes only (bare numbers there are decoded characters).
An escape that the delta boundary cuts is held until the next delta (`_escape_tail`), and text
without any escape mark reaches no decoder (the text view sees it as it is).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragshield.guards.release.fold import fold_text
from ragshield.guards.release.views import HoldingView

_MARKED = (
    r"%(?P<pct>[0-9A-Fa-f]{2})|&#[xX](?P<hent>[0-9A-Fa-f]{1,6});?|&#(?P<dent>\d{1,7});?"
    r"|\\[xX](?P<hx>[0-9A-Fa-f]{2})|\\u\{(?P<ub>[0-9A-Fa-f]{1,6})\}|\\u(?P<uni>[0-9A-Fa-f]{4})"
    r"|\\U(?P<uu>[0-9A-Fa-f]{8})|[uU]\+(?P<cp>[0-9A-Fa-f]{4,6})"
    r"|\\(?P<oct>[0-7]{1,3})"
)
_ESCAPE = re.compile(_MARKED + r"|(?<![\w.])(?P<dec>\d{2,6})(?![\w.])")
MARKED_ESCAPE = re.compile(_MARKED)  # the second pass: bare numbers there are decoded characters
# an escape mark, `U+` with a hex digit, or three numbers close together; written to start with one
# character class, so the regex engine skips to candidate characters at C speed. The numbers are
# tried only from the first digit of a run and never given back (possessive): tried from every
# digit, a run of 8,000 digits in an answer cost 1 s (quadratic; a client chooses the answer it
# sends to /v1/guard/output)
_UNESCAPE_HINT = re.compile(
    r"[%&\\uU\d](?:(?<=[%&\\])|(?<=[uU])\+[0-9A-Fa-f]|(?<=\d)(?<!\d\d)\d*+\W{1,3}\d++\W{1,3}\d)"
)
_TAIL_CHARS = 12  # longest escape the next delta may still finish (`&#x0001f600;`)
# escape marks before an escape's letters and digits, with their length (`\u0070`, `&#x70`, `U+0070`)
_MARK_BEFORE = {"\\": 1, "%": 1, "&": 1, "&#": 2, "U+": 2, "u+": 2}
_ALNUM_TAIL = re.compile(r"[^\W_]*\Z")  # `[^\W_]` is exactly `str.isalnum`
_ASCII_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _escape_tail(text: str) -> int:
    """Where an escape that the next delta may finish starts (len(text) when none): the last escape
    mark in the last characters, or a trailing run of letters and digits (a bare code, an escape's
    digits, or a word) with the escape mark right before it, which may lie just outside them."""
    cut = len(text)
    floor = max(0, len(text) - _TAIL_CHARS)
    for mark in "%&\\":
        found = text.rfind(mark, floor)
        if found != -1:
            cut = min(cut, found)
    if text.isascii():  # the trailing run of letters and digits, at C speed
        start = max(floor, len(text.rstrip(_ASCII_ALNUM)))
    else:
        run = _ALNUM_TAIL.search(text, floor)  # always matches (maybe empty, at the end)
        start = run.start() if run is not None else len(text)
    if 0 < start < len(text):  # an escape's body whose mark lies just before: hold the mark too
        start -= _MARK_BEFORE.get(text[max(0, start - 2) : start], _MARK_BEFORE.get(text[start - 1], 0))
    return min(cut, start)


# the groups of `MARKED_ESCAPE` that name a character by its code point; the others (percent, `\\x`,
# octal) spell one byte of its UTF-8
CODE_POINT_ESCAPES = frozenset({"hent", "dent", "ub", "uni", "uu", "cp"})
_BASES = {"pct": 16, "hent": 16, "dent": 10, "hx": 16, "ub": 16, "uni": 16, "uu": 16, "cp": 16, "oct": 8, "dec": 10}


def escaped_char(match: re.Match[str]) -> str:
    """The character an escape of `MARKED_ESCAPE` (or a bare decimal code) stands for; "" for a
    code point that is no character (0, a surrogate, past U+10FFFF)."""
    name = match.lastgroup or "dec"
    code = int(match.group(name), _BASES[name])
    return chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else ""


def unescape(text: str, owners: Sequence[int], *, bare_numbers: bool = True) -> tuple[str, list[int]]:
    """`text` with every escape decoded; each decoded character owned by its escape's first offset.

    `bare_numbers`: also read free-standing decimal numbers as character codes.
    """
    parts: list[str] = []
    kept: list[int] = []
    cursor = 0
    for match in (_ESCAPE if bare_numbers else MARKED_ESCAPE).finditer(text):
        parts.append(text[cursor : match.start()])
        kept.extend(owners[cursor : match.start()])
        char = escaped_char(match)
        parts.append(char)
        kept.extend([owners[match.start()]] * len(char))
        cursor = match.end()
    parts.append(text[cursor:])
    kept.extend(owners[cursor:])
    return "".join(parts), kept


_RECENT_CHARS = 24  # fed text kept to read the hint across pieces (three numbers and their separators)


@dataclass
class UnescapeView(HoldingView):
    """The answer with escapes decoded twice, folded, for one track; an escape cut by the delta
    boundary is held until the next delta.

    `marked`: a second track that reads the same text with marked escapes only (no bare number
    read as a character code). A number the record itself holds (`415\\u002d7994`, a phone number
    beside escaped letters) is a bare code to the first reading, which breaks the copy there.
    """

    marked: Any = None
    _recent: str = ""

    def _cut(self, text: str) -> int:
        return _escape_tail(text)

    def _feed(self, text: str, start: int) -> None:
        if not text:
            return
        # the hint is read with the end of the text fed before: a short delta may feed one or two of a
        # run of bare codes (`32, `), and resetting the track there broke the match of a whole value
        recent, self._recent = self._recent, (self._recent + text)[-_RECENT_CHARS:]
        if _UNESCAPE_HINT.search(recent + text) is None:  # nothing to decode: the text view sees it as it is
            self.track.reset()
            if self.marked is not None:
                self.marked.reset()
            return
        raw = range(start, start + len(text))
        self._decode(self.track, text, raw, bare_numbers=True)
        if self.marked is not None:
            self._decode(self.marked, text, raw, bare_numbers=False)

    @staticmethod
    def _decode(track: Any, text: str, owners: Sequence[int], *, bare_numbers: bool) -> None:
        once, owners = unescape(text, owners, bare_numbers=bare_numbers)
        twice, owners = unescape(once, owners, bare_numbers=False)
        symbols, positions = fold_text(twice)
        track.feed(symbols, [owners[i] for i in positions])
