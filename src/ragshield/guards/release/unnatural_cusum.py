"""The unnatural-output scanner's CUSUM over one word's cached costs (its one-step word path).

`word_excursion` steps ``S = max(0, S + cost)`` over the letters of a word that cannot lift S to
the threshold by itself, outside a confirmed run, so it only starts, grows or ends an excursion,
never confirms or reports one (see `unnatural_scan.scan`, which owns the rest of the state).
"""

from __future__ import annotations

from collections.abc import Sequence


def word_excursion(
    costs: Sequence[float],
    s: float,
    peak: float,
    start: int,
    peak_end: int,
    flagged_end: int,
    pos: int,
    token_start: int,
    drop: float,
) -> tuple[float, float, int, int, int]:
    """The CUSUM over one word's costs (letters from raw offset `pos` on) outside a confirmed run,
    for a word that cannot lift ``S`` to the threshold: the scanner's step without confirming or
    reporting. Returns the new (S, peak, excursion start, peak end, reported end)."""
    for cost in costs:
        if cost > 0.0 or s > 0.0:
            t = s + cost
            if t <= 0.0:
                s = peak = 0.0
            else:
                if s <= 0.0:  # a new excursion starts at this word's token
                    start, peak, flagged_end = min(token_start, pos), 0.0, 0
                s = t
                if s > peak:
                    peak, peak_end = s, pos + 1
                elif s < peak - drop:
                    s = peak = 0.0
        pos += 1
    return s, peak, start, peak_end, flagged_end
