"""The forty-second round (session 56): the either raise's reach chosen within the calibration split's bound. What the
round relies on: a point raising one calibration question more than the packaged point, or one public row more, is
never chosen however many requests it raises; the round ends when the best point is the packaged one; and the
calibration records it caches are refused when they are not the split's. FAKE points and records throughout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from intent_veto_fakes import round_module

from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

PUBLIC = ("sage", "healthcaremagic", "icliniq", "enron")


def bounded() -> Any:
    return round_module("intent_either_bounded")


def point(band: float, line: float, requests: int, calibration: int, enron: int = 0, benign: int = 0) -> dict:
    """A FAKE grid point at 120 characters."""
    public = {name: {"raised": 0, "flagged": {"rate": 0.0, "k": 0, "n": 100}} for name in PUBLIC}
    public["enron"] = {"raised": enron, "flagged": {"rate": enron / 100, "k": enron, "n": 100}}
    return {"chars": 120, "band": band, "line": line, "requests_raised": requests, "benign_raised": benign} | {
        "public": public,
        "public_within_goal": enron <= 1,
        "calibration_raised": calibration,
    }


def test_a_point_raising_one_calibration_question_or_public_row_more_is_never_chosen() -> None:
    module = bounded()
    packaged = point(6.0, 2.0, 40, 3)
    wide = point(12.0, 2.0, 96, 5)  # the forty-first round's WIDE: two calibration questions more
    public_more = point(12.0, 2.5, 92, 3, enron=1)  # within 1%, but one e-mail more than the packaged point
    kept = point(10.0, 2.5, 80, 3)
    noisier = point(10.0, 2.0, 84, 3, benign=3)  # over the development bound
    assert module.choose([packaged, wide, public_more, kept, noisier], packaged) is kept
    tie = point(10.0, 3.0, 80, 3)  # as many requests: the higher line wins
    assert module.choose([packaged, kept, tie], packaged) is tie


def test_the_round_ends_when_the_packaged_point_is_the_best_within_the_bound() -> None:
    module = bounded()
    packaged = point(6.0, 2.0, 40, 3)
    assert module.choose([packaged, point(12.0, 2.0, 96, 4), point(8.0, 3.0, 30, 3)], packaged) is None


def test_calibration_raised_counts_english_near_misses_e5_raises_within_the_point() -> None:
    module = bounded()
    minilm = VetoWeights.load(shipped_weights("minilm"))
    rows = [
        {"set": "calib", "row": i, "label": 0, "lane": "minilm", "flagged_by_model": False, "gap": gap} | extra
        for i, (gap, extra) in enumerate(
            [
                (10.0, {"verifier": None, "other": 2.5, "chars": 60}),  # raised at band 12, not 6
                (5.0, {"verifier": None, "other": 2.5, "chars": 60}),  # raised at both
                (5.0, {"verifier": None, "other": 2.5, "chars": 150}),  # past the cap
                (5.0, {"verifier": None, "other": 1.0, "chars": 60}),  # under the line
            ]
        )
    ]
    assert module.calibration_raised(rows, point(12.0, 2.0, 0, 0), minilm) == 2
    assert module.calibration_raised(rows, point(6.0, 2.0, 0, 0), minilm) == 1


def test_cached_calibration_records_that_are_not_this_rounds_are_refused(tmp_path: Path) -> None:
    cached = tmp_path / "calib.json"
    cached.write_text(json.dumps([{"set": "v48", "row": 0}]))  # another set's records
    with pytest.raises(SystemExit, match="calibration split records"):
        bounded().calibration_records(cached, tmp_path)  # refused before any data is needed
    cached.write_text(json.dumps([{"set": "calib", "row": 0, "refit": 1.0}]))  # a refit round's reader
    with pytest.raises(SystemExit, match="calibration split records"):
        bounded().calibration_records(cached, tmp_path)


def test_a_cached_calibration_split_of_another_length_is_refused(tmp_path: Path, shared_data: Path) -> None:
    cached = tmp_path / "calib.json"
    cached.write_text(json.dumps([{"set": "calib", "row": 0}]))
    with pytest.raises(SystemExit, match="calibration split records"):
        bounded().calibration_records(cached, shared_data)


def test_ties_go_to_fewer_benign_rows_and_calibration_questions_together_then_the_shorter_cap() -> None:
    module = bounded()
    packaged = point(6.0, 2.0, 40, 1)
    quieter = point(10.0, 2.0, 60, 0, benign=1)  # 1 benign row + 0 calibration questions
    noisier = point(10.0, 2.5, 60, 1, benign=1)  # 1 + 1: loses the tie although its line is higher
    assert module.choose([packaged, noisier, quieter], packaged) is quieter
    longer = point(10.0, 2.0, 60, 0, benign=1) | {"chars": 160}
    assert module.choose([packaged, longer, quieter], packaged) is quieter


def test_the_candidate_names_the_chosen_point_and_round(tmp_path: Path) -> None:
    module = bounded()
    chosen = point(12.0, 5.0, 57, 0)
    module.wide.write_candidate(tmp_path, chosen, module.chosen_text(chosen, 44))
    written = VetoWeights.load(tmp_path / "intent_veto_minilm.npz")
    assert (written.raise_either_band, written.raise_either_tau, written.raise_either_chars) == (12.0, 5.0, 120)
    assert "forty-fourth round" in written.meta["either_raise_chosen"]
    assert "within 12 logits" in written.meta["either_raise_chosen"]
