"""The thirty-second round's steps (session 48): the e5 raise's band and line chosen on the four read sets EY did not
train on. What the round relies on: its development sets are read sets the packaged e5 file never trained on, its
choice flags no more development benign rows than the packaged settings and makes fewer errors, and the calibration,
test-bucket and public bounds fail closed. FAKE records throughout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from intent_veto_fakes import refit_record, round_module

LINE = 2.48  # v13's operating point in log-odds


def far_round() -> Any:
    return round_module("intent_e5_far")


def row(name: str, label: int, gap: float, verifier: float | None, lane: str = "e5", at: int = 0) -> dict[str, Any]:
    """A FAKE record `gap` logits under the line (negative: the model flags it), read by its verifier at `verifier`."""
    return refit_record(name, lane, label, gap, verifier, None, at)


def point(band: float, raise_tau: float, benign: int, missed: int) -> dict[str, Any]:
    return {"tau": 2.5, "band": band, "raise_tau": raise_tau, "benign_flagged": benign, "requests_missed": missed} | {
        "errors": benign + missed
    }


def test_the_development_sets_are_read_and_a_rerun_with_a_file_that_trained_on_them_stops(tmp_path: Path) -> None:
    far = far_round()
    import intent_sets as isets
    from ragshield.guards.intent_veto import shipped_weights
    from ragshield.guards.intent_veto_weights import VetoWeights

    assert set(far.SETS) <= set(isets.HELDOUT_SETS) and not set(far.SETS) & set(isets.UNREAD_JUDGES)
    assert 4.0 in far.BANDS and 3.0 in far.RAISE_TAUS  # the packaged settings are a point of the grid
    # EY, the file the round read, never trained on them; the e5 file packaged since session 54 did, so its reading
    # of them would be fitted: the round stops before reading or writing anything
    trained = set(VetoWeights.load(shipped_weights("e5")).meta["heldout_sets_trained_on"])
    assert set(far.SETS) <= trained
    files = ["--rows", tmp_path / "rows.json", "--calib-rows", tmp_path / "c.json", "--test-rows", tmp_path / "t.json"]
    with pytest.raises(SystemExit, match="trained on v39, chat26, v40, chat27"):
        far.main([*map(str, files), "--out", str(tmp_path / "out.json")])
    assert not any(tmp_path.iterdir())


def test_the_choice_flags_no_more_benign_rows_and_makes_fewer_errors() -> None:
    far = far_round()
    shipped = point(4.0, 3.0, 8, 64)
    points = [
        shipped,
        point(12.0, 3.0, 12, 32),  # fewest errors, but 4 benign rows more: never eligible
        point(12.0, 3.5, 8, 37),
        point(8.0, 3.5, 8, 37),  # the same errors and benign rows: the smaller band goes first
        point(6.0, 6.0, 5, 80),  # fewer benign rows but more errors than the packaged settings
    ]
    order = far.ordered(points, shipped)
    assert [(p["band"], p["raise_tau"]) for p in order] == [(8.0, 3.5), (12.0, 3.5)]
    assert far.ordered([shipped], shipped) == []  # nothing better: the round ends at the packaged settings


def test_the_bounds_fail_closed() -> None:
    far = far_round()
    shipped, wide = point(4.0, 3.0, 0, 0), point(12.0, 3.5, 0, 0)
    public = [row(f"public-{name}", 0, 20.0, None, "minilm", at) for at, name in enumerate(far.ir.PUBLIC)]
    far_benign = row("calib", 0, 10.0, 3.6)  # beyond the packaged band, read at 3.6: the wide point raises it
    calm = far.gates(public, [row("calib", 0, 10.0, 1.0)], [], wide, shipped, LINE)
    assert calm["calibration_holds"] and calm["test_holds"] and calm["public_holds"]
    raised = far.gates(public, [far_benign], [], wide, shipped, LINE)
    assert raised["calibration"] == {"packaged": 0, "candidate": 1} and not raised["calibration_holds"]
    three = [row("test-own-hard", 0, 10.0, 3.6, at=at) for at in range(3)]
    test = far.gates(public, [], three, wide, shipped, LINE)
    assert test["test_buckets"] == {"e5_lane_rows": 3, "packaged": 0, "candidate": 3} and not test["test_holds"]
    assert far.gates(public, [], three[:2], wide, shipped, LINE)["test_holds"]  # within the allowance of 2
    # a routed Enron e-mail raised in a bucket of one row: 100% flagged
    enron = [*public[:3], row("public-enron", 0, 10.0, 4.0)]
    assert not far.gates(enron, [], [], wide, shipped, LINE)["public_holds"]
    # an empty bucket has no rate (NaN, not 0): the gate does not pass what was not read
    assert not far.gates(public[:3], [], [], wide, shipped, LINE)["public_holds"]


def test_the_round_compares_with_the_band_it_ran_with_not_the_one_it_shipped() -> None:
    far = far_round()
    from ragshield.guards.intent_veto import shipped_weights
    from ragshield.guards.intent_veto_weights import VetoWeights

    packaged = VetoWeights.load(shipped_weights("e5"))
    # the band the round shipped; its raise line 3.5 moved to 4.5 in the thirty-eighth round (session 54)
    assert (packaged.raise_band, packaged.raise_tau) == (12.0, 4.5)
    grid = [point(band, tau, 0, 0) for band in far.BANDS for tau in far.RAISE_TAUS]
    before = far.vr.shipped_point(grid, "e5")
    assert (before["band"], before["raise_tau"]) == far.vr.E5_RAISE_BEFORE_FAR == (4.0, 3.0)
