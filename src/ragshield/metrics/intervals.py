"""Confidence intervals for what ragshield reports (every rate comes with its n and a 95% CI).

Rates (a share of queries: ASR, TPR, FPR) get the Wilson score interval; counts and means
over queries (ULC, distinct PII, recovered chunks, mean similarity) get a seeded percentile
bootstrap over the queries. Intervals are in the quantity's own unit (a share in [0, 1], a
count); an interval that cannot be computed is (nan, nan), never (0, 0).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence

import numpy as np


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


def interval_text(value: float, low: float, high: float, *, scale: float = 1.0, digits: int = 1, unit: str = "") -> str:
    """`12.5% [8.1, 18.7]` (`scale=100, unit="%"`), or `12 [7, 18]`; the bracket is left out
    when the interval is unknown (nan), so a missing interval never reads as [0, 0]."""
    point = f"{scale * value:.{digits}f}{unit}"
    if math.isnan(low) or math.isnan(high):
        return point
    return f"{point} [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"


def bootstrap_weights(n: int, *, resamples: int = 2000, seed: int = 0) -> np.ndarray:
    """How often each of `n` items is drawn in each of `resamples` resamples with replacement:
    an integer array (resamples x n) whose rows sum to `n`. Seeded, so reports are reproducible."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))


def bootstrap_mean(
    values: Sequence[float], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values` (same unit as the values).

    Resampling treats the values as exchangeable (e.g. one per query). Returns (nan, nan) when
    `values` is empty (a missing mean, never 0).
    """
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        return (math.nan, math.nan)
    weights = bootstrap_weights(array.size, resamples=resamples, seed=seed)
    return _percentiles(weights @ array / array.size, level)


def bootstrap_distinct(
    groups: Sequence[Iterable[Hashable]], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the number of distinct items over `groups` (one group per
    query, e.g. the chunk ids each response leaked): the spread of ULC, distinct PII or recovered
    chunks when the queries are resampled with replacement.

    For adaptive attacks, whose queries depend on earlier answers, this is the spread over the
    queries of this run, not over reruns of the attack. Returns (nan, nan) for no groups.
    """
    if not groups:
        return (math.nan, math.nan)
    columns: dict[Hashable, int] = {}
    cells = [(row, columns.setdefault(item, len(columns))) for row, group in enumerate(groups) for item in group]
    if not columns:
        return (0.0, 0.0)  # nothing found in any query: every resample finds nothing too
    incidence = np.zeros((len(groups), len(columns)), dtype=np.float64)
    for row, column in cells:
        incidence[row, column] = 1.0
    weights = bootstrap_weights(len(groups), resamples=resamples, seed=seed)
    found = ((weights @ incidence) > 0).sum(axis=1)
    return _percentiles(found.astype(np.float64), level)
