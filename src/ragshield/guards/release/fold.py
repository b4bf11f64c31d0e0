"""Fold text to the symbols the release guard compares: one definition for both sides.

A retrieved chunk and the streamed answer are folded the same way, character by character, so a
copy matches whatever case, separators, look-alikes or leetspeak the answer wrote it in:

* `fold_char`: Latin letters by their Unicode name (`LATIN SMALL LETTER B WITH HOOK`, `LATIN
  LETTER SMALL CAPITAL A`), Unicode's confusables data (`data/confusables_latin.json`: Cyrillic,
  Greek, Armenian, Cherokee, APL and symbol look-alikes of ASCII letters and digits) completed by the
  canary matcher's table for the few look-alikes Unicode pairs only with other non-ASCII letters,
  NFKD (fullwidth, mathematical and circled letters, ligatures; accents split off and dropped), tag characters and
  regional indicators to their letters, grade-1 Braille cells to the letters they spell (a digit
  cell after the number sign reads as its letter, a to j: per character, the sign cannot be followed),
  then casefolding. Everything that is not a letter or digit
  folds to nothing (spaces, punctuation, zero-width and format characters, combining marks).
  Letters of other scripts (Chinese, Cyrillic words that are not look-alikes) stay themselves.
* the `text` alphabet (`fold_text`) then folds leetspeak: digits and the symbols leetspeak uses to
  letters (0->o, 1/l/!/|->i, 3->e, 4/@->a, 5/$->s, 7/+->t, 8->b, 6/9->g, 2->z). Both sides fold, so
  a phone number still matches itself; `l` and `i` become one symbol.
* the `letters` alphabet (`fold_letters`): ASCII letters only, no leetspeak (digits dropped), for the
  Caesar-invariant view, which needs true letter positions.
* the `cipher` alphabet (`fold_cipher`): ASCII letters and digits, no leetspeak, for the same view's
  second stream: a letter cipher (rot13, atbash) leaves digits as they are, so they count there.

Every function works per character, so the result never depends on how the stream was split.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from importlib.resources import files
from itertools import compress
from typing import Any

from ragshield.encodings.braille import braille_letter, is_braille
from ragshield.guards.canary.confusables import CONFUSABLES as CANARY_LOOKALIKES

_LATIN_NAME = re.compile(r"^LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL )?([A-Z])(?: |$)")
_LEET = {"0": "o", "1": "i", "l": "i", "2": "z", "3": "e", "4": "a", "5": "s", "6": "g", "7": "t", "8": "b", "9": "g"}
_LEET_SYMBOLS = {"!": "i", "|": "i", "@": "a", "$": "s", "+": "t"}
_ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"
# Unicode lists these Cyrillic and Greek letters as confusable with other non-ASCII letters only
# (т with ᴛ, п with ᴨ); the canary matcher's table says which Latin letter they imitate
_EXTRA_LOOKALIKES = CANARY_LOOKALIKES


@lru_cache(maxsize=1)
def _confusables() -> dict[str, str]:
    text = files("ragshield.data").joinpath("confusables_latin.json").read_text(encoding="utf-8")
    table: dict[str, str] = json.loads(text)
    return table


def _fold_one(char: str) -> str:
    """The folded form of one non-ASCII character after NFKD (no recursion into NFKD again)."""
    code = ord(char)
    if 0xE0041 <= code <= 0xE005A or 0xE0061 <= code <= 0xE007A or 0xE0030 <= code <= 0xE0039:  # tag characters
        return chr(code - 0xE0000).lower()
    if 0x1F1E6 <= code <= 0x1F1FF:  # regional indicator symbols A..Z
        return _ASCII_LOWER[code - 0x1F1E6]
    if unicodedata.category(char) in ("Mn", "Me", "Cf", "Cc", "Zs", "Zl", "Zp"):
        return ""
    mapped = _confusables().get(char) or _EXTRA_LOOKALIKES.get(char)
    if mapped is not None:
        return mapped.lower()
    match = _LATIN_NAME.match(unicodedata.name(char, ""))
    if match is not None:
        return match.group(1).lower()
    return "".join(c for c in char.casefold() if c.isalnum())


@lru_cache(maxsize=65536)
def fold_char(char: str) -> str:
    """The letters and digits one character stands for (usually one character, often none)."""
    if char.isascii():
        return char.lower() if char.isalnum() else ""
    if is_braille(char):  # a Braille cell is the letter it spells; signs and punctuation cells are nothing
        return braille_letter(char)
    latin = _LATIN_NAME.match(unicodedata.name(char, ""))
    if latin is not None:  # a Latin letter's name says which letter it is (`V WITH HOOK` is v)
        return latin.group(1).lower()
    mapped = _confusables().get(char) or _EXTRA_LOOKALIKES.get(char)
    if mapped is not None:  # before NFKD: some look-alikes decompose into other letters
        return mapped.lower()
    return "".join(_fold_one(part) for part in unicodedata.normalize("NFKD", char))


@lru_cache(maxsize=65536)
def _text_symbol(char: str) -> str:
    # NFKC first: a fullwidth `＠` or `！` is the leetspeak symbol it imitates, as on the chunk side
    # (an e-mail address in fullwidth must fold like the address itself)
    symbol = _LEET_SYMBOLS.get(char) or _LEET_SYMBOLS.get(unicodedata.normalize("NFKC", char))
    if symbol is not None:
        return symbol
    return "".join(_LEET.get(c, c) for c in fold_char(char))


@lru_cache(maxsize=65536)
def _letter_symbol(char: str) -> str:
    return "".join(c for c in fold_char(char) if "a" <= c <= "z")


@lru_cache(maxsize=65536)
def _cipher_symbol(char: str) -> str:
    return "".join(c for c in fold_char(char) if "a" <= c <= "z" or "0" <= c <= "9")


class LazyOwners(Sequence[int]):
    """The source offsets of folded ASCII text's symbols, computed only when a match needs them."""

    __slots__ = ("_count", "_keep", "_list", "_owners", "_text")

    def __init__(self, text: str, owners: Sequence[int], keep: bytes, count: int) -> None:
        self._text, self._owners, self._keep, self._count = text, owners, keep, count
        self._list: list[int] | None = None

    def materialise(self) -> list[int]:
        if self._list is None:  # at C speed: a 0/1 byte per character selects the owners kept
            self._list = list(compress(self._owners, self._text.encode("ascii").translate(self._keep)))
        return self._list

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return self.materialise()[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self.materialise())


