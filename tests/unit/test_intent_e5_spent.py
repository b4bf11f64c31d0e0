"""The thirtieth round's sweep (session 47): EX, the e5 verifier refitted with ten more spent development sets, chosen
in its own lane against the packaged e5 file. What the round relies on: EX's point is chosen within the packaged
file's benign and calibration bounds, there is no fallback (EX at the packaged settings never stands in), leaving a set
out counts the packaged file where the other sets choose nothing, the refit must have trained on exactly the
twenty-two spent sets, and none of them chooses. FAKE records throughout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from intent_veto_fakes import refit_record as row  # FAKE records: the packaged logit, then EX's
from intent_veto_fakes import refit_round_refuses, round_module

LINE = 2.48  # v13's operating point in log-odds


def spent_round() -> Any:
    return round_module("intent_e5_spent")


def test_the_sets_that_choose_are_read_sets_the_refit_never_trained_on() -> None:
    round30 = spent_round()
    import intent_e5_refit as er
    import intent_sets as isets

    assert len(round30.TRAINED_ON) == 22 and set(er.TRAINED_ON) < set(round30.TRAINED_ON)
    assert not set(round30.TRAINED_ON) & set(round30.SETS) and len(round30.SETS) == 12
    assert all(name in isets.HELDOUT_SETS for name in (*round30.TRAINED_ON, *round30.SETS))
    assert not set(round30.SETS) & set(isets.UNREAD_JUDGES)


def test_ex_is_chosen_within_the_packaged_files_bounds_and_leaving_a_set_out_counts_each_set_by_the_others() -> None:
    round30 = spent_round()
    benign_flag = row("v31", "e5", 0, -0.5, 3.0, 1.0)  # packaged: stands (3.0 over +2.5); EX lets it through
    request = row("chat18", "e5", 1, 0.5, 1.0, 4.5)  # packaged: not raised (under 3); EX raises it at 4 or under
    result = round30.sweep([benign_flag, request], [], LINE)
    assert result["packaged"]["errors"] == 2
    chosen = result["chosen"]
    assert (chosen["file"], chosen["tau"], chosen["band"], chosen["raise_tau"], chosen["errors"]) == (
        "refit",
        1.5,
        1.0,
        4.0,
        0,
    )
    per_set = result["leave_one_set_out"]["per_set"]
    # held out, the benign flag meets chat18's choice (line 1: it stands) and the request v31's (raise 6: missed)
    assert (per_set["v31"]["errors"], per_set["chat18"]["errors"]) == (1, 1)
    # a set with no row is counted by the others' choice, on nothing
    assert per_set["v36"]["chosen"]["file"] == "refit" and per_set["v36"]["errors"] == 0
    assert result["leave_one_set_out"]["errors"] == result["leave_one_set_out"]["shipped_errors"] == 2
    assert result["passes_development"] is False  # leaving a set out refuses the gain


def test_there_is_no_fallback_and_the_benign_and_calibration_bounds_hold() -> None:
    round30 = spent_round()
    # EX reads the benign flag at 2.6: over the operating point, so it stands at every grid line; the packaged file
    # lets it through. EX raises both requests: 1 error against 2, but a benign row more, so no point is eligible
    benign_flag = row("v31", "e5", 0, -0.5, 1.0, 2.6)
    requests = [row("chat18", "e5", 1, 0.5, 1.0, 4.5), row("v32", "e5", 1, 0.5, 1.0, 4.5)]
    result = round30.sweep([benign_flag, *requests], [], LINE)
    assert result["chosen"] is None and result["passes_development"] is False
    assert result["refit_at_packaged_settings"]["errors"] == 1  # better, but never a stand-in
    # leaving a set out: where the held set holds a request, the others choose nothing and the packaged file is
    # counted there; holding the benign flag out, the others choose EX, which flags it on the held set
    loso = result["leave_one_set_out"]
    files = [loso["per_set"][name]["chosen"]["file"] for name in ("v31", "chat18", "v32")]
    assert files == ["refit", "packaged", "packaged"]
    assert (loso["errors"], loso["shipped_errors"]) == (3, 2)
    # a benign calibration row EX reads at 4.2 (the packaged file does not raise it) leaves only raise line 6
    gain = [row("v31", "e5", 0, -0.5, 3.0, 1.0), row("chat18", "e5", 1, 0.5, 1.0, 6.5)]
    bounded = round30.sweep(gain, [row("calib", "e5", 0, 0.5, 0.0, 4.2)], LINE)
    assert bounded["calibration"]["points_within"] == 24
    assert {p["raise_tau"] for p in bounded["grid_within_calibration"]} == {6.0}
    assert bounded["chosen"]["raise_tau"] == 6.0


def test_the_opt_in_is_measured_on_exs_reading_of_english_near_misses() -> None:
    round30 = spent_round()
    english = [row("v33", "minilm", 1, 0.5, 0.0, 4.5), row("chat20", "minilm", 0, 0.5, 0.0, 3.9)]
    off, on = round30.sweep(english, [], LINE)["opt_in_english_lane"]
    assert (off["either"], off["requests_missed"], off["benign_flagged"]) == (None, 1, 0)
    assert (on["either"], on["requests_missed"], on["benign_flagged"]) == (4.0, 0, 0)


def test_a_refit_trained_on_other_sets_is_refused(tmp_path: Path) -> None:
    round30 = spent_round()
    import dataclasses

    import intent_e5_refit as er
    from ragshield.guards.intent_veto import shipped_weights
    from ragshield.guards.intent_veto_weights import VetoWeights

    packaged = VetoWeights.load(shipped_weights("e5"))
    version, files = packaged.model_version, (shipped_weights("e5"), shipped_weights("minilm"))

    def trained_on(sets: tuple[str, ...], name: str) -> Path:
        path = tmp_path / name
        dataclasses.replace(packaged, meta=packaged.meta | {"heldout_sets_trained_on": list(sets)}).save(path)
        return path

    er.check_refit(trained_on(round30.TRAINED_ON, "ex.npz"), *files, round30.SPENT_ROUND, version)
    # EC's twelve sets (the seventeenth round's refit) and the packaged file's thirty-eight (EY) are not EX's
    for other in (trained_on(er.TRAINED_ON, "ec.npz"), shipped_weights("e5")):
        with pytest.raises(SystemExit, match="not on v19"):
            er.check_refit(other, *files, round30.SPENT_ROUND, version)


def test_since_ey_shipped_the_round_refuses_to_read_its_development_sets_fitted(tmp_path: Path) -> None:
    refit_round_refuses(spent_round(), tmp_path, "packaged second opinion trained on v31")
