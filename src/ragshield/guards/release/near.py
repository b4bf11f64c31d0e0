"""Near copies: runs of the answer that reproduce a retrieved chunk with an edit every few symbols.

A copy with a character dropped, swapped or substituted in every word or so (the `one-edit` view)
never forms the exact `m`-symbol grams that `Track` follows. `NearTrack` follows it as a chain of
short exact seeds (`q`-symbol grams, `q` = 6) of one chunk on one diagonal (source position minus
output position): a seed extends a chain when it comes at most `GAP` output symbols after the
chain's last seed, further along the chunk, and on a diagonal at most `DRIFT` away (each dropped
or inserted symbol moves the diagonal by one; a swap or substitution keeps it). So a chain survives
edits as close as every few symbols, while text that only shares words with the chunk (a topic, a
name) makes no chain: its seeds are not on one diagonal in order.

A chain spanning at least `min_span` chunk symbols is reported to the `RunSink` like an exact run
(source positions from its first to its last seed), so the allowance counts the chunk's private
words between them, edited or not. Cost: seeds ending at every `STEP`-th output position, one
C-level set test per fed piece when none matches (the common case); per matching seed a few dict
lookups. Nothing is rescanned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress

from ragshield.guards.release.tracks import POSITION_BITS, GramTable, RunSink, joined_owners, owner_parts

Q = 6  # seed length in folded symbols
# most output symbols from one seed's end to the next: with one edit per 12 symbols, at most two
# clean stretches in a row are too short for a seed (< 7 symbols), so seeds end at most ~26 apart
GAP = 28
DRIFT = 2  # most diagonal change between consecutive seeds (two drops or inserts)
STEP = 2  # seeds are looked up at every 2nd output position (a clean stretch of 7+ symbols holds one)
_DIAGONALS = (0, -1, 1, -2, 2)
_MASK = (1 << POSITION_BITS) - 1


def near_table() -> GramTable:
    """An empty table of chunk sources indexed by their `Q`-symbol seeds."""
    return GramTable(Q, probed=False)


@dataclass(slots=True)
class _Chain:
    first: int  # source position of the chain's first symbol
    last: int  # source position of the last seed's last symbol
    out: int  # output symbol index (over the whole stream) of that seed's last symbol
    start_raw: int  # raw offset where the chain's first seed starts


@dataclass
class NearTrack:
    """One output stream followed through a `NearTable` (see the module docstring).

    Args:
        table: the chunk sources (`near_table`).
        sink: told about every chain step once the chain spans `min_span` chunk symbols.
        min_span: chunk symbols a chain must span to be reported (the exact tracks' gram length).
    """

    table: GramTable
    sink: RunSink
    min_span: int = 12
    _tail: str = ""
    _tail_parts: list[Sequence[int]] = field(default_factory=list)
    _count: int = 0  # symbols consumed so far
    _chains: dict[tuple[int, int], _Chain] = field(default_factory=dict)  # (source, diagonal) -> chain

    def feed(self, symbols: str, owners: Sequence[int]) -> None:
        """Consume new symbols; `owners[i]` is the raw offset of symbol i (read only on a seed)."""
        if not symbols or not self.table:
            return
        q = self.table.m
        text = self._tail + symbols
        base = self._count - len(self._tail)  # stream index of text[0]
        first = max(q - 1, len(self._tail))
        first += (base + first) % STEP  # seeds end at even stream positions
        grams = [text[i - q + 1 : i + 1] for i in range(first, len(text), STEP)]
        parts = [*self._tail_parts, owners]
        if not self.table.grams.keys().isdisjoint(grams):
            every = joined_owners(parts, len(text))
            found = list(map(self.table.grams.get, grams))  # looked up at C speed; misses are None
            for offset in compress(range(len(grams)), found):
                index = first + offset * STEP
                for packed in found[offset]:  # type: ignore[union-attr]
                    self._seed(packed, base + index, every[index - q + 1], every[index] + 1)
        self._count += len(symbols)
        self._tail = text[-(q - 1) :]
        self._tail_parts = owner_parts(parts, len(self._tail))
        if len(self._chains) > 64:  # forget chains no seed can extend any more
            floor = self._count - GAP
            self._chains = {key: chain for key, chain in self._chains.items() if chain.out >= floor}

    def reset(self) -> None:
        """Forget the tail and the chains (the stream was interrupted)."""
        self._tail, self._tail_parts, self._chains = "", [], {}

    def _seed(self, packed: int, out: int, start_raw: int, end_raw: int) -> None:
        source, position = packed >> POSITION_BITS, packed & _MASK
        diagonal = position - out
        chains = self._chains
        chain = None
        for shift in _DIAGONALS:
            found = chains.get((source, diagonal + shift))
            if found is not None and found.last < position and 0 < out - found.out <= GAP:
                chain = found
                if shift:  # an edit moved the diagonal: the chain follows it
                    del chains[(source, diagonal + shift)]
                    chains[(source, diagonal)] = chain
                break
        if chain is None:
            chain = chains[(source, diagonal)] = _Chain(position - self.table.m + 1, position, out, start_raw)
        else:
            chain.last, chain.out = position, out
        if chain.last - chain.first + 1 >= self.min_span:
            self.sink.run(self.table.sources[source], chain.first, chain.last, chain.start_raw, end_raw)
