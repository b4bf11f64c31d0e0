"""Escapes in a query read back (`escapes_decoded`), for `intent_decoding.decoded_form`: percent-escapes
as UTF-8, HTML character references, `\\u`, `\\x`, `U+` and octal escapes, and runs of `\\x` or octal
bytes as UTF-8. The gate (which queries are read so) is described in `intent_decoding`."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from itertools import islice
from urllib.parse import unquote

from ragshield.guards.intent_languages import OTHER_SCRIPTS, other_script_letter, script_of
from ragshield.guards.intent_vocabulary import MIN_SCRIPT_LETTERS, printable_part
from ragshield.guards.release.escapes import CODE_POINT_ESCAPES, MARKED_ESCAPE, escaped_char, unescape

_MIN_ESCAPES = 4  # escapes of ASCII letters or digits (see `escapes_decoded`)
_BYTE_ESCAPE = re.compile(r"\\[xX]([0-9A-Fa-f]{2})|\\([0-3][0-7]{2})")
_BYTE_RUN = re.compile(rf"(?:{_BYTE_ESCAPE.pattern}){{2,}}+")
_NAMED_ESCAPE = re.compile(r"\\N\{([A-Za-z0-9 -]{1,80})\}")  # Python's `\N{LATIN SMALL LETTER L}`
# four or more side by side spell a string; code writes one per literal (a table of symbols)
_NAMED_RUN = re.compile(rf"(?:{_NAMED_ESCAPE.pattern}){{4,}}+")


def escapes_decoded(text: str) -> str:
    """`text` with its escapes decoded, when at least four of them stand for ASCII letters or
    digits (which a browser or a JSON serializer never escapes, so "caf%C3%A9" or "Jos\\u00e9" alone
    do not count), or twelve letters of another script than Latin (a serializer escapes those, so
    a pasted name or URL title stays as it is, while a sentence is read); else `text`.
    Percent-escapes and runs of `\\x` or octal byte escapes are read as UTF-8 (twice-escaped
    percent-escapes once more, with the others), then HTML character references and the `\\u`,
    `U+` and remaining byte escapes one by one: an escape of no character or of a control
    character is dropped, so one stray escape cannot hide the rest."""
    unquoted = _named_as_chars(_byte_runs_as_utf8(unquote(text, errors="replace")))
    # the unquoted text is counted too for twice-escaped ones; it is the text itself without a "%"
    plain, script = _escape_counts(text)
    if unquoted != text:
        plain_unquoted, script = _escape_counts(unquoted)
        plain = max(plain, plain_unquoted)
        script = max(script, _decoded_script_letters(text, unquoted))
    if plain < _MIN_ESCAPES and _plain_named(text) < _MIN_ESCAPES and script < MIN_SCRIPT_LETTERS:
        return text
    decoded, _ = unescape(unquoted, range(len(unquoted)), bare_numbers=False)
    return printable_part(decoded)


def _byte_runs_as_utf8(text: str) -> str:
    """`text` with each run of two or more `\\xHH` or three-digit octal byte escapes (a bytes
    literal: `b'\\xd0\\x9f...'`, `\\320\\237...`) read as UTF-8, as `unquote` reads percent-escapes;
    a run that is no UTF-8 stays as it is."""

    def as_utf8(match: re.Match[str]) -> str:
        codes = _BYTE_ESCAPE.findall(match.group(0))
        raw = bytes(int(hexa, 16) if hexa else int(octal, 8) for hexa, octal in codes)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return match.group(0)

    return _BYTE_RUN.sub(as_utf8, text) if "\\" in text else text


def _named_char(match: re.Match[str]) -> str:
    """The character a Python named escape (`\\N{LATIN SMALL LETTER L}`) stands for, or the escape."""
    try:
        return unicodedata.lookup(match.group(1))
    except KeyError:
        return match.group(0)


def _named_as_chars(text: str) -> str:
    """`text` with each run of four or more named escapes side by side read as characters."""
    if "\\N{" not in text:
        return text
    return _NAMED_RUN.sub(lambda run: _NAMED_ESCAPE.sub(_named_char, run.group(0)), text)


def _plain_named(text: str) -> int:
    """How many named escapes in runs of `text` stand for ASCII letters or digits, counted up to `_MIN_ESCAPES`."""
    if "\\N{" not in text:
        return 0
    runs = (match.group(0) for match in _NAMED_RUN.finditer(text))
    chars = (_named_char(match) for run in runs for match in _NAMED_ESCAPE.finditer(run))
    return sum(1 for _ in islice((c for c in chars if len(c) == 1 and c.isascii() and c.isalnum()), _MIN_ESCAPES))


def _escape_counts(text: str) -> tuple[int, int]:
    """In one pass over the escapes of `text`: how many stand for ASCII letters or digits (up to
    `_MIN_ESCAPES`), and how many name a letter of another script than Latin by code point
    (`\\u044f`, `&#1103;`, `U+044F`; up to `MIN_SCRIPT_LETTERS`). Percent, `\\x` and octal escapes
    spell bytes: their letters of other scripts are counted by `_decoded_script_letters`."""
    plain = script = 0
    for match in MARKED_ESCAPE.finditer(text):
        char = escaped_char(match)
        if char.isascii() and char.isalnum():
            plain += 1
        elif match.lastgroup in CODE_POINT_ESCAPES and other_script_letter(char):
            script += 1
        if plain >= _MIN_ESCAPES and script >= MIN_SCRIPT_LETTERS:
            break
    return min(plain, _MIN_ESCAPES), min(script, MIN_SCRIPT_LETTERS)


def _decoded_script_letters(text: str, decoded: str) -> int:
    """How many more letters of one script other than Latin (Japanese kana and kanji as one)
    `decoded` has than `text`, when they are at least four in five of the non-ASCII letters it
    gained; else 0. Random bytes read as UTF-8 give letters of many scripts (a pasted ciphertext in
    a bytes literal), a sentence letters of one."""
    gained = Counter(_script_family(char) for char in decoded if char.isalpha() and not char.isascii())
    gained.subtract(_script_family(char) for char in text if char.isalpha() and not char.isascii())
    total = sum(max(0, count) for count in gained.values())
    mine = [(count, name) for name, count in gained.items() if name in OTHER_SCRIPTS]
    most, script = max(mine, default=(0, ""))
    return most if script and 5 * most >= 4 * total else 0


def _script_family(char: str) -> str:
    script = script_of(char)
    return "CJK" if script in ("HIRAGANA", "KATAKANA") else script
