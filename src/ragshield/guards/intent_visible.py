"""A query as a person sees it (`visible_text`), for the intent guard's second reading.

Unicode's format characters (category Cf) are invisible, so a client can put them between the
letters of a command ("p\\u200br\\u200bi\\u200bn\\u200bt") and hide its words from the embedders,
which read them as noise (p 0.05 for a command with a zero-width space after every letter, model
v11). Tag characters (U+E0020..U+E007E) mirror ASCII: people do not see them, language models read
them ("ASCII smuggling"), and neither the embedders nor the lexical part did.

`visible_text` drops format characters and reads tag characters as the ASCII they mirror, except
where they belong to the text's own writing, so ordinary text in those scripts keeps its form and
gets no second reading (each costs one embedding):

* a zero-width joiner or non-joiner between two characters of a script that joins (Arabic script,
  the Indic scripts, Sinhala, Mongolian) or of an emoji sequence (a family, a flag with a rainbow);
* a zero-width space between two letters of a script written without spaces that breaks lines at
  it (Thai, Lao, Khmer, Myanmar, Tibetan);
* a subdivision flag: the black flag, one to six tag letters or digits and the cancel tag
  ("gbeng", England); tags after the flag in any other form are read as ASCII.
"""

from __future__ import annotations

import re
import unicodedata

# every format character (category Cf); `test_the_invisible_class_is_every_format_character`
# checks the list against `unicodedata`
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
_SUBDIVISION_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,6}\U000e007f")
_TAGS = re.compile("[\U000e0020-\U000e007e]+")
_JOINERS = "\u200c\u200d"
_ZERO_WIDTH_SPACE = "\u200b"
_JOINING_SCRIPTS = (
    "ARABIC", "SYRIAC", "NKO", "DEVANAGARI", "BENGALI", "GURMUKHI", "GUJARATI", "ORIYA", "TAMIL",
    "TELUGU", "KANNADA", "MALAYALAM", "SINHALA", "MONGOLIAN",
)  # fmt: skip
_UNSPACED_SCRIPTS = ("THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN")
_EMOJI_MODIFIERS = "\ufe0f\u20e3"  # the emoji presentation selector and the keycap


def _joins(char: str) -> bool:
    """A character a zero-width (non-)joiner may stand beside: a letter or mark of a joining
    script, or part of an emoji sequence."""
    if char in _EMOJI_MODIFIERS or ord(char) >= 0x1F000 or unicodedata.category(char) == "So":
        return True
    return unicodedata.name(char, "").startswith(_JOINING_SCRIPTS)


def _unspaced(char: str) -> bool:
    return unicodedata.name(char, "").startswith(_UNSPACED_SCRIPTS)


def _kept(text: str, start: int, end: int) -> bool:
    """Whether the format character at `text[start:end]` belongs to the writing around it."""
    char = text[start]
    if char not in _JOINERS and char != _ZERO_WIDTH_SPACE:
        return False
    before, after = text[start - 1 : start], text[end : end + 1]
    neighbours = [c for c in (before, after) if c and _INVISIBLE.match(c) is None]
    if char == _ZERO_WIDTH_SPACE:
        return len(neighbours) == 2 and all(_unspaced(c) for c in neighbours)
    return bool(neighbours) and all(_joins(c) for c in neighbours)


def _visible(match: re.Match[str]) -> str:
    piece = match.group(0)
    if _SUBDIVISION_FLAG.fullmatch(piece):
        return piece
    if _TAGS.fullmatch(piece):
        return "".join(chr(ord(char) - 0xE0000) for char in piece)
    return piece if _kept(match.string, match.start(), match.end()) else ""


_PIECES = re.compile(f"{_SUBDIVISION_FLAG.pattern}|{_TAGS.pattern}|{_INVISIBLE.pattern}")


def visible_text(text: str) -> str:
    """`text` as a reader sees it: format characters (zero-width spaces and joiners, soft hyphens,
    word joiners, byte-order marks, direction marks) dropped and tag characters read as the ASCII
    they mirror, except where they belong to the writing (see the module docstring). Returns `text`
    itself when it holds no format character (the common case)."""
    if _INVISIBLE.search(text) is None:
        return text
    return _PIECES.sub(_visible, text)
