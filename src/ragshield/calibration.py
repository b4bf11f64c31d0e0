"""Thresholds at a target false-positive rate: THE one place ragshield chooses them.

Every calibrated detector (RAG-CT fitted, RetrievalAnomaly, ExtractionIntent, QueryShield)
and every benchmark calls these functions, so "1% FPR" means the same thing everywhere:

* scores are higher = more suspicious, and a detector blocks when `score >= threshold`;
* `threshold_at_fpr(benign, f)` returns a threshold that flags at most `floor(f * n)` of the
  `n` benign calibration scores (the empirical FPR on the calibration set is <= f). It sits
  half-way between the last benign score it must let through and the next larger one, so a
  new benign query scoring a hair above a calibration score is not flagged by construction;
* `ragshield.metrics.detection.tpr_at_fpr(benign, attack, f)` is the share of attack scores at
  or above that threshold.

With `n` calibration scores the smallest FPR that can be resolved is about `1 / n`: at a 1%
target use several hundred benign queries, otherwise the threshold lands above the largest
benign score and the real FPR on new traffic is unknown.

AUROC and TPR at a target FPR are computed by `ragshield.metrics.detection` (`auroc`,
`tpr_at_fpr`), whose `tpr_at_fpr` calls `threshold_at_fpr` here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from ragshield.errors import ConfigError


def as_scores(values: Iterable[float], *, what: str = "scores") -> np.ndarray:
    """A 1-D float64 array of finite scores.

    Raises:
        ConfigError: empty input, or a NaN / infinite score (the message says which).
    """
    array = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64).ravel()
    if array.size == 0:
        raise ConfigError(f"no {what} given; calibration needs at least one benign score")
    if not np.all(np.isfinite(array)):
        bad = int(np.flatnonzero(~np.isfinite(array))[0])
        raise ConfigError(f"{what}[{bad}] is {array[bad]}; scores must be finite numbers")
    return array


def _check_rate(target_fpr: float) -> float:
    if not isinstance(target_fpr, int | float) or not 0.0 < float(target_fpr) < 1.0:
        raise ConfigError(f"target_fpr must be a rate strictly between 0 and 1 (e.g. 0.01), got {target_fpr!r}")
    return float(target_fpr)


def allowed_false_positives(n: int, target_fpr: float) -> int:
    """How many of `n` benign calibration queries may be flagged at `target_fpr` (floor)."""
    # the epsilon keeps 0.01 * 300 == 3 from rounding down to 2 in binary floating point
    return math.floor(_check_rate(target_fpr) * n + 1e-9)


def threshold_at_count(benign_scores: Iterable[float], allowed: int) -> float:
    """A threshold that flags at most `allowed` benign scores (block when `score >= threshold`).

    The threshold is the midpoint between the (allowed+1)-th largest score and the next
    strictly larger score; with no larger score it is the next float above it.
    """
    scores = np.sort(as_scores(benign_scores, what="benign scores"))[::-1]
    allowed = max(0, min(int(allowed), scores.size - 1))
    kept = float(scores[allowed])  # the largest score that must NOT be flagged
    above = scores[:allowed][scores[:allowed] > kept]
    if above.size:
        middle = (kept + float(above.min())) / 2.0
        if middle > kept:
            return middle
    return float(np.nextafter(kept, math.inf))


def threshold_at_fpr(benign_scores: Iterable[float], target_fpr: float) -> float:
    """The threshold whose empirical false-positive rate on `benign_scores` is at most `target_fpr`.

    Args:
        benign_scores: suspicion scores (higher = more suspicious) of benign calibration queries.
        target_fpr: the false-positive rate to aim for, in (0, 1).

    Returns:
        A threshold; a detector blocks a query when its score is `>=` this value.

    Raises:
        ConfigError: no scores, a non-finite score, or a rate outside (0, 1).
    """
    scores = as_scores(benign_scores, what="benign scores")
    return threshold_at_count(scores, allowed_false_positives(scores.size, target_fpr))


def flag_rate(scores: Iterable[float], threshold: float) -> float:
    """The share of `scores` at or above `threshold` (FPR on benign scores, TPR on attack scores)."""
    array = np.asarray(list(scores) if not isinstance(scores, np.ndarray) else scores, dtype=np.float64)
    if array.size == 0:
        return float("nan")
    return float(np.mean(array >= threshold))


def union_thresholds(benign_score_columns: Sequence[Iterable[float]], target_fpr: float) -> tuple[list[float], float]:
    """Per-detector thresholds so that flagging when ANY detector fires meets `target_fpr`.

    Every detector gets the same per-detector allowance `a` of benign flags; `a` is the
    largest value whose union flags at most `floor(target_fpr * n)` benign queries. Because
    detectors' false positives overlap, `a` is usually larger than the Bonferroni share
    `floor(target_fpr * n / d)`, which is always feasible.

    Args:
        benign_score_columns: one sequence of benign calibration scores per detector, all
            over the same queries in the same order.
        target_fpr: the union's target false-positive rate.

    Returns:
        (thresholds, the union's empirical FPR on the calibration scores).
    """
    columns = [
        as_scores(column, what=f"benign scores of detector {number}")
        for number, column in enumerate(benign_score_columns)
    ]
    if not columns:
        raise ConfigError("union_thresholds needs at least one detector's scores")
    n = columns[0].size
    if any(column.size != n for column in columns):
        raise ConfigError("every detector must be scored on the same benign calibration queries")
    budget = allowed_false_positives(n, target_fpr)
    matrix = np.stack(columns, axis=1)
    best: tuple[list[float], float] | None = None
    for allowance in range(budget, -1, -1):
        thresholds = [threshold_at_count(column, allowance) for column in columns]
        union = float(np.mean(np.any(matrix >= np.asarray(thresholds), axis=1)))
        if union * n <= budget + 1e-9:
            best = (thresholds, union)
            break
    assert best is not None  # allowance 0 flags no calibration query
    return best
