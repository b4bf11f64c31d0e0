"""The thirty-ninth round (session 54): the MiniLM second opinion refitted with every read set up to v47 and chat34.
What the round relies on: it trains on the sets the packaged e5 file trained on and chooses on four others, a refit
weighed otherwise stops it, and its candidate keeps every packaged MiniLM setting it does not choose, the either raise
included. FAKE files throughout."""

from __future__ import annotations

import dataclasses
import filecmp
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from intent_veto_fakes import fake_weights, round_module

from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights


def all_read_round() -> Any:
    return round_module("intent_minilm_all_read")


def test_it_trains_on_what_the_e5_file_trained_on_and_chooses_on_four_other_read_sets() -> None:
    round39 = all_read_round()
    import intent_sets as isets

    e5_trained = VetoWeights.load(shipped_weights("e5")).meta["heldout_sets_trained_on"]
    assert set(round39.TRAINED_ON) == set(e5_trained) and len(round39.TRAINED_ON) == 56
    assert round39.ROUND.trained_on == round39.TRAINED_ON and round39.ROUND.lane == "minilm"
    development = set(round39.DEVELOPMENT)
    assert development <= set(isets.HELDOUT_SETS) and not development & set(isets.UNREAD_JUDGES)
    assert not development & set(round39.TRAINED_ON)
    assert round39.ROUND.leave_out_trained and round39.ROUND.calibration_budget


def fitted_file(folder: Path, round39: Any, **weighed: float) -> Path:
    """A FAKE MiniLM fit with the round's training sets in its header (and `weighed` row weights)."""
    version = str(IntentModel.load().meta["model_version"])
    fit = fake_weights("minilm", tau=-1.5, version=version)  # a line and reading the candidate must not take
    meta = {"heldout_sets_trained_on": list(round39.TRAINED_ON), **weighed}
    dataclasses.replace(fit, raise_band=1.0, raise_tau=6.0, meta={**fit.meta, **meta}).save(folder / "MA.npz")
    return folder / "MA.npz"


def test_a_refit_without_the_enron_weight_stops_the_round(tmp_path: Path) -> None:
    round39 = all_read_round()
    folded = round39.fold(fitted_file(tmp_path, round39), tmp_path / "folded.npz")
    version = str(IntentModel.load().meta["model_version"])
    files = (folded, shipped_weights("minilm"), shipped_weights("e5"))
    with pytest.raises(SystemExit, match=r"folded.npz weighed .*Enron.* 1.0, not 5.0"):
        round39.er.check_refit(*files, round39.ROUND, version)
    weighed = round39.fold(fitted_file(tmp_path, round39, enron_weight=5.0), tmp_path / "folded5.npz")
    round39.er.check_refit(weighed, *files[1:], round39.ROUND, version)


def test_the_candidate_keeps_the_either_raise_and_takes_only_the_chosen_line_and_raise(tmp_path: Path) -> None:
    round39 = all_read_round()
    import intent_guard_loo as loo

    fit = fitted_file(tmp_path, round39, enron_weight=5.0)
    folded = VetoWeights.load(round39.fold(fit, tmp_path / "folded.npz"))
    packaged = VetoWeights.load(shipped_weights("minilm"))
    assert packaged.raise_either_tau is not None  # the either raise the refit must keep
    assert loo.settings_of(folded) == loo.settings_of(packaged)
    assert np.array_equal(folded.head_weight, VetoWeights.load(fit).head_weight)
    point = {"tau": 0.5, "band": 3.0, "raise_tau": 1.0}
    round39.er.write_candidate(tmp_path / "cand", tmp_path / "folded.npz", point, round39.ROUND)
    written = VetoWeights.load(tmp_path / "cand" / "intent_veto_minilm.npz")
    chosen = {"tau": 0.5, "raise_band": 3.0, "raise_tau": 1.0}
    assert loo.settings_of(written) == loo.settings_of(packaged) | chosen
    assert written.meta["development"] == list(round39.DEVELOPMENT)
    assert "--enron-weight 5" in written.meta["fitted"]
    assert written.meta["either_raise_chosen"] == packaged.meta["either_raise_chosen"]  # kept, and still says where
    assert filecmp.cmp(tmp_path / "cand" / "intent_veto_e5.npz", shipped_weights("e5"), shallow=False)


def test_the_other_lane_is_read_at_the_packaged_e5_settings() -> None:
    round39 = all_read_round()
    import intent_veto_raise as vr

    e5 = VetoWeights.load(shipped_weights("e5"))
    assert ((e5.tau,), (e5.raise_band,), (e5.raise_tau,)) == round39.E5_SETTINGS
    points = vr.lane_points([], "e5", 2.48, round39.ROUND.other_grid)
    assert vr.shipped_point(points, "e5", shipped_weights("e5"))["raise_tau"] == e5.raise_tau


def test_main_passes_the_round_its_switches_and_the_folded_refit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    round39 = all_read_round()
    seen: dict[str, Any] = {}

    def fake_round(argv: list[str], spent: Any, doc: Any) -> None:
        """A FAKE `intent_e5_refit.main`: records its switches and writes a sweep that chose nothing."""
        seen["argv"], seen["round"] = argv, spent
        (tmp_path / "out.json").write_text('{"chosen": null}')

    monkeypatch.setattr(round39.er, "main", fake_round)
    fit = fitted_file(tmp_path, round39, enron_weight=5.0)
    switches = ["--rows", "r.json", "--calib-rows=c.json", "--out", str(tmp_path / "out.json")]
    round39.main(["--fit", str(fit), "--candidate", str(tmp_path / "cand"), *switches])
    argv = seen["argv"]
    assert seen["round"] is round39.ROUND
    assert argv[:3] == ["--rows", "r.json", "--calib-rows=c.json"]
    assert argv[argv.index("--refit") + 1] == str(tmp_path / "cand_folded.npz")
    assert argv[argv.index("--candidate") + 1] == str(tmp_path / "cand")
    assert argv[argv.index("--before") + 1] == str(shipped_weights("minilm"))
    assert VetoWeights.load(tmp_path / "cand_folded.npz").raise_either_tau is not None  # folded before the round
