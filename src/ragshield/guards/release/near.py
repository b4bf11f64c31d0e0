"""Near copies: runs of the answer that reproduce a retrieved chunk with an edit every few symbols.

A copy with a character dropped, swapped or substituted in every word or so (the `one-edit` view)
never forms the exact `m`-symbol grams that `Track` follows. `NearTrack` follows it as a chain of
short exact seeds (`q`-symbol grams, `q` = 5, looked up at every output position) of one chunk on
one diagonal (source position minus output position): a seed extends a chain when it comes at most
`GAP` output symbols after the chain's last seed, further along the chunk, and on a diagonal at
most `DRIFT` away (each dropped or inserted symbol moves the diagonal by one; a swap or
substitution keeps it). So a chain survives edits as close as every few symbols, while text that
only shares words with the chunk (a topic, a name) makes no chain: its seeds are not on one
diagonal in order.

Five symbols match by chance often ("tions", "ethat"), so a chain counts only once it holds
either two exact matches of `STRONG` symbols or more (two seeds in a row), or one as long as
`min_span`, with its seeds covering at least half of the symbols it spans, standing in three
separate matches or matching `_MATCHED_APART` symbols; or four separate matches of any length.
A phrase the answer shares with a chunk plus a chance seed nearby is not a copy, nor are two
common words ("doctor ... there is") that happen to stand as far apart in both; a copy whose edits
leave clean stretches of only five symbols (four separate matches) or cluster between six-symbol
stretches (three) still counts. The five-symbol seeds carry a chain across the densest edits and
to the copy's first and last edited words, where six-symbol seeds would find nothing.

A counted chain spanning at least `min_span` chunk symbols is reported to the `RunSink` like an
exact run (source positions from its first to its last seed), so the allowance counts the chunk's
private words between them, edited or not. Cost: one C-level set test per fed piece when no seed
matches (the common case); per matching seed a few dict lookups. Nothing is rescanned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress

from ragshield.guards.release.tracks import POSITION_BITS, GramTable, RunSink, joined_owners, owner_parts

Q = 5  # seed length in folded symbols
STRONG = Q + 1  # symbols of an exact match that counts towards making a chain a copy (two seeds in a row)
# most output symbols from one seed's end to the next: with one edit per 12 symbols, at most two
# clean stretches in a row are too short for a seed (< 5 symbols), so seeds end at most ~24 apart
GAP = 28
DRIFT = 2  # most diagonal change between consecutive seeds (two drops or inserts)
_DIAGONALS = (0, -1, 1, -2, 2)
_MASK = (1 << POSITION_BITS) - 1


def near_table() -> GramTable:
    """An empty table of chunk sources indexed by their `Q`-symbol seeds."""
    return GramTable(Q, probed=False)


# a chain is a list [first, last, out, start_raw, run, strong, matched, groups]: the source
# position of its first symbol, of its last seed's last symbol, the output symbol index (over the
# whole stream) of that seed's last symbol, the raw offset where its first seed starts, the seeds
# in a row ending with the last one, the exact matches of `STRONG` symbols or more it holds
# (`_COUNTED` once it counts), the output symbols its seeds cover, and its separate matches (runs
# of seeds); chains are keyed by source and diagonal as one int (`_KEY_BITS` above the diagonal: a
# diagonal is far smaller than 2**40 either way)
_FIRST, _LAST, _OUT, _START_RAW, _RUN, _STRONG, _MATCHED, _GROUPS = range(8)
_COUNTED = 2
_GROUPS_APART = 3  # separate matches that make a chain count however little of its span they cover
_WEAK_GROUPS = 4  # separate matches that make a chain count with no match of `STRONG` symbols
# matched symbols that make two exact matches count however far apart (two clean stretches of 8
# with dense edits between; two common words, "doctor" and "there is", match 13)
_MATCHED_APART = 16
_KEY_BITS = 41


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
    _chains: dict[int, list[int]] = field(default_factory=dict)  # (source, diagonal) key -> chain
    _latest: int = -(1 << 62)  # output index of the last seed (no chain was extended after it)

    def feed(self, symbols: str, owners: Sequence[int]) -> None:
        """Consume new symbols; `owners[i]` is the raw offset of symbol i (read only on a seed)."""
        table = self.table.grams
        if not symbols or not table:
            return
        q = self.table.m
        tail = self._tail
        text = tail + symbols
        base = self._count - len(tail)  # stream index of text[0]
        first = max(q - 1, len(tail))
        grams = [text[i : i + q] for i in range(first - q + 1, len(text) - q + 1)]
        parts = [*self._tail_parts, owners]
        if not table.keys().isdisjoint(grams):
            every = joined_owners(parts, len(text))
            found = list(map(table.get, grams))  # looked up at C speed; misses are None
            for offset in compress(range(len(grams)), found):
                index = first + offset
                self._seeds(found[offset], base + index, every[index - q + 1], every[index] + 1)  # type: ignore[arg-type]
        self._count += len(symbols)
        self._tail = text[-(q - 1) :]
        needed = len(self._tail)
        self._tail_parts = [owners] if len(symbols) >= needed else owner_parts(parts, needed)
        if len(self._chains) > 64:  # forget chains no seed can extend any more
            floor = self._count - GAP
            self._chains = {key: chain for key, chain in self._chains.items() if chain[_OUT] >= floor}

    def reset(self) -> None:
        """Forget the tail and the chains (the stream was interrupted)."""
        self._tail, self._tail_parts, self._chains, self._latest = "", [], {}, -(1 << 62)

    def _seeds(self, found: list[int], out: int, start_raw: int, end_raw: int) -> None:
        """One seed (its packed source positions `found`) ending at output symbol `out`: extend the
        chain on a diagonal close by, or start one."""
        chains, q, min_span = self._chains, self.table.m, self.min_span
        # every chain ends at or before the last seed: none can take this one if that is too far back
        near_enough = out - self._latest <= GAP
        self._latest = out
        if near_enough:
            matches = [(packed, *self._chain_near(packed, out)) for packed in found]
            if len(matches) > 1:
                # a repeated gram ("gasgas" in "gas gas gas") sits at several source positions,
                # and after a dropped symbol a wrong one can lie within DRIFT of the chain too (the
                # period minus the drop): the one nearest the chain's diagonal extends it, the
                # others start chains of their own, so the copy is not cut in two runs
                matches.sort(key=lambda match: abs(match[1]))
        else:
            matches = [(packed, 0, None) for packed in found]
        for packed, shift, chain in matches:
            if chain is not None and chain[_OUT] == out:  # another position of this seed took it
                shift, chain = self._chain_near(packed, out)
            position = packed & _MASK
            key = ((packed >> POSITION_BITS) << _KEY_BITS) + position - out  # source and diagonal
            if chain is None:
                chain = chains[key] = [position - q + 1, position, out, start_raw, 1, 0, q, 1]
            else:
                if shift:  # an edit moved the diagonal: the chain follows it
                    del chains[key + shift]
                    chains[key] = chain
                run = chain[_RUN] + 1 if not shift and out - chain[_OUT] == 1 else 1
                exact = run + q - 1  # symbols of the exact match this seed ends
                if exact == STRONG:
                    chain[_STRONG] += 1
                if exact == min_span:  # one exact match as long as an exact run counts alone
                    chain[_STRONG] = _COUNTED
                chain[_MATCHED] += min(q, out - chain[_OUT])
                chain[_GROUPS] += run == 1
                chain[_LAST], chain[_OUT], chain[_RUN] = position, out, run
            span = chain[_LAST] - chain[_FIRST] + 1
            groups, matched = chain[_GROUPS], chain[_MATCHED]
            if span >= min_span and (
                groups >= _WEAK_GROUPS
                or (
                    chain[_STRONG] >= _COUNTED
                    and (2 * matched >= span or groups >= _GROUPS_APART or matched >= _MATCHED_APART)
                )
            ):
                source = self.table.sources[packed >> POSITION_BITS]
                self.sink.run(source, chain[_FIRST], chain[_LAST], chain[_START_RAW], end_raw)

    def _chain_near(self, packed: int, out: int) -> tuple[int, list[int] | None]:
        """The chain the seed at source position `packed`, ending at output symbol `out`, extends,
        and the diagonal shift to it (0 first, then 1 and 2 either way); `(DRIFT + 1, None)` when
        it extends none."""
        position = packed & _MASK
        key = ((packed >> POSITION_BITS) << _KEY_BITS) + position - out
        for shift in _DIAGONALS:
            near = self._chains.get(key + shift)
            if near is not None and near[_LAST] < position and 0 < out - near[_OUT] <= GAP:
                return shift, near
        return DRIFT + 1, None
