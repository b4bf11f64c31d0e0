"""The twenty-eighth round's sweep (session 46): EW, the e5 verifier refitted with Enron's e-mails weighed up, chosen
in its own lane (against the packaged e5 file) and as the reader of English near misses (`raise_either_tau`). What the
round relies on: each lane's point is chosen by its round's rule on EW's logits, the packaged file is counted on its
own, EW at the packaged settings stands in when no grid point beats the packaged file, the calibration split bounds
both lanes, and leaving a set out counts each set by the others' choice. FAKE records throughout."""

from __future__ import annotations

from typing import Any

from intent_veto_fakes import refit_record as row  # FAKE records: the packaged logit, then EW's
from intent_veto_fakes import round_module

LINE = 2.48  # v13's operating point in log-odds


def enron_round() -> Any:
    return round_module("intent_e5_enron")


def test_the_e5_lane_is_chosen_on_ews_logits_and_falls_back_to_ew_at_the_packaged_settings() -> None:
    round28 = enron_round()
    points, bound = round28.e5_candidates([], LINE)
    assert (
        bound == {"packaged": 0, "refit_at_packaged_settings": 0, "points_within": 144}
        and points[0]["file"] == "packaged"
        and points[1] == points[0] | {"file": "refit"}
    )
    benign_flag = row("v26", "e5", 0, -0.5, 3.0, 1.0)  # packaged: stands (3.0 over +2.5); EW lets it through
    request = row("chat13", "e5", 1, 0.5, 1.0, 4.5)  # packaged: not raised (under 3); EW raises it at 4 or under
    assert round28.e5_errors([benign_flag, request], points[0], LINE)["errors"] == 2
    chosen = round28.e5_choose([benign_flag, request], points, LINE)
    # ties to the lower line (1.0 lets nothing under 1.0 through), the smaller band, the higher raise line
    assert (chosen["file"], chosen["tau"], chosen["band"], chosen["raise_tau"], chosen["errors"]) == (
        "refit",
        1.5,
        1.0,
        4.0,
        0,
    )
    # the packaged file lets it through; EW reads it at 3.5, over the operating point, so no grid line lets it through
    worse = row("v26", "e5", 0, -0.5, 1.0, 3.5)
    fallback = round28.e5_choose([worse], points, LINE)
    assert fallback["file"] == "refit" and (fallback["tau"], fallback["band"], fallback["raise_tau"]) == (2.5, 4.0, 3.0)
    assert fallback["errors"] == 1  # counted as EW reads it: the round's conditions see the loss
    # a benign calibration row EW reads at 4.2 (the packaged file does not raise it) leaves only raise line 6
    bounded, bound = round28.e5_candidates([row("calib", "e5", 0, 0.5, 0.0, 4.2)], LINE)
    assert {p["raise_tau"] for p in bounded[2:]} == {6.0}
    assert bound == {"packaged": 0, "refit_at_packaged_settings": 1, "points_within": 24}  # the fallback may exceed it
    assert round28.e5_choose([benign_flag, request], bounded, LINE)["raise_tau"] == 6.0


def test_both_conditions_are_counted_on_the_two_lanes_together_and_leaving_a_set_out_can_refuse_a_gain() -> None:
    round28 = enron_round()
    benign_flag = row("v26", "e5", 0, -0.5, 3.0, 1.0)
    request = row("chat13", "e5", 1, 0.5, 1.0, 4.5)
    english = row("v27", "minilm", 1, 0.5, 0.0, 5.5)  # MiniLM leaves it; EW reads it at 5.5
    result = round28.sweep([benign_flag, request, english], [], LINE)
    assert result["shipped"]["errors"] == 3 and result["chosen"]["errors"] == 0
    assert result["chosen"]["minilm"]["either"] == 5.0  # the higher of the lines that raise it
    per_set = result["leave_one_set_out"]["per_set"]
    # held out, the benign flag meets chat13's choice (line 1: it stands) and the request v26's (raise 6: missed);
    # the English request alone: the other sets raise nothing, so it is missed as shipped
    assert (per_set["v26"]["e5"]["errors"], per_set["chat13"]["e5"]["errors"], per_set["v27"]["minilm"]["errors"]) == (
        1,
        1,
        1,
    )
    assert result["leave_one_set_out"]["errors"] == result["leave_one_set_out"]["shipped_errors"] == 3
    assert result["passes_development"] is False


def test_the_e5_benign_bound_is_the_packaged_files_and_a_gain_past_it_falls_back_to_ew_at_the_packaged_settings() -> (
    None
):
    round28 = enron_round()
    points, _ = round28.e5_candidates([], LINE)
    # EW reads the benign flag at 2.6: over the operating point, so it stands at every grid line; the packaged file
    # lets it through. EW raises both requests, the packaged file neither: EW's points make 1 error against 2, but
    # flag a benign row the packaged file does not, so none is eligible
    benign_flag = row("v26", "e5", 0, -0.5, 1.0, 2.6)
    requests = [row("chat13", "e5", 1, 0.5, 1.0, 4.5), row("v27", "e5", 1, 0.5, 1.0, 4.5)]
    chosen = round28.e5_choose([benign_flag, *requests], points, LINE)
    assert (chosen["tau"], chosen["band"], chosen["raise_tau"], chosen["file"]) == (2.5, 4.0, 3.0, "refit")
    assert (chosen["benign_flagged"], chosen["requests_missed"]) == (1, 0)


def test_the_english_calibration_bound_and_the_public_gate_read_the_chosen_files() -> None:
    round28 = enron_round()
    english = row("v27", "minilm", 1, 0.5, 0.0, 5.5)
    calib = [row("calib", "minilm", 0, 0.5, 0.0, 5.5)]  # a benign calibration row EW raises at lines 3 to 5
    result = round28.sweep([english], calib, LINE)
    assert result["chosen"]["minilm"]["either"] is None  # lines 6 and 8 raise nothing here: ties go to none
    enron = [
        row("public-enron", "minilm", 0, 0.5, 0.0, 3.5) | {"row": 1},  # raised at either line 3, not 4
        row("public-enron", "e5", 0, -0.5, 1.0, 2.6) | {"row": 2},  # a flag EW lets stand, the packaged file not
        row("public-sage", "minilm", 0, 6.0, None, None) | {"row": 3},  # far under the line: never read
    ]
    shipped_e5 = {"file": "packaged", "tau": 2.5, "band": 4.0, "raise_tau": 3.0}
    for e5_point, either_line, flagged in (
        (shipped_e5, None, 0),
        (shipped_e5 | {"file": "refit"}, None, 1),
        (shipped_e5 | {"file": "refit"}, 3.0, 2),
        (shipped_e5, 4.0, 0),
    ):
        public = round28.public_check(enron, {"e5": e5_point, "minilm": {"either": either_line}}, LINE)
        assert public["enron"]["flagged"]["k"] == flagged and public["all"]["flagged"]["k"] == flagged
        assert public["enron"]["read_by_raise"]["k"] == 1 and public["all"]["read_by_raise"]["n"] == 3
