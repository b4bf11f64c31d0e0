"""PII leak counting, and the pattern scanner's inventory of a corpus without a known one.

Two separate questions, two tools:

* `PiiScanner.find(text)` (`ragshield.pii.patterns`, re-exported here) - *what looks like PII*
  in a text. Used to build an inventory for real corpora (`inventory_from_chunks`) and by the
  `pii-redact` output guard.
* `leaked_pii(text, inventory)` - *which known PII values of the knowledge base* appear in a
  text. This is exact matching against the inventory, not detection: it needs no
  presidio and also counts names and addresses, which patterns cannot find.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragshield.datasets.base import PiiItem
from ragshield.metrics.pii_inventory import PiiIndex, pii_key
from ragshield.pii.patterns import DEFAULT_KINDS, PiiMatch, PiiScanner
from ragshield.types import Chunk

__all__ = [
    "DEFAULT_KINDS",
    "PiiIndex",
    "PiiMatch",
    "PiiScanner",
    "inventory_from_chunks",
    "leaked_pii",
    "pii_key",
]


def inventory_from_chunks(chunks: Iterable[Chunk], *, scanner: PiiScanner | None = None) -> tuple[PiiItem, ...]:
    """A PII inventory for a corpus without a known one (real data), found by `scanner`.

    One item per distinct value (same normalisation as `leaked_pii`: digits for numbers,
    case-folded text otherwise), attributed to the first document it occurs in, so a
    sender address that appears in 500 emails is one item, not 500. Only pattern kinds
    are found (no names or postal addresses), so leak counts on real data are a lower bound.
    """
    scanner = scanner or PiiScanner()
    seen: set[tuple[str, str]] = set()
    items: list[PiiItem] = []
    for chunk in chunks:
        for match in scanner.find(chunk.text):
            item = PiiItem(match.kind, match.value, chunk.doc_id)
            key = pii_key(item)
            if key not in seen:
                seen.add(key)
                items.append(item)
    return tuple(items)


def leaked_pii(text: str, inventory: Sequence[PiiItem] | PiiIndex) -> set[PiiItem]:
    """The inventory items whose value appears in `text` (see `PiiIndex` for the matching rule).

    Pass a prebuilt `PiiIndex(inventory)` when checking many texts against one inventory.
    """
    index = inventory if isinstance(inventory, PiiIndex) else PiiIndex(inventory)
    return index.find(text)
