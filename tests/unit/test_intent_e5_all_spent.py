"""The thirty-first round's steps (session 47): EY, the e5 verifier refitted with every read set, at the packaged
settings. What the round relies on: it trains on every read set from v19 and chat6 on (less v21 and chat8) and on no
unread one, its settings are the packaged file's (nothing chooses them), the calibration bound and the public gate
fail closed, and the candidate folder says that nothing chose its settings. FAKE records throughout."""

from __future__ import annotations

import filecmp
from pathlib import Path
from typing import Any

import pytest
from intent_veto_fakes import refit_record, refit_round_refuses, round_module

LINE = 2.48  # v13's operating point in log-odds


def all_spent_round() -> Any:
    return round_module("intent_e5_all_spent")


def row(name: str, lane: str, gap: float, verifier: float | None, refit: float | None, at: int = 0) -> dict[str, Any]:
    """A FAKE benign record read by the packaged verifier at `verifier` and by EY at `refit` (`refit_record`)."""
    return refit_record(name, lane, 0, gap, verifier, refit, at)


def test_ey_trains_on_every_read_set_since_v19_and_on_no_unread_one() -> None:
    round31 = all_spent_round()
    import intent_sets as isets

    trained = set(round31.TRAINED_ON)
    assert len(trained) == len(round31.TRAINED_ON) == 38
    assert trained == {f"v{n}" for n in range(19, 39) if n != 21} | {f"chat{n}" for n in range(6, 26) if n != 8}
    assert trained <= set(isets.HELDOUT_SETS) and not trained & set(isets.UNREAD_JUDGES)
    assert round31.packaged_point("refit") == {"file": "refit", "tau": 2.5, "band": 4.0, "raise_tau": 3.0}


def test_the_calibration_bound_and_the_public_gate_fail_closed() -> None:
    round31 = all_spent_round()
    calm = [row(f"public-{name}", "e5", 6.0, None, None, at) for at, name in enumerate(("sage", "icliniq"))]
    calm += [row("public-healthcaremagic", "minilm", 6.0, None, None), row("public-enron", "minilm", 6.0, None, None)]
    result = round31.steps(calm, [row("calib", "e5", 0.5, 0.0, 1.0)], LINE)
    assert result["calibration_holds"] and result["public_holds"]
    # EY raises a benign calibration row (4.2 over its raise line 3) that the packaged file leaves (0.0)
    raised = round31.steps(calm, [row("calib", "e5", 0.5, 0.0, 4.2)], LINE)
    assert raised["calibration"] == {"rows": 1, "lane_rows": 1, "shipped": 0, "points": [1]}
    assert not raised["calibration_holds"]
    # a flag EY lets stand (3.5: over the operating point) in a bucket of one row: 100% flagged
    flagged = round31.steps([*calm[:1], row("public-enron", "e5", -0.5, 1.0, 3.5, 9)], [], LINE)
    assert flagged["public"]["enron"]["flagged"]["k"] == 1 and not flagged["public_holds"]
    assert flagged["public_as_shipped"]["enron"]["flagged"]["k"] == 0  # the packaged file lets it through
    # an empty bucket has no rate (NaN, not 0): the gate does not pass what was not read
    assert not round31.steps(calm[:1], [], LINE)["public_holds"]


def test_the_candidate_keeps_the_packaged_settings_and_says_nothing_chose_them(tmp_path: Path) -> None:
    round31 = all_spent_round()
    from ragshield.guards.intent_veto import shipped_weights
    from ragshield.guards.intent_veto_weights import VetoWeights

    round31.write_candidate(tmp_path, shipped_weights("e5"))
    written = VetoWeights.load(tmp_path / "intent_veto_e5.npz")
    assert (written.tau, written.raise_band, written.raise_tau) == (2.5, 4.0, 3.0)
    assert written.meta["development"] == [] and written.meta["line_and_raise_chosen"].startswith("not chosen")
    assert all(name in written.meta["fitted"] for name in round31.TRAINED_ON)
    assert filecmp.cmp(tmp_path / "intent_veto_minilm.npz", shipped_weights("minilm"), shallow=False)


def test_the_round_refuses_the_packaged_file_as_its_refit(tmp_path: Path) -> None:
    # the e5 file packaged since session 54 trained on eighteen sets more than the round's refit (EY) did
    refit_round_refuses(all_spent_round(), tmp_path, r"intent_veto_e5.npz trained on \[.*\], not on v19")


def test_a_fresh_reading_stops_once_the_packaged_file_trained_on_every_set_ey_did(tmp_path: Path) -> None:
    round31 = all_spent_round()
    import dataclasses

    from ragshield.guards.intent_model import IntentModel
    from ragshield.guards.intent_veto import shipped_weights
    from ragshield.guards.intent_veto_weights import VetoWeights

    refit = VetoWeights.load(shipped_weights("e5"))
    meta = {**refit.meta, "heldout_sets_trained_on": list(round31.TRAINED_ON)}  # a FAKE EY: EZ1B's arrays, EY's sets
    dataclasses.replace(refit, meta=meta).save(tmp_path / "EY.npz")
    assert str(IntentModel.load().meta["model_version"]) == refit.model_version
    files = ["--rows", tmp_path / "rows.json", "--calib-rows", tmp_path / "calib.json", "--out", tmp_path / "out.json"]
    with pytest.raises(SystemExit, match="compare EY with itself or with a later refit"):
        round31.main(["--refit", str(tmp_path / "EY.npz"), *map(str, files)])
    assert not (tmp_path / "out.json").exists()
