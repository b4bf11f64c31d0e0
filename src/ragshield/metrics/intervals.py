"""Confidence intervals for the rates ragshield reports (every rate comes with its n and a 95% CI)."""

from __future__ import annotations

import math


def wilson(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (default 95%) of a binomial rate `successes / total`.

    Returns (low, high) in [0, 1]; (nan, nan) when `total` is 0 (a missing rate, never 0).
    """
    if total <= 0:
        return (math.nan, math.nan)
    rate = successes / total
    denominator = 1 + z * z / total
    centre = (rate + z * z / (2 * total)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def rate_text(successes: int, total: int) -> str:
    """`12.5% [8.1, 18.7] (n=200)`, or `missing (n=0)`."""
    if total <= 0:
        return "missing (n=0)"
    low, high = wilson(successes, total)
    return f"{100 * successes / total:.1f}% [{100 * low:.1f}, {100 * high:.1f}] (n={total})"
