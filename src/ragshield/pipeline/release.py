"""Replace withheld spans of a piece of the answer with a marker, just before it is released.

`RagPipeline` releases the produced text piece by piece (after the monitors' holdback). Monitors
that implement `SpanRedactor` name spans of the produced text by raw offset; this module merges
them across monitors and writes one `WITHHELD_MARKER` per merged span. A span that continues from
the previous piece gets no second marker, so a long withheld run reads as one marker however the
stream was cut.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragshield.guards.base import WITHHELD_MARKER, Withheld


def merged_ranges(spans: Iterable[Withheld], start: int, end: int) -> list[tuple[int, int]]:
    """The union of `spans` clipped to [start, end), as sorted, disjoint, non-adjacent ranges."""
    ranges = sorted((max(span.start, start), min(span.end, end)) for span in spans if span.end > start)
    merged: list[tuple[int, int]] = []
    for low, high in ranges:
        if high <= low:
            continue
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


@dataclass
class Withholder:
    """Applies withheld ranges to consecutive pieces of one answer (state: is a marker open)."""

    marker: str = WITHHELD_MARKER
    withheld_chars: int = 0  # produced characters withheld so far (reported in the timings)
    _open_until: int = -1  # produced offset where the last written marker's range ended

    def apply(self, piece: str, start: int, spans: Iterable[Withheld]) -> str:
        """`piece` (the produced text [start, start + len(piece))) with its withheld ranges replaced."""
        end = start + len(piece)
        ranges = merged_ranges(spans, start, end)
        if not ranges:
            return piece
        parts: list[str] = []
        cursor = start
        for low, high in ranges:
            parts.append(piece[cursor - start : low - start])
            if low != self._open_until:  # not the continuation of the previous piece's span
                parts.append(self.marker)
            self.withheld_chars += high - low
            self._open_until = high
            cursor = high
        parts.append(piece[cursor - start :])
        return "".join(parts)
