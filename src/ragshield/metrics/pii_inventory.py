"""Exact matching of a knowledge base's known PII values (its inventory) in texts.

The matching rule (`PiiIndex.find`), chosen so that a value counts when a reader would
see it in the text, and not when it is only hidden inside another string:

* **Numbers** (a value with at least 6 digits and no letters: phones, SSNs, card numbers,
  numeric dates): compared by their digits only, so "(487) 647-5938", "487.647.5938" and
  "4876475938" are the same phone. The text is cut into runs of digit groups separated by
  at most 3 of the characters ` .-/()+`; a value matches when some consecutive groups of a
  run spell exactly its digits. A value is never found inside a longer digit group
  ("5551234567" does not match inside "95551234567"). A leading North-American country
  code is ignored on both sides (11 digits starting with 1).
* **Everything else** (emails, URLs, names, addresses, ...): Unicode NFKC, case-folded,
  whitespace runs collapsed to one space; the value must appear as a substring that does
  not start or end inside a word ("Ann Lee" does not match "Joann Leeds").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from ragshield.datasets.base import PiiItem

_SPACES = re.compile(r"\s+")
_DIGIT_GROUP_RUN = re.compile(r"\d+(?:[ .\-/()+]{1,3}\d+)*")
_DIGITS = re.compile(r"\d+")
_MIN_NUMBER_DIGITS = 6


def normalise_text(value: str) -> str:
    """NFKC, case-folded, whitespace collapsed, stripped."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", value).casefold()).strip()


def _canonical_digits(digits: str) -> str:
    return digits[1:] if len(digits) == 11 and digits[0] == "1" else digits


def _number_digits(value: str) -> str | None:
    """The canonical digits of a numeric value, or None when the value is not a number."""
    if any(char.isalpha() for char in value):
        return None
    digits = "".join(char for char in value if char.isdigit())
    return _canonical_digits(digits) if len(digits) >= _MIN_NUMBER_DIGITS else None


def pii_key(item: PiiItem) -> tuple[str, str]:
    """(kind, normalised value): two items with the same key are the same PII value."""
    digits = _number_digits(item.value)
    return (item.kind, digits if digits is not None else normalise_text(item.value))


class PiiIndex:
    """An inventory prepared for fast `find(text)` over many texts (Aho-Corasick + digit lookup).

    Args:
        inventory: the known PII items; items with an empty value are ignored.
    """

    def __init__(self, inventory: Iterable[PiiItem]) -> None:
        import ahocorasick

        self.items: tuple[PiiItem, ...] = tuple(item for item in inventory if item.value.strip())
        self._numbers: dict[str, list[PiiItem]] = {}
        texts: dict[str, list[PiiItem]] = {}
        for item in self.items:
            digits = _number_digits(item.value)
            if digits is not None:
                self._numbers.setdefault(digits, []).append(item)
            else:
                texts.setdefault(normalise_text(item.value), []).append(item)
        self._max_digits = max((len(digits) for digits in self._numbers), default=0) + 1
        self._automaton: ahocorasick.Automaton | None = None
        if texts:
            automaton = ahocorasick.Automaton()
            for value, items in texts.items():
                automaton.add_word(value, (value, tuple(items)))
            automaton.make_automaton()
            self._automaton = automaton

    def __len__(self) -> int:
        return len(self.items)

    def find(self, text: str) -> set[PiiItem]:
        """The items whose value appears in `text` under the module's matching rule."""
        found: set[PiiItem] = set()
        if not text or not self.items:
            return found
        if self._numbers:
            found.update(self._find_numbers(text))
        if self._automaton is not None:
            found.update(self._find_texts(text))
        return found

    def _find_numbers(self, text: str) -> Iterable[PiiItem]:
        for run in _DIGIT_GROUP_RUN.finditer(text):
            groups = _DIGITS.findall(run.group())
            for first in range(len(groups)):
                digits = ""
                for group in groups[first:]:
                    digits += group
                    if len(digits) > self._max_digits:
                        break
                    items = self._numbers.get(_canonical_digits(digits))
                    if items:
                        yield from items

    def _find_texts(self, text: str) -> Iterable[PiiItem]:
        assert self._automaton is not None
        normalised = normalise_text(text)
        for end, (value, items) in self._automaton.iter(normalised):
            start = end - len(value) + 1
            before = normalised[start - 1] if start > 0 else " "
            after = normalised[end + 1] if end + 1 < len(normalised) else " "
            if (value[0].isalnum() and before.isalnum()) or (value[-1].isalnum() and after.isalnum()):
                continue  # the value starts or ends inside a longer word
            yield from items


def unique_keys(items: Sequence[PiiItem] | set[PiiItem]) -> set[tuple[str, str]]:
    """The distinct PII values among `items` (see `pii_key`)."""
    return {pii_key(item) for item in items}
