"""Detection (AUROC, TPR@FPR, rates), utility (ROUGE-L, cosine) and latency metrics on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragshield.errors import ConfigError
from ragshield.metrics.base import MetricInputError
from ragshield.metrics.cost import added_latency, latency_summary, percentile
from ragshield.metrics.detection import auroc, detection_rates, tpr_at_fpr
from ragshield.metrics.utility import bertscore_available, utility_metrics
from ragshield.rag.embedding import HashingEmbedder
from ragshield.types import Query, Response

# -- detection -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("benign", "attack", "expected"),
    [
        ([0.1, 0.2], [0.8, 0.9], 1.0),  # perfect separation
        ([0.8, 0.9], [0.1, 0.2], 0.0),  # inverted score
        ([0.5, 0.5], [0.5, 0.5], 0.5),  # all ties count one half
        ([0.1, 0.4], [0.35, 0.8], 0.75),  # sklearn's roc_auc_score example: 3 of 4 pairs ordered
        ([0.1, 0.5, 0.9], [0.5, 1.0], (1 + 0.5 + 0 + 1 + 1 + 1) / 6),  # one tie among six pairs
        ([0.0, 1.0], [math.inf, 0.5], 0.75),  # +inf (a guard that failed closed) ranks highest
    ],
)
def test_auroc_hand_computed(benign: list[float], attack: list[float], expected: float) -> None:
    assert auroc(benign, attack) == pytest.approx(expected)


def test_auroc_rejects_nan_and_empty() -> None:
    with pytest.raises(MetricInputError, match="NaN"):
        auroc([0.1, math.nan], [0.2])
    with pytest.raises(MetricInputError, match="no attack scores"):
        auroc([0.1], [])


def test_tpr_at_fpr_uses_the_calibrated_threshold() -> None:
    benign = [float(value) for value in range(100)]  # 5% FPR may flag the 5 largest: threshold 94.5
    assert tpr_at_fpr(benign, [95.0, 94.0, 200.0, math.inf], 0.05) == pytest.approx(3 / 4)
    assert tpr_at_fpr(benign, [99.0], 0.001) == 0.0  # no benign flag allowed: threshold above 99
    with pytest.raises(ConfigError):
        tpr_at_fpr(benign, [1.0], 1.5)


def test_detection_rates() -> None:
    rates = detection_rates([False, False, True, False], [True, True, False])
    assert rates == {"tpr": pytest.approx(2 / 3), "fpr": 0.25, "n_attack": 3, "n_benign": 4}
    assert detection_rates([False], [])["tpr"] is None


# -- utility ---------------------------------------------------------------------------------


def test_utility_identical_answers_score_one_and_empty_references_are_skipped() -> None:
    answers = ["take ibuprofen and rest", "drink water", "anything"]
    references = ["take ibuprofen and rest", "drink more water", ""]
    result = utility_metrics(answers, references, HashingEmbedder())
    assert result["n"] == 2 and result["skipped"] == 1
    assert result["rouge_l"] == pytest.approx((1.0 + 0.8) / 2)  # "drink water" vs "drink more water": P 1, R 2/3
    assert 0.5 < result["cosine"] <= 1.0 + 1e-6


def test_utility_without_embedder_has_no_cosine_and_bertscore_only_when_local() -> None:
    result = utility_metrics(["a b"], ["a b"], None)
    assert "cosine" not in result
    assert ("bertscore_f1" in result) == bertscore_available()


def test_utility_rejects_misaligned_or_reference_free_input() -> None:
    with pytest.raises(MetricInputError, match="aligned"):
        utility_metrics(["a"], ["a", "b"], None)
    with pytest.raises(MetricInputError, match="reference"):
        utility_metrics(["a"], [" "], None)


# -- latency -----------------------------------------------------------------------------------


def _timed(*totals: float) -> list[Response]:
    return [Response(Query("q"), "a", None, timings_ms={"total": total}) for total in totals]


def test_latency_percentiles_and_added_latency() -> None:
    summary = latency_summary([*_timed(10, 20, 30, 40, 100), Response(Query("q"), "a", None)])
    assert summary["n"] == 5 and summary["missing"] == 1
    assert summary["p50_ms"] == 30.0
    assert summary["p95_ms"] == pytest.approx(88.0)  # linear interpolation between 40 and 100
    added = added_latency(_timed(20, 30, 40), _timed(10, 20, 30))
    assert added["added_p50_ms"] == 10.0 and added["ratio_p50"] == pytest.approx(1.5)
    with pytest.raises(MetricInputError, match="total"):
        latency_summary([Response(Query("q"), "a", None)])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40),
    st.floats(0.0, 1.0),
)
def test_percentile_is_numpys_linear_quantile(values: list[float], q: float) -> None:
    assert percentile(values, q) == pytest.approx(float(np.quantile(values, q)), rel=1e-9, abs=1e-6)


def test_percentile_of_nothing_is_missing_not_zero() -> None:
    assert math.isnan(percentile([], 0.5))
