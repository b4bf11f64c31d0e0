"""The fortieth round (session 55): MA with its point bounded by the public benign buckets too. What the round relies
on: a point that beats the packaged file on the development sets but flags one public row more than the packaged
file's records is never chosen, step 2 fails when the whole guard flags one public row more than the packaged guard,
and the round reads no set to choose. FAKE records throughout."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from intent_veto_fakes import round_module

from ragshield.guards.intent_veto import shipped_weights

PUBLIC = ("sage", "healthcaremagic", "icliniq", "enron")


def bound_round() -> Any:
    return round_module("intent_minilm_public_bound")


def record(name: str, label: int, gap: float, packaged: float, refit: float, lane: str = "minilm") -> dict[str, Any]:
    """A FAKE per-row record the model leaves `gap` logits under its line, as each MiniLM file reads it."""
    return {"set": name, "row": 0, "label": label, "lane": lane, "flagged_by_model": False, "gap": gap} | {
        "verifier": packaged,
        "refit": refit,
    }


def fake_records(enron_refit: float) -> list[dict[str, Any]]:
    """One request 3 logits under the line that only the refit raises (band 4, raise line 2), one quiet benign row per
    public bucket, and one Enron e-mail 3.5 logits under that the refit reads at `enron_refit`."""
    rows = [record("v48", 1, 3.0, 1.0, 3.0)]
    rows += [record(f"public-{name}", 0, 10.0, 0.0, 0.0) for name in PUBLIC]
    return [*rows, record("public-enron", 0, 3.5, 0.0, enron_refit)]


@pytest.fixture
def small_grid(monkeypatch: pytest.MonkeyPatch) -> Any:
    round40 = bound_round()
    # the packaged MiniLM point (line 0, band 4, raise line 2) and a narrow band that raises nothing
    monkeypatch.setattr(round40, "ROUND", dataclasses.replace(round40.ROUND, grid=((0.0,), (1.0, 4.0), (2.0,))))
    return round40


def sweep(round40: Any, enron_refit: float, calibration_refit: float = 0.0) -> dict[str, Any]:
    """The round's sweep of the FAKE records, with one calibration row 3.5 logits under the line that the packaged
    file reads at 0 and the refit at `calibration_refit`."""
    calibration = [record("calib", 0, 3.5, 0.0, calibration_refit)]
    return round40.sweep(fake_records(enron_refit), calibration, 1.0, shipped_weights("minilm"), shipped_weights("e5"))


def test_a_point_that_flags_one_public_row_more_is_never_chosen(small_grid: Any) -> None:
    # the refit reads the Enron e-mail at 5: band 4 raises it, so the point that catches the request is out
    swept = sweep(small_grid, enron_refit=5.0)
    assert swept["shipped"]["errors"] == 1 and swept["shipped"]["public"]["enron"] == 0
    assert [(p["band"], p["public"]["enron"]) for p in swept["kept"]] == [(1.0, 0)]
    assert swept["chosen"] is None  # band 1 misses the request too, so nothing beats the packaged file
    # read at 1, under the raise line, the same point is kept and chosen
    chosen = sweep(small_grid, enron_refit=1.0)["chosen"]
    assert (chosen["band"], chosen["errors"], chosen["public"]["enron"]) == (4.0, 0, 0)


def test_a_point_that_flags_one_calibration_row_more_is_never_chosen(small_grid: Any) -> None:
    # the refit raises the calibration row at band 4 (read at 5, over the raise line 2); the packaged file does not
    swept = sweep(small_grid, enron_refit=1.0, calibration_refit=5.0)
    assert swept["shipped"]["calibration"] == 0
    assert [(p["band"], p["calibration"]) for p in swept["points"]] == [(1.0, 0), (4.0, 1)]
    assert [p["band"] for p in swept["kept"]] == [1.0] and swept["chosen"] is None


def test_step_2_fails_when_any_bucket_gains_a_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    round40 = bound_round()
    candidate = tmp_path / "MB"
    mine = round40.judge.configuration_name(candidate)

    def read(extra: dict[str, int]) -> dict[str, Any]:
        return {
            name: {
                round40.routed.PACKAGED: {"benign_flagged": {"k": 3}},
                mine: {"benign_flagged": {"k": 3 + extra.get(name, 0)}},
            }
            for name in PUBLIC
        }

    assert round40.public_bound_holds(read({"enron": -1}), candidate)
    assert not round40.public_bound_holds(read({"icliniq": 1}), candidate)
    # the whole guard's step 2 holds only when both halves do: each bucket <= 1% and <= the packaged guard
    for steps_hold, extra, expected in ((True, {"enron": -1}, True), (True, {"sage": 1}, False), (False, {}, False)):
        readings = {"read": read(extra), "calibration_holds": True, "public_holds": steps_hold}
        monkeypatch.setattr(round40.routed, "steps", lambda data, folder, readings=readings: dict(readings))
        assert round40.whole_guard_steps(tmp_path, candidate)["public_holds"] is expected


def test_the_records_must_give_the_thirty_ninth_rounds_grid_again() -> None:
    round40 = bound_round()
    grid = [{"tau": 0.0, "band": 4.0, "raise_tau": 2.0, "errors": 3}, {"tau": 0.0, "band": 1.0, "raise_tau": 2.0}]
    read = [point | {"calibration": 0, "public": {}} for point in grid]
    assert round40.matches_round39(read, grid)
    assert not round40.matches_round39([read[0] | {"errors": 2}, read[1]], grid)  # another refit's readings
    assert not round40.matches_round39(read[:1], grid)


def test_it_reads_no_set_to_choose(tmp_path: Path) -> None:
    round40 = bound_round()
    rows, calibration = tmp_path / "rows.json", tmp_path / "calib.json"
    rows.write_text(json.dumps(fake_records(1.0)))  # v48 and the public buckets only: not the four sets
    calibration.write_text("[]")
    argv = ["--folded", str(tmp_path / "absent.npz"), "--candidate", str(tmp_path / "MB")]
    with pytest.raises(SystemExit, match="thirty-ninth round's --rows"):
        round40.main([*argv, "--rows", str(rows), "--calib-rows", str(calibration)])
    # the four sets' rows, but calibration records that are missing, empty or not the calibration split's
    rows.write_text(
        json.dumps([record(name, 0, 10.0, 0.0, 0.0) for name in round40.ROUND.choosing] + fake_records(1.0))
    )
    for written in (None, [], [record("v48", 0, 3.5, 0.0, 0.0)]):
        calibration.unlink(missing_ok=True)
        if written is not None:
            calibration.write_text(json.dumps(written))
        with pytest.raises(SystemExit, match="thirty-ninth round's --rows"):
            round40.main([*argv, "--rows", str(rows), "--calib-rows", str(calibration)])
