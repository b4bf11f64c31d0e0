"""The thirty-eighth round (session 54): EZ1 with its routed raise's band and line chosen on v48 and chat35. What the
round relies on: it chooses on read sets EZ1 did not train on, it compares EZ1's points with the packaged file at its
packaged settings and tries only a point that flags no more benign rows and makes fewer errors, and the candidate
changes only the band and the raise line. FAKE files and FAKE records throughout."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from intent_veto_fakes import fake_weights, round_module

from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights


def band_round() -> Any:
    return round_module("intent_e5_band")


def test_it_chooses_on_read_sets_ez1_did_not_train_on() -> None:
    round38 = band_round()
    import intent_sets as isets

    assert round38.SETS == ("v48", "chat35")
    assert set(round38.SETS) <= set(isets.HELDOUT_SETS) and not set(round38.SETS) & set(isets.UNREAD_JUDGES)
    assert not set(round38.SETS) & set(round38.routed.TRAINED_ON)
    assert round38.routed.ROUTED_WEIGHTS[round38.REFIT_ROUND] == 1.0  # EZ1: no row weighed up


def record(label: int, gap: float, verifier: float | None, lane: str = "e5", name: str = "v48") -> dict[str, Any]:
    """A FAKE per-row record: `gap` logits under the line (negative: the model flags it), its verifier's logit."""
    return {"set": name, "row": 0, "label": label, "lane": lane, "flagged_by_model": gap < 0, "gap": gap} | {
        "verifier": verifier
    }


def test_only_points_fewer_errors_and_no_more_benign_flags_than_the_packaged_file_are_tried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    round38 = band_round()
    monkeypatch.setattr(round38, "packaged_settings", lambda: (2.5, 12.0, 3.5))
    monkeypatch.setattr(round38, "BANDS", (4.0, 12.0))
    monkeypatch.setattr(round38, "RAISE_TAUS", (3.5, 5.0))
    # the packaged file raises a benign near miss 10 logits under the line and misses nothing else
    packaged = [record(0, 10.0, 4.0), record(1, 3.0, 4.0), record(1, -1.0, 3.0)]
    # EZ1 reads the same rows: the benign row at 4.2, the request 3 logits under at 4.6
    refit = [record(0, 10.0, 4.2), record(1, 3.0, 4.6), record(1, -1.0, 3.0)]
    # neither counts: were either read, the benign row would be flagged at every band and no point would be tried
    refit += [record(0, 0.5, 9.0, lane="minilm"), record(0, 2.0, 9.0, name="public-enron")]
    swept = round38.sweep(refit, packaged)
    packaged_point = {"tau": 2.5, "band": 12.0, "raise_tau": 3.5, "benign_flagged": 1, "requests_missed": 0}
    assert swept["packaged"] == packaged_point | {"errors": 1}
    # band 4 spares the benign row and raises the request at 3.5 (0 errors) but not at 5; band 12 flags it
    assert [(p["band"], p["raise_tau"], p["errors"]) for p in swept["order"]] == [(4.0, 3.5, 0)]


def test_the_candidate_changes_only_the_band_and_the_raise_line(tmp_path: Path) -> None:
    round38 = band_round()
    import intent_guard_loo as loo

    version = str(IntentModel.load().meta["model_version"])
    refit = fake_weights("e5", tau=-1.0, version=version)
    meta = {"heldout_sets_trained_on": list(round38.routed.TRAINED_ON)}
    dataclasses.replace(refit, meta={**refit.meta, **meta}).save(tmp_path / "EZ1.npz")
    at_packaged = VetoWeights.load(round38.write_candidate(tmp_path / "c0", tmp_path / "EZ1.npz", None))
    written = VetoWeights.load(
        round38.write_candidate(tmp_path / "c1", tmp_path / "EZ1.npz", {"band": 6.0, "raise_tau": 4.5})
    )
    packaged = VetoWeights.load(shipped_weights("e5"))
    assert loo.settings_of(at_packaged) == loo.settings_of(packaged)
    assert loo.settings_of(written) == loo.settings_of(packaged) | {"raise_band": 6.0, "raise_tau": 4.5}
    assert np.array_equal(written.head_weight, refit.head_weight)
    assert "v48 and chat35" in written.meta["line_and_raise_chosen"]
    assert written.meta["development"] == ["v48", "chat35"]


def test_a_rerun_once_ez1b_is_packaged_stops_before_reading(tmp_path: Path) -> None:
    round38 = band_round()
    # the packaged e5 file is EZ1B since session 54: its raise was chosen on this round's sets
    assert VetoWeights.load(shipped_weights("e5")).meta["development"] == list(round38.SETS)
    files = ["--refit", "EZ1.npz", "--rows", "r.json", "--packaged-rows", "p.json", "--candidate", str(tmp_path / "c")]
    with pytest.raises(SystemExit, match="compare EZ1B with itself"):
        round38.main([*files, "--out", str(tmp_path / "out.json")])
    assert not any(tmp_path.iterdir())
