"""An index of the knowledge base's n-token shingles, to find which chunks a response copies from.

A shingle is a run of `n` consecutive TGTB tokens (`\\w+`, case kept); two texts share a
shingle exactly when they share `n` consecutive tokens (TGTB's repeat@n criterion). Shingles
are stored as 64-bit hashes in one sorted numpy array (about 12 bytes per shingle, so an
18 MB email corpus fits in tens of MB), and looked up with binary search.

Hash: each token maps to a 64-bit value (blake2b), a shingle to the position-weighted sum
of its tokens' values modulo 2**64. Two different shingles collide with probability about
2**-64, which is negligible next to any corpus size here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ragshield.metrics.text import word_tokens

_POSITION_SEED = 0x9E3779B97F4A7C15


def _position_weights(size: int) -> np.ndarray:
    """`size` fixed odd 64-bit multipliers (splitmix64 sequence), one per shingle position."""
    weights = []
    state = _POSITION_SEED
    for _ in range(size):
        state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        value = state
        value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        weights.append((value ^ (value >> 31)) | 1)
    return np.array(weights, dtype=np.uint64)


class ShingleIndex:
    """Sorted hashes of every chunk's `n`-token shingles, with each shingle's document frequency.

    Args:
        texts: the chunk texts, in knowledge-base order (results are indices into it).
        n: tokens per shingle (TGTB's repeat threshold: 20).
    """

    def __init__(self, texts: Sequence[str], *, n: int = 20) -> None:
        if n < 1:
            raise ValueError("shingle length n must be >= 1")
        self.n = n
        self._codes: dict[str, int] = {}
        self._weights = _position_weights(n)
        per_chunk: list[np.ndarray] = []
        owners: list[np.ndarray] = []
        for position, text in enumerate(texts):
            hashes = self.hashes(text)
            per_chunk.append(hashes)
            owners.append(np.full(len(hashes), position, dtype=np.int32))
        self.chunk_hashes = per_chunk  # sorted unique hashes of each chunk
        all_hashes = np.concatenate(per_chunk) if per_chunk else np.zeros(0, dtype=np.uint64)
        all_owners = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int32)
        order = np.argsort(all_hashes, kind="stable")
        self._hashes = all_hashes[order]
        self._owners = all_owners[order]  # entries are unique per chunk, so a hash's run length = its df

    def _code(self, token: str) -> int:
        code = self._codes.get(token)
        if code is None:
            code = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
            self._codes[token] = code
        return code

    def hashes(self, text: str) -> np.ndarray:
        """Sorted unique shingle hashes of `text` (empty when it has fewer than `n` tokens)."""
        tokens = word_tokens(text)
        if len(tokens) < self.n:
            return np.zeros(0, dtype=np.uint64)
        codes = np.fromiter((self._code(token) for token in tokens), dtype=np.uint64, count=len(tokens))
        windows = np.lib.stride_tricks.sliding_window_view(codes, self.n)
        with np.errstate(over="ignore"):
            values = (windows * self._weights).sum(axis=1, dtype=np.uint64)
        return np.unique(values)

    def shared(self, hashes: np.ndarray, chunk: int) -> set[int]:
        """The shingle hashes among `hashes` that `chunk` also holds."""
        own = self.chunk_hashes[chunk]
        if not len(hashes) or not len(own):
            return set()
        return set(np.intersect1d(hashes, own, assume_unique=True).tolist())

    def chunks_sharing(self, hashes: np.ndarray, *, max_df: int) -> set[int]:
        """Chunks sharing at least one *rare* shingle (in at most `max_df` chunks) with the hashes.

        Common shingles (boilerplate such as an email disclaimer) are skipped: they say
        nothing about which chunk a text was copied from.
        """
        if not len(hashes) or not len(self._hashes):
            return set()
        left = np.searchsorted(self._hashes, hashes, side="left")
        right = np.searchsorted(self._hashes, hashes, side="right")
        found: set[int] = set()
        for start, end in zip(left.tolist(), right.tolist(), strict=True):
            if 0 < end - start <= max_df:
                found.update(self._owners[start:end].tolist())
        return found
