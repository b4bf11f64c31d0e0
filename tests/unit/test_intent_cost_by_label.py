"""What a routed query costs, benign and request apart (benchmarks/intent_generalisation.py, intent_report.py).

Session 49: the report gave routed queries' cost as one median over a sample mixing requests and benign phrasings;
a deployment needs to know what its benign users pay, since a request pays for the second opinion's reading.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import intent_generalisation as ig  # noqa: E402
import intent_report as ir  # noqa: E402


def test_the_mean_share_is_split_by_label_and_an_empty_side_is_missing_not_zero() -> None:
    split = ig.mean_by_label(np.array([0.1, 0.3, 2.0]), [0, 0, 1])
    assert split == {"benign": {"n": 2, "mean": pytest.approx(0.2)}, "requests": {"n": 1, "mean": 2.0}}
    no_requests = ig.mean_by_label(np.array([0.1]), [0])
    assert no_requests is not None and no_requests["requests"] == {"n": 0, "mean": None}
    assert ig.mean_by_label(np.array([0.1]), None) is None


def test_labels_that_do_not_match_the_measured_queries_are_refused() -> None:
    with pytest.raises(ValueError, match="2 labels for 1 measured queries"):
        ig.mean_by_label(np.array([0.1]), [0, 1])


def test_the_report_says_what_routed_benign_queries_and_requests_cost_and_shows_missing_as_missing() -> None:
    clause = ir._routed_by_label({"benign": {"n": 14, "mean": 0.5}, "requests": {"n": 0, "mean": None}})
    assert "50.0% for its 14 benign phrasings" in clause and "missing for its 0 requests" in clause
    assert ir._routed_by_label(None) == ""  # a file written before the split: nothing said, nothing invented
