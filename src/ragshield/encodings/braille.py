"""Uncontracted (grade 1) English Braille in Unicode's Braille patterns (U+2800..U+28FF).

A cell's code point is U+2800 plus one bit per raised dot (dot n is bit n - 1). Letters are their
cells; a digit is the letter a..j after the number sign (dots 3-4-5-6), valid until a cell that is
not one of those letters; a capital is its letter after the capital sign (dot 6). `unbraille` reads
a blank cell (U+2800) or a space as a space and a cell it does not know as nothing, so one stray
cell cannot hide the rest. Contracted (grade 2) Braille and the other languages' letter tables are
not read.
"""

from __future__ import annotations

import random

_DOTS = {
    "a": "1", "b": "12", "c": "14", "d": "145", "e": "15", "f": "124", "g": "1245", "h": "125",
    "i": "24", "j": "245", "k": "13", "l": "123", "m": "134", "n": "1345", "o": "135", "p": "1234",
    "q": "12345", "r": "1235", "s": "234", "t": "2345", "u": "136", "v": "1236", "w": "2456",
    "x": "1346", "y": "13456", "z": "1356",
    ",": "2", ";": "23", ":": "25", ".": "256", "!": "235", "?": "236", "'": "3", "-": "36",
}  # fmt: skip


def _cell(dots: str) -> str:
    return chr(0x2800 + sum(1 << (int(dot) - 1) for dot in dots))


BRAILLE = {char: _cell(dots) for char, dots in _DOTS.items()}
_READ = {cell: char for char, cell in BRAILLE.items()}
NUMBER_SIGN, CAPITAL_SIGN, BLANK = _cell("3456"), _cell("6"), "\u2800"
_DIGIT_OF = {BRAILLE[letter]: str((i + 1) % 10) for i, letter in enumerate("abcdefghij")}


def is_braille(char: str) -> bool:
    """One of Unicode's 256 Braille patterns (the blank cell included)."""
    return "\u2800" <= char <= "\u28ff"


def braille_letter(cell: str) -> str:
    """The lower-case letter a Braille cell spells, or "" (a sign, punctuation, a blank or a cell
    that is no letter). A digit is the letter a..j it shares a cell with."""
    read = _READ.get(cell, "")
    return read if read.isalpha() else ""


def braille(text: str, rng: random.Random) -> str:
    """`text` in grade-1 Braille cells; spaces as spaces; characters without a cell stay as they are."""
    del rng
    out: list[str] = []
    in_number = False
    for char in text:
        if char.isdigit() and char.isascii():
            out.append(("" if in_number else NUMBER_SIGN) + BRAILLE["abcdefghij"[(int(char) - 1) % 10]])
            in_number = True
            continue
        in_number = False
        lower = char.lower()
        if lower in BRAILLE and lower.isascii():
            out.append((CAPITAL_SIGN if char != lower else "") + BRAILLE[lower])
        else:
            out.append(char)
    return "".join(out)


def unbraille(text: str) -> str:
    """`text` with its Braille cells read as letters, digits and punctuation (see the module
    docstring); everything else as it is."""
    out: list[str] = []
    in_number = capital = False
    for char in text:
        if not is_braille(char):
            out.append(char)
            in_number = capital = False
        elif char == NUMBER_SIGN:
            in_number = True
        elif char == CAPITAL_SIGN:
            capital = True
        elif in_number and char in _DIGIT_OF:
            out.append(_DIGIT_OF[char])
            capital = False
        else:
            in_number = False
            read = " " if char == BLANK else _READ.get(char, "")
            out.append(read.upper() if capital else read)
            capital = False
    return "".join(out)
