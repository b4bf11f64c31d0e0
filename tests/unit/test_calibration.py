"""Threshold calibration: the one rule every calibrated detector and benchmark uses."""

from __future__ import annotations

import numpy as np
import pytest

from ragshield.calibration import (
    allowed_false_positives,
    flag_rate,
    threshold_at_fpr,
    union_thresholds,
)
from ragshield.errors import ConfigError
from ragshield.metrics.detection import tpr_at_fpr


def test_threshold_flags_at_most_the_target_share_of_benign_scores() -> None:
    benign = np.arange(100, dtype=float)  # 0..99
    threshold = threshold_at_fpr(benign, 0.05)
    assert flag_rate(benign, threshold) == pytest.approx(0.05)
    # midpoint between the largest allowed-through score (94) and the next (95)
    assert threshold == pytest.approx(94.5)


def test_threshold_never_exceeds_target_with_ties() -> None:
    benign = [1.0] * 50 + [0.0] * 50  # half the benign scores tie at the top
    threshold = threshold_at_fpr(benign, 0.1)
    assert flag_rate(benign, threshold) <= 0.1
    assert threshold > 1.0


def test_floor_of_allowed_false_positives_is_exact_for_round_rates() -> None:
    assert allowed_false_positives(300, 0.01) == 3
    assert allowed_false_positives(99, 0.01) == 0


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 2])
def test_rate_outside_unit_interval_is_a_clear_error(bad: float) -> None:
    with pytest.raises(ConfigError, match="target_fpr"):
        threshold_at_fpr([0.1, 0.2], bad)


def test_non_finite_and_empty_scores_are_rejected() -> None:
    with pytest.raises(ConfigError, match="finite"):
        threshold_at_fpr([0.1, float("nan")], 0.1)
    with pytest.raises(ConfigError, match="no benign scores"):
        threshold_at_fpr([], 0.1)


def test_tpr_at_fpr_uses_the_calibration_threshold() -> None:
    benign = np.linspace(0, 1, 201)
    attack = np.array([0.5, 0.99, 1.5, 2.0])
    assert tpr_at_fpr(benign, attack, 0.01) == pytest.approx(0.5)  # 1.5 and 2.0 only


def test_union_thresholds_meet_the_target_for_the_union() -> None:
    rng = np.random.default_rng(0)
    shared = rng.normal(size=1000)
    columns = [shared + 0.3 * rng.normal(size=1000), shared + 0.3 * rng.normal(size=1000), rng.normal(size=1000)]
    thresholds, union = union_thresholds(columns, 0.02)
    matrix = np.stack(columns, axis=1)
    assert union == pytest.approx(np.mean(np.any(matrix >= thresholds, axis=1)))
    assert union <= 0.02
    # correlated detectors leave room: each gets more than the Bonferroni share
    assert all(flag_rate(c, t) > 0.02 / 3 for c, t in zip(columns, thresholds, strict=True))
