"""One-edit tolerance for the skeleton stream: a canary with one symbol dropped, inserted, substituted,
or two adjacent symbols swapped, still matches.

How, in linear time: each target (a canary or its reversal, folded) is cut into three pieces. One
edit changes at most two of them (an adjacent swap across a cut changes two), so an edited copy
still holds one piece intact. The pieces join the skeleton stream's automaton; when one occurs, the
few windows where the edited target could lie around it (start shifted by -1, 0 or +1 against the
piece, length n - 1, n or n + 1: nine windows) are checked once they are complete, each in O(n).
Text without a piece costs nothing beyond the automaton step it already pays.

A window found this way is reported only when no exact occurrence of the target overlaps it (that
one is the exact matcher's hit), and only once its next letter or digit has arrived, or
`lookahead_chars` raw characters have passed: a plain copy cut after its second-last symbol reads as
a deletion until its last symbol arrives, and a plain copy must stay `plain`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

PIECES = 3


@dataclass(frozen=True, slots=True)
class PieceRef:
    """One piece of a target: the folded target, where the piece starts in it, and its length."""

    target: str
    offset: int
    length: int


@dataclass(frozen=True, slots=True)
class EditHit:
    """A one-edit occurrence of `target` at skeleton-stream positions [start, end); `kind` names the edit."""

    target: str
    kind: str
    start: int
    end: int


def pieces(target: str) -> list[PieceRef]:
    """`target` cut into three pieces (lengths differ by at most one)."""
    size = len(target)
    cuts = [index * size // PIECES for index in range(PIECES + 1)]
    return [PieceRef(target, cuts[i], cuts[i + 1] - cuts[i]) for i in range(PIECES) if cuts[i + 1] > cuts[i]]


def edit_kind(text: str, target: str) -> str | None:
    """The one edit that turns `target` into `text`: `substitution`, `swap`, `deletion` or `insertion`.

    None when `text` equals `target` or is further than one edit (adjacent swap counted as one).
    """
    if len(text) == len(target):
        diffs = [index for index, (a, b) in enumerate(zip(text, target, strict=True)) if a != b]
        if len(diffs) == 1:
            return "substitution"
        if len(diffs) == 2 and diffs[1] == diffs[0] + 1:
            first, second = diffs
            if text[first] == target[second] and text[second] == target[first]:
                return "swap"
        return None
    if len(text) == len(target) - 1:
        return "deletion" if _one_dropped(target, text) else None
    if len(text) == len(target) + 1:
        return "insertion" if _one_dropped(text, target) else None
    return None


def _one_dropped(longer: str, shorter: str) -> bool:
    """True when dropping one character of `longer` gives `shorter` (len(longer) == len(shorter) + 1)."""
    index = 0
    while index < len(shorter) and longer[index] == shorter[index]:
        index += 1
    return longer[index + 1 :] == shorter[index:]


class OneEditTracker:
    """Checks the windows around piece occurrences in one skeleton stream (see the module docstring).

    Positions count skeleton characters from the start of the stream. Feed it the stream with
    `extend`, report piece occurrences with `trigger`, and collect hits with `decide`.

    Args:
        longest: the longest target, in symbols (sets how much of the stream is kept).
        lookahead_chars: raw characters after a window's end that stand in for its next letter or
            digit when none arrives.
    """

    def __init__(self, longest: int, lookahead_chars: int) -> None:
        self.lookahead_chars = lookahead_chars
        self._keep = 4 * (longest + 2)  # every window a live piece can start lies this close
        self._buffer = ""
        self._base = 0  # stream position of _buffer[0]
        self._waiting: dict[tuple[str, int, int], str | None] = {}  # window -> its edit once checked
        self._reported: dict[str, list[tuple[int, int]]] = {}

    @property
    def position(self) -> int:
        """Skeleton characters seen so far."""
        return self._base + len(self._buffer)

    @property
    def idle(self) -> bool:
        """No window is waiting to be checked or reported."""
        return not self._waiting

    def extend(self, new: str) -> None:
        """Append skeleton characters (the old part is cut first, so windows in `new` stay in view)."""
        if len(self._buffer) > 2 * self._keep:  # amortised: cut only when it has doubled
            self._cut()
        self._buffer += new

    def trigger(self, piece: PieceRef, end: int) -> None:
        """The piece occurred ending at stream position `end`: queue the windows it may belong to."""
        size = len(piece.target)
        anchor = end - piece.length - piece.offset  # the target's start if the edit is after the piece
        for shift in (-1, 0, 1):
            start = anchor + shift
            if start < 0:
                continue
            for length in (size - 1, size, size + 1):
                self._waiting.setdefault((piece.target, start, start + length), None)

    def decide(self, raw_end: Callable[[int], int], consumed: int, *, final: bool = False) -> list[EditHit]:
        """Hits that are complete and confirmed now; `final` at the end of the stream.

        Args:
            raw_end: raw offset one past the skeleton character at stream position `end - 1`.
            consumed: raw characters of the stream seen so far.
        """
        position = self.position
        ready: list[EditHit] = []
        for key, kind in list(self._waiting.items()):
            target, start, end = key
            if end > position:
                if final:
                    del self._waiting[key]
                continue
            if start < self._base:
                del self._waiting[key]
                continue
            if kind is None:
                kind = edit_kind(self._buffer[start - self._base : end - self._base], target)
                if kind is None or self._exact_near(target, start, end):
                    del self._waiting[key]
                    continue
                self._waiting[key] = kind
            if not final and end == position and consumed - raw_end(end) < self.lookahead_chars:
                continue  # its next letter may still complete an exact copy
            del self._waiting[key]
            if not self._exact_near(target, start, end):
                ready.append(EditHit(target, kind, start, end))
        hits = []
        # of overlapping windows of one occurrence, report the shortest (the fewest raw characters
        # that explain the match; the others differ by one neighbouring character)
        for hit in sorted(ready, key=lambda item: (item.end - item.start, item.start)):
            spans = self._reported.setdefault(hit.target, [])
            if any(start < hit.end and hit.start < end for start, end in spans):
                continue
            spans.append((hit.start, hit.end))
            hits.append(hit)
        self._trim()
        return sorted(hits, key=lambda item: item.end)

    def _exact_near(self, target: str, start: int, end: int) -> bool:
        """True when an exact occurrence of `target` overlaps [start, end)."""
        low = max(start - len(target) + 1, self._base) - self._base
        high = min(end - 1 + len(target), self.position) - self._base
        return self._buffer.find(target, low, high) != -1

    def _cut(self) -> None:
        cut = len(self._buffer) - self._keep
        self._buffer = self._buffer[cut:]
        self._base += cut

    def _trim(self) -> None:
        # keep the buffer short (amortised: cut only when it has doubled), and the reported spans
        # that can still overlap a window
        if len(self._buffer) > 2 * self._keep:
            self._cut()
        for target, spans in list(self._reported.items()):
            live = [span for span in spans if span[1] > self._base]
            if live:
                self._reported[target] = live
            else:
                del self._reported[target]
