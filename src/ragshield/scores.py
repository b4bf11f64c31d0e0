"""Detector scores as numbers: their input check and AUROC, below every layer that uses them.

A score is higher = more suspicious and attacks are the positives. Guards need AUROC while
they fit (RAG-CT chooses its temperature by it) and the metrics report it, so it lives here,
beneath both, rather than in `ragshield.metrics` (a guard must not import the metrics).
Scores may be +-inf (a guard that failed closed reports +inf); NaN is rejected because it
has no rank.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ragshield.errors import RagShieldError


class MetricInputError(RagShieldError, ValueError):
    """A metric got input it cannot score (empty sets, NaN scores, mismatched lengths)."""


def as_finite_or_inf(values: Iterable[float], *, what: str) -> list[float]:
    """`values` as floats; NaN raises (a NaN score has no rank), +-inf is kept.

    Raises:
        MetricInputError: a value is NaN or not a number.
    """
    result: list[float] = []
    for value in values:
        try:
            number = float(value)
        except (TypeError, ValueError) as error:
            raise MetricInputError(f"{what} must be numbers; got {value!r}") from error
        if math.isnan(number):
            raise MetricInputError(f"{what} contain NaN; drop or fix those scores before computing the metric")
        result.append(number)
    return result


def score_array(values: Iterable[float], what: str) -> np.ndarray:
    """`values` as a non-empty float64 array (NaN rejected, +-inf kept).

    Raises:
        MetricInputError: no values, or a NaN / non-numeric value.
    """
    array = np.asarray(as_finite_or_inf(values, what=what), dtype=np.float64)
    if array.size == 0:
        raise MetricInputError(f"no {what} given; the metric needs at least one benign and one attack score")
    return array


def auroc(benign_scores: Iterable[float], attack_scores: Iterable[float]) -> float:
    """Area under the ROC curve, attacks as positives: P(attack > benign) + 0.5 * P(tie).

    The Mann-Whitney U statistic over all (attack, benign) pairs, in [0, 1]: 1.0 ranks every
    attack above every benign query, 0.5 is chance, below 0.5 the score is inverted.

    Raises:
        MetricInputError: either side is empty, or a score is NaN.
    """
    benign = score_array(benign_scores, "benign scores")
    attack = score_array(attack_scores, "attack scores")
    from scipy.stats import rankdata  # imported on first use, so importing the guards does not load scipy

    ranks = rankdata(np.concatenate([attack, benign]))  # average ranks: a tie counts one half
    rank_sum = float(ranks[: attack.size].sum())
    return (rank_sum - attack.size * (attack.size + 1) / 2.0) / (attack.size * benign.size)
