"""One risk scale for every verdict (`Verdict.risk`, `ragshield.types.risk_of`)."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from ragshield.guards.base import error_verdict, threshold_verdict
from ragshield.types import Verdict, risk_of

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(finite, finite, finite)
def test_risk_is_bounded_monotone_and_half_at_the_threshold(a: float, b: float, threshold: float) -> None:
    low, high = sorted((a, b))
    assert 0.0 <= risk_of(low, threshold) <= risk_of(high, threshold) <= 1.0
    assert risk_of(threshold, threshold) == 0.5


@given(finite, finite)
def test_risk_reaches_one_half_exactly_when_the_guard_flags(score: float, threshold: float) -> None:
    verdict = threshold_verdict("g", score, threshold, flagged_reason="f", passed_reason="p")
    assert (verdict.risk >= 0.5) == verdict.blocked


def test_failed_closed_guard_has_risk_one_and_every_verdict_serialises_its_risk() -> None:
    verdict = error_verdict("g", RuntimeError("boom"), fail_closed=True)
    assert verdict.risk == 1.0 and risk_of(math.nan, 0.5) == 1.0 and risk_of(-math.inf, 0.5) == 0.0
    data = json.loads(json.dumps(threshold_verdict("g", 0.7, 0.5, flagged_reason="f", passed_reason="p").to_dict()))
    assert 0.5 < data["risk"] < 1.0 and data["score"] == 0.7
    assert Verdict.from_dict(data).risk == data["risk"]


def test_the_service_reports_the_risk_next_to_the_raw_score() -> None:
    from ragshield.service.schemas import VerdictOut

    verdict = threshold_verdict("g", 2.0, 1.0, flagged_reason="f", passed_reason="p")
    shown = VerdictOut.of(verdict).model_dump()
    assert shown["score"] == 2.0 and shown["risk"] == verdict.risk > 0.99
