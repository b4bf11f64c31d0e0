"""Runs of an output symbol stream that reproduce a retrieved text: the release guard's matcher.

Every retrieved chunk (and every PII value to contain) becomes one or more `Source`s: its symbols in
one alphabet and direction (forward, reversed, Caesar differences, ...), with, for each symbol, its
position in the chunk's canonical `text` symbols, the index of the chunk word it belongs to, and
whether it is private. A `GramTable` indexes all sources by their `m`-symbol grams. Public text
(frequent across the knowledge base, or present in the user's own message) is matched like any
other but does not count towards a run's length, so a copy cannot hide behind a greeting.

A `Track` follows one output stream (one view of the answer) through a table in one pass: for each
new symbol it looks up the gram that ends there and extends the runs that continue a run of the
previous symbol at the next source position. A run is one contiguous copy of one source. Its length
is reported to a `RunSink` at every step, so the caller decides when it exceeds the allowance. Cost:
one dict lookup per symbol when nothing matches (the common case); per matching candidate a few
operations more. Nothing is rescanned, so the per-delta cost stays flat as the answer grows.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain, compress
from typing import Protocol

POSITION_BITS = 32


@dataclass(frozen=True, slots=True)
class Source:
    """One retrieved text in one alphabet and direction.

    `key` names what it came from (a chunk id, or a PII value's digest); `kind` is `chunk` or
    `pii`; `canon[i]` is the position of symbol i in the chunk's canonical `text` symbols (for the
    release budget); `words[i]` is the index of the chunk word symbol i belongs to. `private_words`
    and `private_symbols` count, cumulatively in this source's order, the private words started
    and the private symbols seen up to and including symbol i (public text: knowledge-base
    boilerplate and the user's own words, which a run may pass through without counting).
    """

    key: str
    kind: str
    symbols: str
    canon: Sequence[int]
    words: Sequence[int]
    private_words: Sequence[int]
    private_symbols: Sequence[int]

    @classmethod
    def build(
        cls, key: str, kind: str, symbols: str, canon: Sequence[int], words: Sequence[int], public: Sequence[bool]
    ) -> Source:
        """A source whose privacy comes from `public`, indexed by canonical position."""
        private_words: list[int] = []
        private_symbols: list[int] = []
        word_count = symbol_count = 0
        previous_word, previous_private = -1, False
        for position, word in zip(canon, words, strict=True):
            private = not public[position]
            if private:
                symbol_count += 1
                if word != previous_word or not previous_private:
                    word_count += 1
            previous_word, previous_private = word, private
            private_words.append(word_count)
            private_symbols.append(symbol_count)
        return cls(key, kind, symbols, canon, words, private_words, private_symbols)

    def is_private(self, index: int) -> bool:
        before = self.private_symbols[index - 1] if index else 0
        return self.private_symbols[index] > before

    def private_in(self, low: int, high: int, *, words: bool) -> int:
        """Private words (touched) or symbols in positions [low, high] of this source."""
        counts = self.private_words if words else self.private_symbols
        before = counts[low - 1] if low else 0
        inside = counts[high] - before
        if words and self.is_private(low) and low and counts[low] == before:
            inside += 1  # the run starts inside a private word counted before `low`
        return inside


def joined_owners(parts: list[Sequence[int]], length: int) -> list[int]:
    """The last `length` owners of `parts`, as one list (joined at C speed)."""
    return list(chain.from_iterable(parts))[-length:]


def owner_parts(parts: list[Sequence[int]], needed: int) -> list[Sequence[int]]:
    """The last owner parts that still cover a tail of `needed` symbols (kept lazy, not joined)."""
    kept: list[Sequence[int]] = []
    for part in reversed(parts):
        if needed <= 0:
            break
        kept.append(part)
        needed -= len(part)
    return kept[::-1]


class RunSink(Protocol):
    """Receives every step of every run (see `Track.feed`)."""

    def run(self, source: Source, first: int, last: int, start_raw: int, end_raw: int) -> None:
        """A run of `source` positions [first, last] was copied in the output [start_raw, end_raw)."""
        ...


@dataclass
class GramTable:
    """All sources indexed by their `m`-symbol grams (gram -> packed (source, end position) list).

    `probes` holds every `m - step + 1`-symbol gram of the sources: a run of at least `m` symbols
    contains one that ends at a multiple of `step` (in stream positions), so a `Track` need only
    test every `step`-th position of text that matches nothing, and misses no run (`Track.feed`).
    """

    m: int
    probed: bool = True  # build `probes` (a `NearTrack`'s table needs none)
    sources: list[Source] = field(default_factory=list)
    grams: dict[str, list[int]] = field(default_factory=dict)
    probes: set[str] = field(default_factory=set)

    @property
    def step(self) -> int:
        return max(1, self.m // 3)

    def add(self, source: Source) -> None:
        """Index every `m`-symbol gram of `source`."""
        index = len(self.sources)
        self.sources.append(source)
        symbols, m, grams = source.symbols, self.m, self.grams
        for end in range(m - 1, len(symbols)):
            grams.setdefault(symbols[end - m + 1 : end + 1], []).append((index << POSITION_BITS) | end)
        if not self.probed:
            return
        probe = m - self.step + 1
        self.probes.update(symbols[start : start + probe] for start in range(len(symbols) - probe + 1))

    def __bool__(self) -> bool:
        return bool(self.grams)


@dataclass
class Track:
    """One output stream followed through one `GramTable`.

    Args:
        table: the sources to match.
        sink: told about every run step.
        width: the most raw characters one symbol of this stream stands for (a decoded view's
            group), added to a symbol's start offset to bound the run's raw end.
    """

    table: GramTable
    sink: RunSink
    width: int = 1
    _tail: str = ""
    _tail_parts: list[Sequence[int]] = field(default_factory=list)
    _runs: dict[int, tuple[int, int]] = field(default_factory=dict)  # packed (source, pos) -> (start_raw, first)
    _count: int = 0  # symbols consumed so far
    _hot_until: int = -1  # stream position up to which every position is looked up

    def __post_init__(self) -> None:
        # read on every feed (the table's gram length and probe step are fixed once it is built)
        self._m, self._step = self.table.m, self.table.step
        self._probe = self._m - self._step + 1

    def feed(self, symbols: str, owners: Sequence[int]) -> None:
        """Consume new symbols; `owners[i]` is the raw offset where symbol i's source text starts
        (read only when a gram matches, so it may be computed lazily).

        Text that matches nothing (the common case) is decided at C speed on every `step`-th
        position's probe (`GramTable`): a run of `m` symbols starting at s holds the probe ending
        at the multiple of `step` in [s + m - step, s + m - 1], at or before its first gram's end.
        A probe hit makes this piece, and the next while a probe of this one may still start a run,
        be looked up position by position, so no run is missed and every run starts where it starts."""
        table = self.table
        if not symbols or not table.grams:
            return
        m, step, probe = self._m, self._step, self._probe
        tail = self._tail
        text = tail + symbols
        size = len(text)
        base = self._count - len(tail)  # stream position of text[0]
        self._count += len(symbols)
        runs = self._runs
        first = max(m - 1, len(tail))
        last = size - 1 - (base + size - 1) % step  # the last probe position of this piece
        if not runs and self._hot_until < base + first:
            start = max(0, len(tail) - probe + 1)  # where the first probe may start
            start += (-(base + start + probe - 1)) % step  # ... ending at a multiple of `step` in stream positions
            if table.probes.isdisjoint([text[i : i + probe] for i in range(start, size - probe + 1, step)]):
                first = size
            else:  # as if the last probe hit (the next piece may hold the end of its run's first gram)
                self._hot_until = base + last + step - 1
        elif last >= probe - 1 and text[last - probe + 1 : last + 1] in table.probes:
            self._hot_until = base + last + step - 1  # this piece is looked up whole; the next may not be
        if first < size:
            runs = self._look_up(text, first, runs, [*self._tail_parts, owners])
        self._runs = runs
        self._tail = text[-(m - 1) :]
        # the new owners alone usually cover the tail (a piece of m - 1 symbols or more)
        needed = len(self._tail)
        self._tail_parts = [owners] if len(symbols) >= needed else owner_parts([*self._tail_parts, owners], needed)

    def _look_up(
        self, text: str, first: int, runs: dict[int, tuple[int, int]], parts: list[Sequence[int]]
    ) -> dict[int, tuple[int, int]]:
        """Look up the gram ending at every position from `first` on (at C speed) and extend the
        runs through the hits; a miss ends every run."""
        m = self.table.m
        found = list(map(self.table.grams.get, [text[i - m + 1 : i + 1] for i in range(first, len(text))]))
        every: list[int] | None = None  # tail and new owners, joined only when a gram matches
        previous = first - 1
        for offset in compress(range(len(found)), found):
            index = first + offset
            if index != previous + 1:
                runs = {}
            if every is None:
                every = joined_owners(parts, len(text))
            runs = self._extend(runs, found[offset], every[index - m + 1], every[index] + self.width)  # type: ignore[arg-type]
            previous = index
        return runs if previous == len(text) - 1 else {}

    def fork(self) -> Track:
        """A copy that goes on from this state without changing it (`feed` replaces its state's
        lists and dicts, never changes them in place, so a shallow copy is enough)."""
        return copy.copy(self)

    def reset(self) -> None:
        """Forget the current runs and tail (the stream was interrupted, e.g. a decoder resync)."""
        if self._tail:
            self._tail, self._tail_parts, self._runs = "", [], {}
            self._count, self._hot_until = 0, -1

    def _extend(
        self, runs: dict[int, tuple[int, int]], found: list[int], gram_start: int, end_raw: int
    ) -> dict[int, tuple[int, int]]:
        extended: dict[int, tuple[int, int]] = {}
        sources, m, mask = self.table.sources, self.table.m, (1 << POSITION_BITS) - 1
        for packed in found:
            previous = runs.get(packed - 1)
            position = packed & mask
            start = previous if previous is not None else (gram_start, position - m + 1)
            extended[packed] = start
            self.sink.run(sources[packed >> POSITION_BITS], start[1], position, start[0], end_raw)
        return extended
