"""Reshuffles and near-copies: the characters kept, but padded, repeated, reordered or slightly edited.

`interleaved` and `doubled` decode exactly (every second character). `reordered-groups` and
`one-edit` lose information at random and do not decode; they model a copy that a verbatim
matcher should still recognise.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

FILLER = string.ascii_lowercase
EDIT_BLOCK = 12  # characters per random edit in `one-edit`


def interleaved(text: str, rng: random.Random) -> str:
    """A random filler letter after every character (`Jxoqhn` -> J o h n)."""
    return "".join(char + rng.choice(FILLER) for char in text)


def doubled(text: str, rng: random.Random) -> str:
    """Every character twice (`JJoohhnn`)."""
    del rng
    return "".join(char + char for char in text)


def reordered_groups(text: str, rng: random.Random) -> str:
    """The words cut into groups of 3-6 and the groups emitted in a shuffled order, one space apart.

    With two or more groups the order always differs from the original one.
    """
    words = text.split()
    groups: list[list[str]] = []
    start = 0
    while start < len(words):
        size = rng.randint(3, 6)
        groups.append(words[start : start + size])
        start += size
    order = list(range(len(groups)))
    rng.shuffle(order)
    if len(order) > 1 and order == sorted(order):
        order = order[1:] + order[:1]
    return " ".join(" ".join(groups[index]) for index in order)


def _other_char(char: str, rng: random.Random) -> str:
    pool = string.ascii_lowercase if not char.isupper() else string.ascii_uppercase
    return rng.choice([candidate for candidate in pool if candidate != char])


def one_edit(text: str, rng: random.Random) -> str:
    """One random edit per block of 12 characters: a character dropped, swapped with its neighbour or substituted.

    A swap of two equal characters would change nothing, so it becomes a substitution.
    """
    out: list[str] = []
    for start in range(0, len(text), EDIT_BLOCK):
        block = list(text[start : start + EDIT_BLOCK])
        at = rng.randrange(len(block))
        operation = rng.choice(("drop", "swap", "substitute"))
        if operation == "swap" and (at + 1 >= len(block) or block[at] == block[at + 1]):
            operation = "substitute"
        if operation == "drop":
            del block[at]
        elif operation == "swap":
            block[at], block[at + 1] = block[at + 1], block[at]
        else:
            block[at] = _other_char(block[at], rng)
        out.extend(block)
    return "".join(out)


ENCODERS: dict[str, Callable[[str, random.Random], str]] = {
    "interleaved": interleaved,
    "doubled": doubled,
    "reordered-groups": reordered_groups,
    "one-edit": one_edit,
}
DECODERS: dict[str, Callable[[str], str]] = {
    "interleaved": lambda text: text[::2],
    "doubled": lambda text: text[::2],
}
