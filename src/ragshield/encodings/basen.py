"""Base-N views: the UTF-8 bytes of the text (UTF-16 for the `-utf16` views) in a binary-to-text encoding.

Every view here decodes exactly: `decode(encode(text)) == text` for any Unicode text. The random
details (line wrapping, padding, letter case, prefixes and separators) are the ones real encoders
and chat models vary, and each decoder accepts all of them.
"""

from __future__ import annotations

import base64
import binascii
import random
import re
from collections.abc import Callable

HEX_LAYOUTS = ("{:02x}", "{:02X}", "{:02x} ", "{:02X} ", "0x{:02x}, ", "\\x{:02x}", "{:02x}:")
HEX16_LAYOUTS = ("{:04x}", "{:04X}", "{:04x} ", "{:04X} ", "0x{:04x}, ")
_WHITESPACE = re.compile(r"\s+")


def _wrap(text: str, rng: random.Random) -> str:
    """One line, or lines of 64 or 76 characters (PEM and MIME wrapping)."""
    width = rng.choice((0, 64, 76))
    if not width:
        return text
    return "\n".join(text[start : start + width] for start in range(0, len(text), width))


def _padded(text: str, block: int) -> str:
    """`text` without whitespace, with the `=` padding an encoder may have dropped put back."""
    text = _WHITESPACE.sub("", text).rstrip("=")
    return text + "=" * (-len(text) % block)


def _b64(data: bytes, rng: random.Random) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return _wrap(encoded.rstrip("=") if rng.random() < 0.2 else encoded, rng)


def _unb64(text: str) -> bytes:
    return base64.b64decode(_padded(text, 4), validate=True)


def b64(text: str, rng: random.Random) -> str:
    """Standard base64 of the UTF-8 bytes, maybe wrapped, maybe without `=` padding."""
    return _b64(text.encode("utf-8"), rng)


def b64_urlsafe(text: str, rng: random.Random) -> str:
    """URL-safe base64 (`-_` for `+/`) of the UTF-8 bytes, with or without padding."""
    encoded = base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii")
    return encoded.rstrip("=") if rng.random() < 0.5 else encoded


def b32(text: str, rng: random.Random) -> str:
    """Base32 of the UTF-8 bytes, upper or lower case, maybe without padding."""
    encoded = base64.b32encode(text.encode("utf-8")).decode("ascii")
    encoded = encoded.lower() if rng.random() < 0.3 else encoded
    return encoded.rstrip("=") if rng.random() < 0.3 else encoded


def b85(text: str, rng: random.Random) -> str:
    """Base85 (RFC 1924 alphabet, as Python and git use) of the UTF-8 bytes, maybe wrapped."""
    return _wrap(base64.b85encode(text.encode("utf-8")).decode("ascii"), rng)


def a85(text: str, rng: random.Random) -> str:
    """Ascii85 (Adobe btoa alphabet) of the UTF-8 bytes, maybe in `<~ ~>` brackets, `y` for 4 spaces, wrapped."""
    return base64.a85encode(
        text.encode("utf-8"),
        adobe=rng.random() < 0.5,
        foldspaces=rng.random() < 0.5,
        wrapcol=rng.choice((0, 0, 72, 75)),
    ).decode("ascii")


def _una85(text: str) -> bytes:
    text = text.strip()
    return base64.a85decode(text, adobe=text.startswith("<~"), foldspaces=True)


def b64_of_b64(text: str, rng: random.Random) -> str:
    """Base64 applied twice."""
    inner = base64.b64encode(text.encode("utf-8"))
    return _b64(inner, rng)


def b64_utf16(text: str, rng: random.Random) -> str:
    """Base64 of the UTF-16 bytes: little-endian without BOM (as PowerShell's -EncodedCommand), or with a BOM."""
    layout = rng.choice(("le", "le", "le-bom", "be-bom"))
    if layout == "le" and text[:1] in ("\ufeff", "\ufffe"):  # would read back as a byte-order mark
        layout = "le-bom"
    if layout == "le":
        data = text.encode("utf-16-le")
    elif layout == "le-bom":
        data = b"\xff\xfe" + text.encode("utf-16-le")
    else:
        data = b"\xfe\xff" + text.encode("utf-16-be")
    return _b64(data, rng)


def _utf16(data: bytes) -> str:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16")
    return data.decode("utf-16-le")


def hex_bytes(text: str, rng: random.Random) -> str:
    """The UTF-8 bytes as hex pairs, in a random layout (`4a6f`, `4A 6F`, `0x4a, 0x6f`, `\\x4a\\x6f`, ...)."""
    layout = rng.choice(HEX_LAYOUTS)
    return "".join(layout.format(byte) for byte in text.encode("utf-8")).strip().rstrip(",:")


def _unhex(text: str) -> bytes:
    digits = re.sub(r"0x|\\x|[^0-9a-fA-F]", "", text)
    return bytes.fromhex(digits)


def hex_utf16(text: str, rng: random.Random) -> str:
    """The UTF-16 code units (big-endian) as 4-digit hex groups in a random layout (`004a 006f`)."""
    layout = rng.choice(HEX16_LAYOUTS)
    data = text.encode("utf-16-be")
    units = (int.from_bytes(data[start : start + 2], "big") for start in range(0, len(data), 2))
    return "".join(layout.format(unit) for unit in units).strip().rstrip(",")


def uuencode(text: str, rng: random.Random) -> str:
    """uuencode of the UTF-8 bytes with a `begin 644 <name>` header and the `end` trailer."""
    name = rng.choice(("record.txt", "context.txt", "data.bin", "out.txt"))
    data = text.encode("utf-8")
    lines = [
        binascii.b2a_uu(data[start : start + 45], backtick=True).decode("ascii") for start in range(0, len(data), 45)
    ]
    return f"begin 644 {name}\n" + "".join(lines) + "`\nend\n"


def _unuu(text: str) -> bytes:
    lines = text.strip("\n").split("\n")
    if not lines or not lines[0].startswith("begin ") or lines[-1].strip() != "end":
        raise ValueError("not a uuencoded text: it needs a 'begin <mode> <name>' line and an 'end' line")
    return b"".join(binascii.a2b_uu(line) for line in lines[1:-1] if line not in ("`", ""))


ENCODERS: dict[str, Callable[[str, random.Random], str]] = {
    "base64": b64,
    "base64-urlsafe": b64_urlsafe,
    "base32": b32,
    "base85": b85,
    "ascii85": a85,
    "base64-of-base64": b64_of_b64,
    "base64-utf16": b64_utf16,
    "hex": hex_bytes,
    "hex-utf16": hex_utf16,
    "uuencode": uuencode,
}
DECODERS: dict[str, Callable[[str], str]] = {
    "base64": lambda text: _unb64(text).decode("utf-8"),
    "base64-urlsafe": lambda text: base64.urlsafe_b64decode(_padded(text, 4)).decode("utf-8"),
    "base32": lambda text: base64.b32decode(_padded(text, 8), casefold=True).decode("utf-8"),
    "base85": lambda text: base64.b85decode(_WHITESPACE.sub("", text)).decode("utf-8"),
    "ascii85": lambda text: _una85(text).decode("utf-8"),
    "base64-of-base64": lambda text: _unb64(_unb64(text).decode("ascii")).decode("utf-8"),
    "base64-utf16": lambda text: _utf16(_unb64(text)),
    "hex": lambda text: _unhex(text).decode("utf-8"),
    "hex-utf16": lambda text: _unhex(text).decode("utf-16-be"),
    "uuencode": lambda text: _unuu(text).decode("utf-8"),
}
