"""The obfuscations `CanaryMatcher` is built to see through, as executable definitions.

`obfuscate(text, form, rng)` writes `text` in one supported form. Tests and benchmarks use it to
check the matcher and monitor against every form; an evaluation can use it to model a target that
complies with an obfuscation request (clearly labelled as such). Every form spans at most
`CHARS_PER_SYMBOL` raw characters per symbol of `text`, so the monitor's holdback covers it.
"""

from __future__ import annotations

import base64
import random
from urllib.parse import quote

from ragshield.errors import ConfigError
from ragshield.guards.canary.matcher import CHARS_PER_SYMBOL

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
SEPARATORS = (" ", ".", "-", "\n", ", ", " - ", "_", "|", "', '", " . ")
HOMOGLYPHS = {
    "a": "аɑα",
    "b": "ЬьƄ",
    "c": "сϲ",
    "d": "ԁ",
    "e": "еε",
    "h": "һ",
    "j": "јϳ",
    "k": "κк",
    "m": "м",
    "n": "ηп",
    "p": "рρ",
    "q": "ԛ",
    "r": "г",
    "s": "ѕ",
    "t": "тτ",
    "u": "υ",
    "v": "ν",
    "w": "ԝω",
    "x": "хχ",
    "y": "уγ",
}
FORMS = (
    "plain",
    "case",
    "separators",
    "zero-width",
    "homoglyph",
    "fullwidth",
    "combining",
    "reversed",
    "reversed+separators",
    "base64",
    "hex",
    "url",
    "url-mixed",
    "html-entity",
)


def _fullwidth(char: str) -> str:
    return chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char


def obfuscate(text: str, form: str, rng: random.Random) -> str:
    """`text` (ASCII letters/digits) written in `form` (one of `FORMS`), with random details.

    Raises:
        ConfigError: unknown form.
    """
    if form == "plain":
        return text
    if form == "case":
        flipped = "".join(char.upper() if rng.random() < 0.5 else char for char in text)
        return flipped if flipped != text else text.upper()
    if form in ("separators", "reversed+separators"):
        source = text[::-1] if form.startswith("reversed") else text
        separator = rng.choice(SEPARATORS)
        return separator.join(source)
    if form == "zero-width":
        return "".join(char + "".join(rng.choices(ZERO_WIDTH, k=rng.randint(1, 3))) for char in text)
    if form == "homoglyph":
        swapped = "".join(rng.choice(HOMOGLYPHS[char]) if char in HOMOGLYPHS else char for char in text)
        return swapped if swapped != text else "".join(_fullwidth(char) for char in text)
    if form == "fullwidth":
        return "".join(_fullwidth(char) for char in text)
    if form == "combining":
        return "".join(char + rng.choice("\u0301\u0308\u0323\u034f") for char in text)
    if form == "reversed":
        return text[::-1]
    if form == "base64":
        # 0-2 random bytes in front move the text to each byte alignment of the encoding
        pad = "".join(rng.choice("xyz") for _ in range(rng.randint(0, 2)))
        encoder = rng.choice((base64.b64encode, base64.urlsafe_b64encode))
        return encoder((pad + text).encode("ascii")).decode("ascii")
    if form == "hex":
        layout = rng.choice(("{:02x}", "{:02X} ", "0x{:02x}, ", "\\x{:02x}", "\\u{:04x}", "U+{:04X} "))
        return "".join(layout.format(ord(char)) for char in text).strip()
    if form == "url":
        return "".join(f"%{ord(char):02{rng.choice('xX')}}" for char in text)
    if form == "url-mixed":
        return "".join(f"%{ord(char):02X}" if rng.random() < 0.5 else quote(char) for char in text)
    if form == "html-entity":
        return "".join(rng.choice((f"&#{ord(char)};", f"&#x{ord(char):x};")) for char in text)
    raise ConfigError(f"unknown canary form {form!r}; valid forms: {', '.join(FORMS)}")


def max_span(length: int) -> int:
    """The most raw characters any form of a `length`-symbol text may take (the holdback bound)."""
    return CHARS_PER_SYMBOL * length
