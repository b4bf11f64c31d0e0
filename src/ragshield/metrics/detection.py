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

# auroc lives beneath the guards, which use it while fitting; re-exported here
from ragshield.calibration import threshold_at_fpr
from ragshield.scores import auroc
from ragshield.scores import score_array as _scores

__all__ = ["auroc", "detection_rates", "tpr_at_fpr"]


def tpr_at_fpr(benign_scores: Iterable[float], attack_scores: Iterable[float], fpr: float) -> float:
    """Share of attack scores flagged at the threshold calibrated on the benign scores for `fpr`.

    The threshold is `threshold_at_fpr(benign_scores, fpr)`: it flags at most
    `floor(fpr * n)` of the `n` benign scores; an attack is flagged when its score is `>=` it.

    Raises:
        MetricInputError: no attack scores, or a NaN attack score.
        ConfigError: (from calibration) no benign scores, a non-finite benign score, or
            `fpr` outside (0, 1).
    """
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
