"""Canary strings: high-entropy, non-semantic markers drawn fresh for every request.

Alphabet and length (the defaults, and why):

* ``CANARY_ALPHABET`` = ``23456789abcdefghjkmnpqrstuvwxyz``: 31 symbols, lower-case ASCII letters
  and digits only. The look-alike symbols ``0 o 1 l i`` are left out so that every symbol survives
  the matcher's case and homoglyph folding unambiguously, and no symbol is a separator (the matcher
  drops punctuation and spaces inserted between symbols).
* ``DEFAULT_LENGTH`` = 12 symbols: 31**12 ~ 7.9e17 strings (59.4 bits). The chance that a given
  text position spells one given canary by accident is at most 31**-12 per matched form whatever
  the text's letter distribution (a uniformly random canary averages any fixed distribution out),
  so a 100 kB answer checked against 10 canaries in about 30 forms expects 4e-11 chance hits.
  A language model's tokenizer splits such a string into many short pieces (no vocabulary
  entry spells it), so a model only produces one by copying it from its context.

Canaries come from `secrets` (a CSPRNG), never from a seeded generator: an adversary who learns one
request's canaries learns nothing about the next request's.
"""

from __future__ import annotations

import math
import secrets

from ragshield.errors import ConfigError

CANARY_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
DEFAULT_LENGTH = 12
MIN_LENGTH = 8  # below ~40 bits, chance collisions in long outputs stop being negligible


def canary_bits(length: int = DEFAULT_LENGTH) -> float:
    """Entropy of one canary of `length` symbols, in bits."""
    return length * math.log2(len(CANARY_ALPHABET))


def new_canaries(n: int, *, length: int = DEFAULT_LENGTH) -> tuple[str, ...]:
    """`n` distinct fresh canaries of `length` symbols from `CANARY_ALPHABET`.

    Raises:
        ConfigError: `n` is negative or `length` is below `MIN_LENGTH`.
    """
    if n < 0:
        raise ConfigError(f"cannot draw {n} canaries; ask for 0 or more")
    if length < MIN_LENGTH:
        raise ConfigError(f"canary length {length} is too short to be collision-free; use at least {MIN_LENGTH}")
    drawn: list[str] = []
    seen: set[str] = set()
    while len(drawn) < n:
        canary = "".join(secrets.choice(CANARY_ALPHABET) for _ in range(length))
        if canary not in seen:  # a repeat has probability ~n**2 / 2**60; skip it rather than reason about it
            seen.add(canary)
            drawn.append(canary)
    return tuple(drawn)


def is_canary_shaped(text: str) -> bool:
    """True when `text` could be a canary: at least `MIN_LENGTH` symbols, all from `CANARY_ALPHABET`."""
    return len(text) >= MIN_LENGTH and all(symbol in CANARY_ALPHABET for symbol in text)
