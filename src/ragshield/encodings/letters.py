"""Letter-level views: the same characters drawn with other code points, or with extras around them.

None of these views is decodable in general (a look-alike table is many-to-one, and the random
extras carry no position), so they only encode. Characters a view has no drawing for stay as they
are, so any Unicode text (a whole record with spaces and punctuation) can be written in every view.
Each view changes a text that has at least one ASCII letter.
"""

from __future__ import annotations

import random
from collections.abc import Callable

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
SEPARATORS = (" ", ".", "-", "_", "|", "*", "\n", ", ", " . ", "\u00b7")
# Combining marks that stack above, below and through a letter (U+0300..U+036F).
COMBINING = tuple(chr(code) for code in range(0x0300, 0x0370) if code != 0x034F)  # U+034F is invisible
# Look-alikes from Cyrillic, Greek, Armenian and technical symbols; the Armenian and symbol ones
# (օ ո ս հ գ զ ⍺ ⍴ ℮) are those a hand-made homoglyph table is known to miss.
HOMOGLYPHS: dict[str, str] = {
    "a": "аɑα⍺",
    "b": "ЬƄ",
    "c": "сϲⅽ",
    "d": "ԁⅾ",
    "e": "еε℮",
    "g": "ցɡ",
    "h": "һհ",
    "i": "іι",
    "j": "јϳ",
    "k": "κк",
    "l": "ⅼӏ",
    "m": "мⅿ",
    "n": "пոη",
    "o": "оοօ",
    "p": "рρ⍴",
    "q": "ԛգզ",
    "r": "г",
    "s": "ѕ",
    "t": "т",
    "u": "սυ",
    "v": "νѵ",
    "w": "ԝա",
    "x": "хχ",
    "y": "уγ",
    "A": "АΑ",
    "B": "ВΒ",
    "C": "СϹ",
    "E": "ЕΕ",
    "H": "НΗ",
    "I": "ІΙ",
    "J": "Ј",
    "K": "КΚ",
    "M": "МΜ",
    "N": "Ν",
    "O": "ОΟՕ",
    "P": "РΡ",
    "S": "Ѕ",
    "T": "ТΤ",
    "X": "ХΧ",
    "Y": "ҮΥ",
    "Z": "Ζ",
}
SMALL_CAPS = dict(zip("abcdefghijklmnopqrstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ", strict=True))  # no small x
LATIN_HOOK: dict[str, str] = {
    "a": "ɑ",
    "b": "ɓ",
    "c": "ƈ",
    "d": "ɗ",
    "e": "ȩ",
    "f": "ƒ",
    "g": "ɠ",
    "h": "ɦ",
    "i": "ɨ",
    "j": "ʝ",
    "k": "ƙ",
    "l": "ɭ",
    "m": "ɱ",
    "n": "ɲ",
    "o": "ơ",
    "p": "ƥ",
    "q": "ʠ",
    "r": "ɽ",
    "s": "ʂ",
    "t": "ƭ",
    "u": "ư",
    "v": "ʋ",
    "w": "ⱳ",
    "y": "ƴ",
    "z": "ȥ",
    "B": "Ɓ",
    "C": "Ƈ",
    "D": "Ɗ",
    "F": "Ƒ",
    "G": "Ɠ",
    "K": "Ƙ",
    "P": "Ƥ",
    "T": "Ƭ",
    "V": "Ʋ",
    "Y": "Ƴ",
    "Z": "Ȥ",
}

# Mathematical Alphanumeric Symbols (U+1D400..U+1D7FF): style -> (first capital, first small, first digit).
# Letters already encoded elsewhere (italic h = U+210E, script B = U+212C, ...) are holes in the block.
MATH_STYLES: dict[str, tuple[int, int, int | None]] = {
    "bold": (0x1D400, 0x1D41A, 0x1D7CE),
    "italic": (0x1D434, 0x1D44E, None),
    "bold-italic": (0x1D468, 0x1D482, None),
    "script": (0x1D49C, 0x1D4B6, None),
    "fraktur": (0x1D504, 0x1D51E, None),
    "double-struck": (0x1D538, 0x1D552, 0x1D7D8),
    "sans": (0x1D5A0, 0x1D5BA, 0x1D7E2),
    "sans-bold": (0x1D5D4, 0x1D5EE, 0x1D7EC),
    "monospace": (0x1D670, 0x1D68A, 0x1D7F6),
}
MATH_HOLES: dict[tuple[str, str], str] = {
    ("italic", "h"): "\u210e",
    **{
        ("script", k): v
        for k, v in zip("BEFHILMReg", "\u212c\u2130\u2131\u210b\u2110\u2112\u2133\u211b\u212f\u210a", strict=True)
    },
    ("script", "o"): "\u2134",
    **{("fraktur", k): v for k, v in zip("CHIRZ", "\u212d\u210c\u2111\u211c\u2128", strict=True)},
    **{("double-struck", k): v for k, v in zip("CHNPQRZ", "\u2102\u210d\u2115\u2119\u211a\u211d\u2124", strict=True)},
}


def _is_ascii_letter(char: str) -> bool:
    return ("a" <= char <= "z") or ("A" <= char <= "Z")


