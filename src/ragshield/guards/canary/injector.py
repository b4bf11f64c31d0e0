"""`CanaryInjector`: puts fresh canaries into the retrieved chunks of one request.

The knowledge base is never touched: the injector returns a new `RetrievalResult` whose chunks are
copies with canaries in their text, and records which canaries went into which chunk in
`RetrievalResult.markers` (chunk id -> canaries), so a hit names the leaked chunk.

Density: a fixed number per chunk (`per_chunk: 2`, the paper's setting) leaves long stretches of a
long chunk without a canary, so a copy of such a stretch exposes none. `per_chunk: "auto"` places
them by the echo allowance `cover_chars` instead: every window of `cover_chars` + canary length
characters of the decorated chunk holds a whole canary (`auto_positions`), so any copied span longer
than the allowance carries one.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, replace

from ragshield.errors import ConfigError
from ragshield.guards.canary.canaries import DEFAULT_LENGTH, MIN_LENGTH, new_canaries
from ragshield.guards.canary.density import auto_positions, check_cover, word_ends, word_starts
from ragshield.types import RetrievalResult, ScoredChunk

PLACEMENTS = ("sentence-begin", "sentence-end", "intra-chunk")
AUTO = "auto"
DEFAULT_COVER_CHARS = 120  # the echo allowance in raw characters (context-echo passes its own)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_TERMINAL = re.compile(r"[.!?]+\s*$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the sentences of `text` (leading spaces excluded)."""
    spans = []
    for match in _SENTENCE.finditer(text):
        start, end = match.start(), match.end()
        while start < end and text[start].isspace():
            start += 1
        if start < end:
            spans.append((start, end))
    return spans or [(0, len(text))]


def _spread(count: int, slots: int) -> list[int]:
    """`count` slot indices in [0, slots) spread evenly, starting with slot 0."""
    return [min(slots - 1, (index * slots) // count) for index in range(count)]


@dataclass
class CanaryInjector:
    """A `ContextDecorator` that inserts fresh canaries into every retrieved chunk.

    Args:
        placement: `sentence-begin` (default; a canary opens a sentence, so a copy exposes it
            early), `sentence-end` (a canary closes a sentence, before its full stop) or
            `intra-chunk` (between two words at a random place).
        per_chunk: canaries per chunk, or `auto`. A number: they go into different sentences spread
            over the chunk, so copying any large part of a chunk copies a canary. `auto`: as many
            as it takes for every window of `cover_chars` + `length` characters of the decorated
            chunk to hold a whole canary (see `ragshield.guards.canary.density`), at sentence or
            word boundaries in the placement's flavour (intra-chunk: random boundaries).
        cover_chars: the copy allowance, in raw characters, that `auto` guarantees (default 120;
            a release guard passes its own allowance). Unused with a number.
        length: symbols per canary (see `ragshield.guards.canary.canaries`).
        name: the guard name used in verdicts.

    Raises:
        ConfigError: unknown placement, `per_chunk` neither `auto` nor >= 1, `length` too short,
            or `cover_chars` too small for `length`.
    """

    placement: str = "sentence-begin"
    per_chunk: int | str = 2
    length: int = DEFAULT_LENGTH
    name: str = "canary-rag"
    cover_chars: int = DEFAULT_COVER_CHARS

    def __post_init__(self) -> None:
        if self.placement not in PLACEMENTS:
            raise ConfigError(f"unknown canary placement {self.placement!r}; valid: {', '.join(PLACEMENTS)}")
        if self.per_chunk != AUTO and (
            isinstance(self.per_chunk, bool) or not isinstance(self.per_chunk, int) or self.per_chunk < 1
        ):
            raise ConfigError(f"per_chunk must be {AUTO!r} or a whole number of at least 1, got {self.per_chunk!r}")
        if self.length < MIN_LENGTH:
            raise ConfigError(f"canary length {self.length} is too short; use at least {MIN_LENGTH}")
        if self.per_chunk == AUTO:
            check_cover(self.cover_chars, self.length)

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        """A copy of `retrieval` with canaries in every chunk and their record in `markers`."""
        markers = dict(retrieval.markers)
        hits = []
        for hit in retrieval.hits:
            text, canaries = self.decorate_text(hit.chunk.text)
            hits.append(ScoredChunk(replace(hit.chunk, text=text), hit.similarity, hit.rank))
            markers[hit.chunk.id] = (*markers.get(hit.chunk.id, ()), *canaries)
        return replace(retrieval, hits=tuple(hits), markers=markers)

    def decorate_text(self, text: str) -> tuple[str, tuple[str, ...]]:
        """`text` with fresh canaries inserted, and those canaries (in text order)."""
        if self.per_chunk != AUTO:
            canaries = new_canaries(int(self.per_chunk), length=self.length)
            return self.insert(text, canaries), canaries
        after = self.placement == "sentence-end"
        boundaries = word_ends(text) if after else word_starts(text, {start for start, _ in sentence_spans(text)})
        positions = auto_positions(
            text,
            boundaries,
            cover_chars=self.cover_chars,
            length=self.length,
            randomise=self.placement == "intra-chunk",
            first=0 if self.placement == "sentence-begin" else None,
        )
        canaries = new_canaries(len(positions), length=self.length)
        pieces = [(at, f" {canary}" if after else f"{canary} ") for at, canary in zip(positions, canaries, strict=True)]
        return _apply(text, pieces), canaries

    def insert(self, text: str, canaries: tuple[str, ...]) -> str:
        """`text` with `canaries` inserted at this injector's placement (the fixed-count layout)."""
        if self.placement == "intra-chunk":
            return _insert_intra(text, canaries)
        spans = sentence_spans(text)
        inserts: list[tuple[int, str]] = []
        if self.placement == "sentence-begin":
            for canary, slot in zip(canaries, _spread(len(canaries), len(spans)), strict=True):
                inserts.append((spans[slot][0], f"{canary} "))
        else:
            slots = [len(spans) - 1 - slot for slot in _spread(len(canaries), len(spans))]
            for canary, slot in zip(canaries, slots, strict=True):
                start, end = spans[slot]
                terminal = _TERMINAL.search(text, start, end)
                at = terminal.start() if terminal else end
                while at > start and text[at - 1].isspace():
                    at -= 1
                inserts.append((at, f" {canary}"))
        return _apply(text, inserts)


def _insert_intra(text: str, canaries: tuple[str, ...]) -> str:
    """Canaries between words at random places (one per equal share of the text)."""
    gaps = [match.start() for match in re.finditer(r"\s+", text)]
    if not gaps:
        return _apply(text, [(len(text), " " + " ".join(canaries))])
    inserts = []
    share = max(1, len(gaps) // len(canaries))
    for index, canary in enumerate(canaries):
        lo = min(index * share, len(gaps) - 1)
        hi = min(lo + share, len(gaps))
        inserts.append((gaps[lo + secrets.randbelow(hi - lo)], f" {canary}"))
    return _apply(text, inserts)


def _apply(text: str, inserts: list[tuple[int, str]]) -> str:
    """Insert strings at positions of the original text (stable for equal positions)."""
    pieces = []
    previous = 0
    for at, piece in sorted(inserts, key=lambda item: item[0]):
        pieces.append(text[previous:at])
        pieces.append(piece)
        previous = at
    pieces.append(text[previous:])
    return "".join(pieces)
