"""What a routed query costs, benign and request apart (benchmarks/intent_generalisation.py, intent_report.py).

Session 49: the report gave each path's cost as a median; the mean carries what the median hides (the second opinion's
reads of flags and near misses), and a deployment needs it for its benign users and for requests apart.
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


def test_the_report_says_what_routed_queries_cost_on_average_for_each_side_the_sample_has() -> None:
    clause = ir._routed_by_label({"benign": {"n": 25, "mean": 2.5}, "requests": {"n": 0, "mean": None}})
    assert clause == "; the mean is 250.0% over its 25 benign phrasings"  # no side invented for 0 requests
    both = ir._routed_by_label({"benign": {"n": 14, "mean": 0.5}, "requests": {"n": 3, "mean": 1.0}})
    assert both == "; the mean is 50.0% over its 14 benign phrasings and 100.0% over its 3 requests"
    assert ir._routed_by_label(None) == ""  # a file written before the split: nothing said, nothing invented


def test_the_cost_sample_draws_the_same_texts_as_before_with_their_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    import intent_sets as isets

    def rows(prefix: str, n: int, lang: str = "en", label: int = 0, source: str = "own") -> list[isets.Example]:
        return [isets.Example(f"{prefix} {i}", label, "direct", lang, source) for i in range(n)]

    tests = {name: rows(name, 30, source="public") for name in ("sage", "healthcaremagic", "icliniq", "enron")}
    calib = rows("benign es", 40, "es") + rows("benign en", 10) + rows("public es", 5, "es", source="sage")
    held = rows("request", 20, label=1) + rows("held benign", 5)
    monkeypatch.setattr(ig.isets, "heldout", lambda path: held)
    seen: dict[str, object] = {}
    monkeypatch.setattr(ig, "cost", lambda model, english, **kw: seen.update(english=english, **kw) or {})
    monkeypatch.setattr(ig, "e5_deployment_cost", lambda *args, **kw: None)
    ig.measured_cost(isets.Corpus(calib=calib, test=tests), None, 40)
    # the draw as it was before the labels were kept (session 48)
    rng = random.Random(5)
    pool = [(e.text, 0) for name in ("sage", "healthcaremagic", "icliniq", "enron") for e in tests[name]]
    pool += [(e.text, 1) for e in held if e.label == 1]
    others = [e.text for e in calib if e.lang != "en" and e.source == "own"]
    sample, other = rng.sample(pool, 40), rng.sample(others, 10)
    assert seen["english"] == [text for text, _ in sample] and seen["labels"] == [label for _, label in sample]
    assert seen["other_languages"] == other and seen["other_labels"] == [0] * 10