def _swap_some(text: str, table: dict[str, str], rng: random.Random, share: float) -> str:
    """Replace about `share` of the characters `table` knows by a random look-alike; at least one."""
    chars = list(text)
    known = [index for index, char in enumerate(chars) if char in table]
    if not known:
        return text
    chosen = [index for index in known if rng.random() < share] or [rng.choice(known)]
    for index in chosen:
        chars[index] = rng.choice(table[chars[index]])
    return "".join(chars)


def case(text: str, rng: random.Random) -> str:
    """Random upper/lower case per letter; at least one cased letter flips."""
    chars = list(text)
    cased = [index for index, char in enumerate(chars) if char.swapcase() != char and len(char.swapcase()) == 1]
    if not cased:
        return text
    chosen = [index for index in cased if rng.random() < 0.5] or [rng.choice(cased)]
    for index in chosen:
        chars[index] = chars[index].swapcase()
    return "".join(chars)


def separators(text: str, rng: random.Random) -> str:
    """One random separator between every two characters."""
    return rng.choice(SEPARATORS).join(text)


def zero_width(text: str, rng: random.Random) -> str:
    """1-3 random zero-width characters after every character."""
    return "".join(char + "".join(rng.choices(ZERO_WIDTH, k=rng.randint(1, 3))) for char in text)


def homoglyph(text: str, rng: random.Random) -> str:
    """About 70% of the letters drawn with a Cyrillic, Greek, Armenian or symbol look-alike."""
    return _swap_some(text, HOMOGLYPHS, rng, 0.7)


def fullwidth(text: str, rng: random.Random) -> str:
    """Printable ASCII in its fullwidth form (U+FF01..U+FF5E); the space as the ideographic space."""
    del rng  # no random detail
    return "".join(
        chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else "\u3000" if char == " " else char for char in text
    )


def combining(text: str, rng: random.Random) -> str:
    """1-3 random combining marks stacked on every letter."""
    return "".join(
        char + "".join(rng.choices(COMBINING, k=rng.randint(1, 3))) if char.isalpha() else char for char in text
    )


def math_char(char: str, style: str) -> str:
    """`char` in the mathematical alphabet `style`, or `char` when the style has no such symbol."""
    capital, small, digit = MATH_STYLES[style]
    if (style, char) in MATH_HOLES:
        return MATH_HOLES[(style, char)]
    if "A" <= char <= "Z":
        return chr(capital + ord(char) - ord("A"))
    if "a" <= char <= "z":
        return chr(small + ord(char) - ord("a"))
    if digit is not None and "0" <= char <= "9":
        return chr(digit + ord(char) - ord("0"))
    return char


def math_alphabet(text: str, rng: random.Random) -> str:
    """ASCII letters (and digits, where the style has them) in one random mathematical alphabet."""
    style = rng.choice(sorted(MATH_STYLES))
    return "".join(math_char(char, style) for char in text)


def small_caps(text: str, rng: random.Random) -> str:
    """Letters in small capitals (ᴀʙᴄ; x has none and stays)."""
    del rng
    return "".join(SMALL_CAPS.get(char.lower(), char) if _is_ascii_letter(char) else char for char in text)


def regional_indicator(text: str, rng: random.Random) -> str:
    """Letters as regional indicator symbols (U+1F1E6..U+1F1FF).

    Two adjacent indicators render as a flag, so a random gap (a space or a zero-width character,
    or none, leaving the flags) goes between consecutive letters.
    """
    gap = rng.choice(("", " ", "\u200b", "\u200c"))
    out: list[str] = []
    for char in text:
        if _is_ascii_letter(char):
            if out and "\U0001f1e6" <= out[-1] <= "\U0001f1ff":
                out.append(gap)
            out.append(chr(0x1F1E6 + ord(char.upper()) - ord("A")))
        else:
            out.append(char)
    return "".join(out)


def tag_chars(text: str, rng: random.Random) -> str:
    """Printable ASCII as invisible Unicode tag characters (U+E0020..U+E007E), maybe after a LANGUAGE TAG."""
    body = "".join(chr(0xE0000 + ord(char)) if " " <= char <= "~" else char for char in text)
    return ("\U000e0001" if rng.random() < 0.5 else "") + body


# capitals with no hooked form of their own take the small letter's (case is no disguise anyway), so
# every text with a vowel changes
_LATIN_HOOK_ANY_CASE = {**{c.upper(): v for c, v in LATIN_HOOK.items() if c.upper() not in LATIN_HOOK}, **LATIN_HOOK}


def latin_hook(text: str, rng: random.Random) -> str:
    """About 70% of the letters drawn with a Latin hook, tail, horn or stroke look-alike (ɓ ɗ ƈ ƙ ơ ɨ ...)."""
    return _swap_some(text, _LATIN_HOOK_ANY_CASE, rng, 0.7)


ENCODERS: dict[str, Callable[[str, random.Random], str]] = {
    "case": case,
    "separators": separators,
    "zero-width": zero_width,
    "homoglyph": homoglyph,
    "fullwidth": fullwidth,
    "combining": combining,
    "math-alphabet": math_alphabet,
    "small-caps": small_caps,
    "regional-indicator": regional_indicator,
    "tag-chars": tag_chars,
    "latin-hook": latin_hook,
}
