"""Letter ciphers: every letter replaced by another by a fixed rule (shift, mirror, digit look-alike).

`reversed`, `rot13`, `rot47` and `atbash` are their own inverses, so they decode exactly on any
text. `caesar` draws its shift (1..25) at random and `leetspeak` a random subset of its digit rules,
so neither decodes without knowing what was drawn. `shift_keys` (not a view) types a text one key
to the side on a US QWERTY keyboard, a cipher puzzles and attackers use.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

LEET_RULES: dict[str, str] = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"}


def shift_letters(text: str, shift: int) -> str:
    """ASCII letters moved `shift` places round the alphabet (case kept); everything else unchanged."""
    shift %= 26
    lower, upper = string.ascii_lowercase, string.ascii_uppercase
    table = str.maketrans(lower + upper, lower[shift:] + lower[:shift] + upper[shift:] + upper[:shift])
    return text.translate(table)


def reversed_text(text: str, rng: random.Random) -> str:
    """The characters in reverse order."""
    del rng
    return text[::-1]


def rot13(text: str, rng: random.Random) -> str:
    """Letters shifted by 13 (its own inverse)."""
    del rng
    return shift_letters(text, 13)


def caesar(text: str, rng: random.Random) -> str:
    """Letters shifted by a random 1..25."""
    return shift_letters(text, rng.randint(1, 25))


_ROT47 = str.maketrans(
    "".join(chr(code) for code in range(33, 127)), "".join(chr(33 + (code - 33 + 47) % 94) for code in range(33, 127))
)


def rot47(text: str, rng: random.Random) -> str:
    """Printable ASCII except the space (U+0021..U+007E) rotated by 47 (its own inverse)."""
    del rng
    return text.translate(_ROT47)


# the rows of a US QWERTY keyboard, unshifted and shifted: a key's neighbour on its row
KEYBOARD_ROWS: tuple[str, ...] = ("`1234567890-=", "qwertyuiop[]\\", "asdfghjkl;'", "zxcvbnm,./")
KEYBOARD_ROWS += ("~!@#$%^&*()_+", "QWERTYUIOP{}|", 'ASDFGHJKL:"', "ZXCVBNM<>?")


def _key_table(by: int) -> dict[int, str]:
    return {ord(row[i]): row[i + by] for row in KEYBOARD_ROWS for i in range(len(row)) if 0 <= i + by < len(row)}


_KEYS_RIGHT, _KEYS_LEFT = _key_table(1), _key_table(-1)


def shift_keys(text: str, by: int) -> str:
    """`text` typed with each hand one key to the right (`by` = 1) or left (-1) on a US QWERTY
    keyboard ("hello" -> "jr;;p" to the right); a key at the row's end, and what is not on the
    keyboard, stay as they are. Shifting by -1 undoes a shift by 1, except at the rows' ends."""
    if by not in (1, -1):
        raise ValueError(f"shift_keys shifts by 1 or -1, not {by}")
    return text.translate(_KEYS_RIGHT if by == 1 else _KEYS_LEFT)


_ATBASH = str.maketrans(
    string.ascii_lowercase + string.ascii_uppercase, string.ascii_lowercase[::-1] + string.ascii_uppercase[::-1]
)


def atbash(text: str, rng: random.Random) -> str:
    """Letters mirrored in the alphabet (a<->z, b<->y; its own inverse)."""
    del rng
    return text.translate(_ATBASH)


def leetspeak(text: str, rng: random.Random) -> str:
    """A random non-empty subset of a->4 e->3 i->1 o->0 s->5 t->7, applied to every such letter.

    When the drawn rules touch no letter of `text`, one rule that does is added, so the text changes
    whenever it holds any of the six letters.
    """
    rules = [letter for letter in LEET_RULES if rng.random() < 0.5] or [rng.choice(sorted(LEET_RULES))]
    present = sorted({char.lower() for char in text} & set(LEET_RULES))
    if present and not set(rules) & set(present):
        rules.append(rng.choice(present))
    table = str.maketrans({c: LEET_RULES[c] for c in rules} | {c.upper(): LEET_RULES[c] for c in rules})
    return text.translate(table)


ENCODERS: dict[str, Callable[[str, random.Random], str]] = {
    "reversed": reversed_text,
    "rot13": rot13,
    "caesar": caesar,
    "rot47": rot47,
    "atbash": atbash,
    "leetspeak": leetspeak,
}
DECODERS: dict[str, Callable[[str], str]] = {
    "reversed": lambda text: text[::-1],
    "rot13": lambda text: shift_letters(text, 13),
    "rot47": lambda text: text.translate(_ROT47),
    "atbash": lambda text: text.translate(_ATBASH),
}