def _ascii_table(fold: Callable[[str], str]) -> tuple[dict[int, str | None], bytes]:
    """The `str.translate` table of ASCII, and a `bytes.translate` table giving 1 for every ASCII
    character that folds to a symbol (each to at most one), 0 otherwise."""
    table: dict[int, str | None] = {}
    for code in range(128):
        symbol = fold(chr(code))
        table[code] = symbol or None
    return table, bytes(int(code < 128 and table[code] is not None) for code in range(256))


def _fold(text: str, owners: Sequence[int], fold: Callable[[str], str], ascii_table: Any) -> tuple[str, Sequence[int]]:
    if text.isascii():  # the common case: one C-level translate, offsets only if a match needs them
        table, keep = ascii_table
        symbols = text.translate(table)
        return symbols, LazyOwners(text, owners, keep, len(symbols))
    parts: list[str] = []
    kept: list[int] = []
    for char, owner in zip(text, owners, strict=True):
        folded = fold(char)
        if folded:
            parts.append(folded)
            kept.append(owner)
            if len(folded) > 1:
                kept.extend([owner] * (len(folded) - 1))
    return "".join(parts), kept


_TEXT_ASCII = _ascii_table(_text_symbol)
_LETTERS_ASCII = _ascii_table(_letter_symbol)
_CIPHER_ASCII = _ascii_table(_cipher_symbol)


def fold_text(text: str, offset: int = 0) -> tuple[str, Sequence[int]]:
    """The `text`-alphabet symbols of `text` and, for each symbol, the offset of the character it
    came from (`offset` + index in `text`)."""
    return _fold(text, range(offset, offset + len(text)), _text_symbol, _TEXT_ASCII)


def fold_text_at(text: str, owners: Sequence[int]) -> tuple[str, Sequence[int]]:
    """`fold_text` for characters with arbitrary offsets (`owners[i]` for `text[i]`)."""
    return _fold(text, owners, _text_symbol, _TEXT_ASCII)


def fold_letters(text: str, offset: int = 0) -> tuple[str, Sequence[int]]:
    """The `letters`-alphabet symbols (a-z) of `text` with their source offsets (see `fold_text`)."""
    return _fold(text, range(offset, offset + len(text)), _letter_symbol, _LETTERS_ASCII)


def fold_cipher(text: str, offset: int = 0) -> tuple[str, Sequence[int]]:
    """The `cipher`-alphabet symbols (a-z, 0-9) of `text` with their source offsets (see `fold_text`)."""
    return _fold(text, range(offset, offset + len(text)), _cipher_symbol, _CIPHER_ASCII)


def text_tables_after(mapping: dict[int, int]) -> tuple[dict[int, str | None], bytes]:
    """`fold_text`'s ASCII tables for text first translated by `mapping` (ASCII to ASCII), so one
    `str.translate` does both (`fold_ascii`)."""
    table = _TEXT_ASCII[0]
    composed = {code: table[mapping.get(code, code)] for code in range(128)}
    return composed, bytes(int(code < 128 and composed[code] is not None) for code in range(256))


def fold_ascii(text: str, offset: int, tables: tuple[dict[int, str | None], bytes]) -> tuple[str, Sequence[int]]:
    """The symbols of ASCII `text` under `tables` (`text_tables_after`), with their offsets (lazy)."""
    table, keep = tables
    symbols = text.translate(table)
    return symbols, LazyOwners(text, range(offset, offset + len(text)), keep, len(symbols))


def text_symbols(text: str) -> str:
    """The `text`-alphabet symbols of `text` only."""
    return text.translate(_TEXT_ASCII[0]) if text.isascii() else "".join(_text_symbol(char) for char in text)
