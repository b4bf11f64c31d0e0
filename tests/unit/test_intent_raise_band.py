"""The twenty-first round's script (`benchmarks/intent_raise_band.py`): it reads near misses as far under the line as
its widest band, chooses on sets neither second opinion trained on, and its grid holds the shipped settings."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragshield.guards.intent_arrays import logit, sigmoid
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import intent_raise as ir
import intent_raise_band as band_round
import intent_sets as isets
import intent_veto_judge as judge
import intent_veto_raise as vr
import train_intent as ti


def test_the_round_chooses_on_read_sets_no_second_opinion_trained_on_and_not_on_its_judges() -> None:
    sets = set(band_round.DEVELOPMENT)
    assert len(sets) == 14 and all(name in isets.HELDOUT_SETS for name in sets)
    assert not sets & set(judge.veto_trained_sets()) and not sets & set(ti.TRAIN_HELDOUT)
    assert not sets & set(isets.UNREAD_JUDGES)


def test_the_grid_holds_each_lanes_shipped_settings_and_reaches_past_them() -> None:
    for lane in ENCODERS:
        weights = VetoWeights.load(shipped_weights(lane))
        assert band_round.shipped_line(lane) == weights.tau
        assert weights.raise_band in band_round.BANDS and weights.raise_tau in band_round.RAISE_TAUS
        assert max(band_round.BANDS) > weights.raise_band


def test_read_set_reads_near_misses_as_far_under_the_line_as_its_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    """A FAKE guard scores four queries 1, 3, 5 and 9 logits under its line and one above; the verifier is asked
    about the near misses within `reach` only, and a flag always."""
    threshold = 0.9
    line = logit(threshold)
    gaps = [1.0, 3.0, 5.0, 9.0, -1.0]
    model = SimpleNamespace(threshold=threshold, routes=lambda texts: [False] * len(texts))
    guard = SimpleNamespace(
        _model=lambda: model,
        scores=lambda texts: [SimpleNamespace(probability=sigmoid(line - gap)) for gap in gaps],
    )
    asked: list[tuple[list[int], bool]] = []

    def fake_lane_logits(guard: Any, texts: list[str], rows: list[int], *args: Any, **kwargs: Any) -> dict[int, float]:
        asked.append((rows, bool(kwargs.get("near_miss"))))
        return dict.fromkeys(rows, 0.5)

    monkeypatch.setattr(ir, "lane_logits", fake_lane_logits)
    examples = [isets.Example(f"q{i}", 1, "s", "en", "x") for i in range(len(gaps))]
    records = vr.read_set(guard, "v26", examples, highest_veto=2.5, reach=6.0)  # type: ignore[arg-type]
    assert asked == [([4], False), ([0, 1, 2], True)]
    assert [r["verifier"] for r in records] == [0.5, 0.5, 0.5, None, 0.5]
    vr.read_set(guard, "v26", examples, highest_veto=2.5)  # type: ignore[arg-type]
    assert asked[-1] == ([0, 1], True)  # the fourteenth round's reach: its widest band, 4
