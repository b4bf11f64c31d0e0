"""Escape and number views: every character (or byte) written as an escape sequence or a number.

Every view here decodes exactly on any Unicode text. `url`, `url-double`, `binary` and
`octal-escapes` spell the UTF-8 bytes; `html-entity`, `decimal-codes` and `unicode-escapes` spell
code points (`unicode-escapes` escapes only a random subset, plus every backslash so the result
stays unambiguous).
"""

from __future__ import annotations

import html.entities
import random
import re
from collections.abc import Callable
from urllib.parse import quote, unquote_to_bytes

BINARY_SEPARATORS = (" ", "", ",", "\n", " | ", "  ", "-")
DECIMAL_SEPARATORS = (" ", ", ", ",", "-", "; ", "\n", " . ")
_NAMED = html.entities.codepoint2name
_ENTITY = re.compile(r"&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|([A-Za-z][A-Za-z0-9]*));")
_UNICODE_ESCAPE = re.compile(r"\\U([0-9a-fA-F]{8})|\\u([0-9a-fA-F]{4})")


def url(text: str, rng: random.Random) -> str:
    """Every UTF-8 byte percent-encoded (`%4A`), hex digits in random case."""
    digits = rng.choice(("{:02X}", "{:02x}"))
    return "".join("%" + digits.format(byte) for byte in text.encode("utf-8"))


def url_double(text: str, rng: random.Random) -> str:
    """Percent-encoded twice: `%254A` (the `%` of each escape escaped again)."""
    return url(text, rng).replace("%", "%25")


def url_mixed(text: str, rng: random.Random) -> str:
    """Per character, at random: every byte escaped, or `quote`'s form (letters and digits kept)."""
    return "".join(
        "".join(f"%{byte:02X}" for byte in char.encode("utf-8")) if rng.random() < 0.5 else quote(char, safe="")
        for char in text
    )


def _entity(char: str, rng: random.Random) -> str:
    code = ord(char)
    forms = [f"&#{code};", f"&#x{code:x};", f"&#X{code:X};"]
    if code in _NAMED:
        forms.append(f"&{_NAMED[code]};")
    return rng.choice(forms)


def html_entity(text: str, rng: random.Random) -> str:
    """Every character as a decimal, hex or named HTML character reference."""
    return "".join(_entity(char, rng) for char in text)


def _unentity(text: str) -> str:
    """Character references to characters, code point for code point (unlike `html.unescape`,
    which maps `&#128;` to the euro sign and drops control characters, as browsers do)."""

    def one(match: re.Match[str]) -> str:
        decimal, hexa, name = match.groups()
        if name is not None:
            return chr(html.entities.name2codepoint[name]) if name in html.entities.name2codepoint else match[0]
        return chr(int(decimal) if decimal is not None else int(hexa, 16))

    return _ENTITY.sub(one, text)


def binary(text: str, rng: random.Random) -> str:
    """The UTF-8 bytes as 8-bit groups (`01001010`), joined by a random separator."""
    return rng.choice(BINARY_SEPARATORS).join(f"{byte:08b}" for byte in text.encode("utf-8"))


def _unbinary(text: str) -> str:
    bits = re.sub(r"[^01]", "", text)
    return bytes(int(bits[start : start + 8], 2) for start in range(0, len(bits), 8)).decode("utf-8")


def octal_escapes(text: str, rng: random.Random) -> str:
    """The UTF-8 bytes as three-digit octal escapes (`\\112`), maybe spaced."""
    gap = rng.choice(("", "", " "))
    return gap.join(f"\\{byte:03o}" for byte in text.encode("utf-8"))


def _unoctal(text: str) -> str:
    return bytes(int(digits, 8) for digits in re.findall(r"\\([0-7]{3})", text)).decode("utf-8")


def decimal_codes(text: str, rng: random.Random) -> str:
    """The code points in decimal (`74 111 104`), joined by a random separator."""
    return rng.choice(DECIMAL_SEPARATORS).join(str(ord(char)) for char in text)


def _undecimal(text: str) -> str:
    return "".join(chr(int(number)) for number in re.findall(r"\d+", text))


def _escape(char: str, surrogates: bool) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    if not surrogates:
        return f"\\U{code:08x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def unicode_escapes(text: str, rng: random.Random) -> str:
    """A random subset of characters (at least one, every backslash) as `\\uXXXX` escapes.

    Characters beyond U+FFFF become a JSON surrogate pair or Python's `\\UXXXXXXXX`, at random.
    """
    surrogates = rng.random() < 0.5
    share = rng.uniform(0.2, 0.8)
    chosen = {index for index in range(len(text)) if rng.random() < share}
    if text and not chosen:
        chosen.add(rng.randrange(len(text)))
    return "".join(
        _escape(char, surrogates) if index in chosen or char == "\\" else char for index, char in enumerate(text)
    )


def _unescape_unicode(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        return chr(int(match[1] or match[2], 16))

    # Surrogate halves come out as lone surrogates; the round trip through UTF-16 pairs them up.
    joined = _UNICODE_ESCAPE.sub(one, text)
    return joined.encode("utf-16", "surrogatepass").decode("utf-16")


ENCODERS: dict[str, Callable[[str, random.Random], str]] = {
    "url": url,
    "url-double": url_double,
    "url-mixed": url_mixed,
    "html-entity": html_entity,
    "binary": binary,
    "octal-escapes": octal_escapes,
    "decimal-codes": decimal_codes,
    "unicode-escapes": unicode_escapes,
}
DECODERS: dict[str, Callable[[str], str]] = {
    "url": lambda text: unquote_to_bytes(text).decode("utf-8"),
    "url-double": lambda text: unquote_to_bytes(unquote_to_bytes(text).decode("ascii")).decode("utf-8"),
    "url-mixed": lambda text: unquote_to_bytes(text).decode("utf-8"),
    "html-entity": _unentity,
    "binary": _unbinary,
    "octal-escapes": _unoctal,
    "decimal-codes": _undecimal,
    "unicode-escapes": _unescape_unicode,
}
