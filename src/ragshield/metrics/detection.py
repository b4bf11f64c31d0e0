"""Detection quality of a guard or detector: AUROC, TPR at a target FPR, TPR / FPR of flags.

Convention everywhere: a score is higher = more suspicious, attacks are the positives, and
a detector flags when `score >= threshold`. Scores may be +-inf (a guard that failed closed
reports +inf); NaN is rejected because it has no rank.

Thresholds at a target FPR are chosen in one place only, `ragshield.calibration.threshold_at_fpr`;
`tpr_at_fpr` uses it, so "TPR at 1% FPR" means the same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ragshield.metrics.base import MetricInputError, as_finite_or_inf


def _scores(values: Iterable[float], what: str) -> np.ndarray:
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
    benign = _scores(benign_scores, "benign scores")
    attack = _scores(attack_scores, "attack scores")
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([attack, benign]))  # average ranks: a tie counts one half
    rank_sum = float(ranks[: attack.size].sum())
    return (rank_sum - attack.size * (attack.size + 1) / 2.0) / (attack.size * benign.size)


def tpr_at_fpr(benign_scores: Iterable[float], attack_scores: Iterable[float], fpr: float) -> float:
    """Share of attack scores flagged at the threshold calibrated on the benign scores for `fpr`.

    The threshold is `threshold_at_fpr(benign_scores, fpr)`: it flags at most
    `floor(fpr * n)` of the `n` benign scores; an attack is flagged when its score is `>=` it.

    Raises:
        MetricInputError: no attack scores, or a NaN attack score.
        ConfigError: (from calibration) no benign scores, a non-finite benign score, or
            `fpr` outside (0, 1).
    """
    from ragshield.calibration import threshold_at_fpr

    attack = _scores(attack_scores, "attack scores")
    threshold = threshold_at_fpr(list(benign_scores), fpr)
    return float(np.mean(attack >= threshold))


def detection_rates(benign_flags: Sequence[bool], attack_flags: Sequence[bool]) -> dict[str, float | int | None]:
    """TPR (flagged share of attack queries) and FPR (flagged share of benign queries).

    A rate is None when its side has no queries (e.g. a benign-only run has no TPR).
    Returns `{"tpr", "fpr", "n_attack", "n_benign"}`.
    """
    attack = [bool(flag) for flag in attack_flags]
    benign = [bool(flag) for flag in benign_flags]
    return {
        "tpr": sum(attack) / len(attack) if attack else None,
        "fpr": sum(benign) / len(benign) if benign else None,
        "n_attack": len(attack),
        "n_benign": len(benign),
    }
