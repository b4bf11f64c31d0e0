"""The encoding families the unnatural-output benchmark hides record snippets in (its recall section).

`encoders` gives the targeted families: standard-library encodings (base64, base32, base85,
uuencode, hex, ...), number and escape codes, Morse, NATO words, letters spread over lines, tags or
filler, regional-indicator and tag characters. `INFORMATIONAL` gives families the detector does not
target because they look like words (rot13, reversed text, leetspeak, doubled letters); the echo
guard compares those with the retrieved chunks.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import random
from collections.abc import Callable

MORSE = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz0123456789.,?'!/()&:;=+-_\"$@",
        [
            ".-",
            "-...",
            "-.-.",
            "-..",
            ".",
            "..-.",
            "--.",
            "....",
            "..",
            ".---",
            "-.-",
            ".-..",
            "--",
            "-.",
            "---",
            ".--.",
            "--.-",
            ".-.",
            "...",
            "-",
            "..-",
            "...-",
            ".--",
            "-..-",
            "-.--",
            "--..",
            "-----",
            ".----",
            "..---",
            "...--",
            "....-",
            ".....",
            "-....",
            "--...",
            "---..",
            "----.",
            ".-.-.-",
            "--..--",
            "..--..",
            ".----.",
            "-.-.--",
            "-..-.",
            "-.--.",
            "-.--.-",
            ".-...",
            "---...",
            "-.-.-.",
            "-...-",
            ".-.-.",
            "-....-",
            "..--.-",
            ".-..-.",
            "...-..-",
            ".--.-.",
        ],
        strict=True,
    )
)
NATO_WORDS = [
    "Alfa",
    "Bravo",
    "Charlie",
    "Delta",
    "Echo",
    "Foxtrot",
    "Golf",
    "Hotel",
    "India",
    "Juliett",
    "Kilo",
    "Lima",
    "Mike",
    "November",
    "Oscar",
    "Papa",
    "Quebec",
    "Romeo",
    "Sierra",
    "Tango",
    "Uniform",
    "Victor",
    "Whiskey",
    "Xray",
    "Yankee",
    "Zulu",
]
DIGIT_WORDS = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]


def _morse(text: str) -> str:
    words = [" ".join(MORSE[c] for c in word if c in MORSE) for word in text.lower().split()]
    return " / ".join(w for w in words if w)


def _nato(text: str) -> str:
    out = []
    for c in text.lower():
        if "a" <= c <= "z":
            out.append(NATO_WORDS[ord(c) - 97])
        elif c.isdigit():
            out.append(DIGIT_WORDS[int(c)])
    return " ".join(out)


def _regional(text: str) -> str:
    return "".join(
        chr(0x1F1E6 + ord(c) - 97) if "a" <= c <= "z" else c for c in text.lower() if c.isalnum() or c == " "
    )


def _filler_random(text: str, rng: random.Random) -> str:
    return "".join(c + rng.choice("bcdfghjklmnpqrstvwxz") for c in text)


def _uu(data: bytes) -> str:
    return "".join(binascii.b2a_uu(data[i : i + 45]).decode("ascii") for i in range(0, len(data), 45))


def encoders(rng: random.Random) -> dict[str, Callable[[str], str]]:
    """Targeted family name -> encoder of a text; `rng` draws the random filler letters."""

    def b(text: str) -> bytes:
        return text.encode("utf-8")

    return {
        "base64": lambda t: base64.b64encode(b(t)).decode(),
        "base64-wrapped": lambda t: base64.encodebytes(b(t)).decode(),
        "base32": lambda t: base64.b32encode(b(t)).decode(),
        "base85": lambda t: base64.b85encode(b(t)).decode(),
        "ascii85": lambda t: base64.a85encode(b(t)).decode(),
        "uuencode": lambda t: _uu(b(t)),
        "hex": lambda t: binascii.hexlify(b(t)).decode(),
        "hex-upper": lambda t: binascii.hexlify(b(t)).decode().upper(),
        "hex-spaced": lambda t: binascii.hexlify(b(t), " ").decode(),
        "hex-escapes": lambda t: "".join(f"\\x{c:02x}" for c in b(t)),
        "hex-0x-list": lambda t: ", ".join(f"0x{c:02x}" for c in b(t)),
        "percent-encoding": lambda t: "".join(f"%{c:02X}" for c in b(t)),
        "binary": lambda t: " ".join(f"{c:08b}" for c in b(t)),
        "decimal-codes": lambda t: " ".join(str(c) for c in b(t)),
        "decimal-commas": lambda t: ", ".join(str(c) for c in b(t)),
        "octal-escapes": lambda t: "".join(f"\\{c:03o}" for c in b(t)),
        "morse": _morse,
        "char-per-line": lambda t: "\n".join(t),
        "numbered-lines": lambda t: "\n".join(f"{i + 1}. {c}" for i, c in enumerate(t)),
        "html-tag-per-letter": lambda t: "".join(f"<b>{c}</b>" for c in t),
        "span-per-letter": lambda t: "".join(f"<span>{c}</span>" for c in t),
        "spaced-letters": lambda t: " ".join(t),
        "filler-fixed": lambda t: "".join(c + "x" for c in t),
        "filler-random": lambda t: _filler_random(t, rng),
        "filler-upper": lambda t: "".join(c + "Q" for c in t),
        "nato": _nato,
        "regional-indicators": _regional,
        "tag-characters": lambda t: "".join(chr(0xE0000 + ord(c)) for c in t if ord(c) < 128),
    }


# not targeted: these look like words; the echo guard compares them with the retrieved chunks
INFORMATIONAL: dict[str, Callable[[str], str]] = {
    "rot13": lambda t: codecs.encode(t, "rot13"),
    "reversed": lambda t: t[::-1],
    "leetspeak": lambda t: t.translate(str.maketrans("aeiostAEIOST", "4310574310S7")),
    "doubled-letters": lambda t: "".join(c * 2 for c in t),
}
