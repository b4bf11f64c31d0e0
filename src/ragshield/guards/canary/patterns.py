"""The exact patterns `CanaryMatcher` looks for in each stream, and the automata that hold them."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from ragshield.errors import missing_extra


@dataclass(frozen=True, slots=True)
class Pattern:
    """An exact pattern: the canary it encodes, its form (or `reversed` / `` for skeleton patterns)."""

    canary: str
    form: str
    text: str


def variants(canary: str) -> list[tuple[str, str]]:
    """(byte string variant, form prefix) pairs that encoded forms are built from."""
    pairs = [(canary, ""), (canary[::-1], "reversed+"), (canary.upper(), ""), (canary.upper()[::-1], "reversed+")]
    unique: dict[str, str] = {}
    for text, prefix in pairs:
        unique.setdefault(text, prefix)
    return list(unique.items())


def base64_patterns(text: str) -> list[str]:
    """Base64 substrings that encode `text` at byte alignments 0, 1 and 2 of any enclosing blob."""
    data = text.encode("ascii")
    patterns = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        start = (8 * offset + 5) // 6  # first character fed only by canary bits
        end = (8 * (offset + len(data))) // 6  # one past the last such character
        patterns.append(encoded[start:end])
    return patterns


def hex_patterns(text: str) -> list[str]:
    pairs = [f"{ord(char):02x}" for char in text]
    return ["".join(pairs), "0x".join(pairs), "x".join(pairs), "".join("00" + pair for pair in pairs)]


def automaton(patterns: dict[str, list[Any]]) -> Any:
    """One Aho-Corasick automaton over `patterns` (pattern -> its values, stored as a tuple)."""
    try:
        import ahocorasick
    except ImportError as error:  # pragma: no cover - a core dependency
        raise missing_extra("pyahocorasick", "models") from error
    built = ahocorasick.Automaton(ahocorasick.STORE_ANY)
    for pattern, values in patterns.items():
        built.add_word(pattern, tuple(values))
    if patterns:
        built.make_automaton()
    return built


def add_pattern(patterns: dict[str, list[Any]], text: str, value: Pattern) -> None:
    """Add an exact pattern; the first canary to claim a pattern keeps it."""
    values = patterns.setdefault(text, [])
    if not any(isinstance(item, Pattern) for item in values):
        values.append(value)
