"""Which parts of a retrieved chunk are not private: knowledge-base boilerplate and the user's own words.

A run of the answer that copies a greeting, a signature or a disclaimer that many records share
leaks nothing about any one record, and neither does text the user wrote themselves. Both are
decided on `m`-symbol grams of the folded `text` alphabet:

* `FrequentGrams.from_chunks`: document frequency of every gram over the knowledge base (one count
  per document, so a long record split into chunks does not make its own name frequent), kept when
  it reaches `min_df` documents. Grams are hashed with a 64-bit polynomial hash computed in numpy.
* `public_mask`: for one chunk, the symbol positions covered by a frequent gram or by a gram of the
  user's message.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ragshield.guards.release.fold import text_symbols
from ragshield.types import Chunk

_BASE = np.uint64(1_000_003)


def gram_hashes(symbols: str, m: int) -> np.ndarray:
    """The 64-bit hash of every `m`-symbol gram of `symbols`, in order (length len - m + 1)."""
    if len(symbols) < m:
        return np.zeros(0, dtype=np.uint64)
    codes = np.frombuffer(symbols.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    hashes = np.zeros(len(codes) - m + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(m):  # sum of code * BASE^(m-1-offset), wrapping mod 2^64
            hashes = hashes * _BASE + codes[offset : offset + len(hashes)]
    return hashes


@dataclass(frozen=True)
class FrequentGrams:
    """Hashes of the grams that occur in at least `min_df` documents of a knowledge base (sorted)."""

    m: int
    min_df: int
    hashes: np.ndarray

    @classmethod
    def from_chunks(cls, chunks: Iterable[Chunk], m: int, *, min_df: int | None = None) -> FrequentGrams:
        """Count document frequencies over `chunks`.

        Args:
            m: gram length in folded symbols.
            min_df: documents a gram must occur in to be public (default: 0.5% of the documents,
                at least 3).
        """
        per_doc: dict[str, list[np.ndarray]] = {}
        for chunk in chunks:
            per_doc.setdefault(chunk.doc_id, []).append(gram_hashes(text_symbols(chunk.text), m))
        if min_df is None:
            min_df = max(3, math.ceil(0.005 * len(per_doc)))
        unique = [np.unique(np.concatenate(parts)) for parts in per_doc.values() if parts]
        if not unique:
            return cls(m, min_df, np.zeros(0, dtype=np.uint64))
        values, counts = np.unique(np.concatenate(unique), return_counts=True)
        return cls(m, min_df, values[counts >= min_df])

    def contains(self, hashes: np.ndarray) -> np.ndarray:
        """A boolean per hash: is that gram frequent?"""
        if not len(self.hashes) or not len(hashes):
            return np.zeros(len(hashes), dtype=bool)
        index = np.searchsorted(self.hashes, hashes)
        index[index >= len(self.hashes)] = 0
        return np.asarray(self.hashes[index] == hashes)


def public_mask(symbols: str, m: int, frequent: FrequentGrams | None, user_grams: set[str]) -> list[bool]:
    """For each position of a chunk's folded `symbols`: is it covered by a public gram?"""
    mask = [False] * len(symbols)
    if len(symbols) < m:
        return mask
    flags = frequent.contains(gram_hashes(symbols, m)) if frequent is not None else None
    for end in range(m - 1, len(symbols)):
        if (flags is not None and flags[end - m + 1]) or (user_grams and symbols[end - m + 1 : end + 1] in user_grams):
            for position in range(max(0, end - m + 1), end + 1):
                mask[position] = True
    return mask


def grams_of(text: str, m: int) -> set[str]:
    """The `m`-symbol grams of a text (folded), e.g. the user's own message."""
    symbols = text_symbols(text)
    return {symbols[i : i + m] for i in range(len(symbols) - m + 1)}
