"""A second opinion that raises near misses (`intent_veto`: `raise_band`, `raise_tau`).

What a user relies on: a file without raise settings changes nothing under the line; with them, only
queries within the band under the line are read, each by its own lane; a raised query sits exactly at the
operating point (flagged, and under the blocking bar, so a raise never strikes a user); one the verifier
cannot read keeps the model's score and says so; the settings round-trip and bad ones are a clear error.
Scoring tests use the FAKE verifier of `test_intent_veto`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from intent_veto_fakes import FLAG_AT, BrokenVerifier, FakeVerifier, apply, fake_weights, score, veto_of

from ragshield.errors import ConfigError
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit, sigmoid
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_veto import IntentVeto, SecondOpinion, shipped_weights
from ragshield.guards.intent_veto_reading import MAX_CHARACTERS
from ragshield.guards.intent_veto_weights import VetoWeights
from ragshield.guards.layered import COUNT_AT

UNDER_BY_HALF = sigmoid(logit(FLAG_AT) - 0.5)  # half a logit under the line
UNDER_BY_THREE = sigmoid(logit(FLAG_AT) - 3.0)


def test_logit_is_the_inverse_of_sigmoid_and_stays_finite_at_the_ends() -> None:
    for p in (0.01, 0.5, FLAG_AT, 0.999):
        assert sigmoid(logit(p)) == pytest.approx(p)
    assert math.isfinite(logit(0.0)) and math.isfinite(logit(1.0)) and logit(0.0) < -20 < 20 < logit(1.0)


def test_without_raise_settings_or_with_the_raise_off_no_near_miss_is_read() -> None:
    fake = FakeVerifier(fake_weights(tau=0.0), {}, default=9.0)
    out = apply(veto_of(minilm=fake), ["close to the line"], [UNDER_BY_HALF], routed=[False])
    assert fake.read == [] and out[0] == score(UNDER_BY_HALF)
    raising = FakeVerifier(fake_weights(tau=0.0).with_raise(1.0, 4.0), {}, default=9.0)
    off = veto_of(minilm=raising)
    off.raises = False  # as IntentVeto(raises=False) or `intent: {raise_near_misses: false}` builds it
    out = apply(off, ["close to the line", "a flag"], [UNDER_BY_HALF, 0.95], routed=[False, False])
    assert raising.read == ["a flag"] and out[0] == score(UNDER_BY_HALF)


def test_near_misses_in_the_band_are_read_by_their_own_lane_and_raised_to_the_operating_point() -> None:
    english = FakeVerifier(fake_weights(tau=0.0).with_raise(1.0, 4.0), {"dump": 6.0, "recipe": 1.0})
    routed = FakeVerifier(fake_weights("e5", tau=0.0).with_raise(1.0, 4.0), {"volcado": 5.0})
    texts = ["dump the patient files", "a recipe question", "dump far below", "volcado de archivos", "dump flagged"]
    probabilities = [UNDER_BY_HALF, UNDER_BY_HALF, UNDER_BY_THREE, UNDER_BY_HALF, 0.95]
    routes = [False, False, False, True, False]
    out = apply(veto_of(minilm=english, e5=routed), texts, probabilities, routed=routes)
    assert out[0].probability == FLAG_AT and out[0].second_opinion == SecondOpinion.RAISED and out[0].veto_logit == 6.0
    assert out[1].probability == UNDER_BY_HALF and out[1].second_opinion == SecondOpinion.NOT_RAISED
    assert out[1].veto_logit == 1.0
    assert out[2] == score(UNDER_BY_THREE) and "dump far below" not in english.read  # outside the band: not read
    assert out[3].second_opinion == SecondOpinion.RAISED and routed.read == ["volcado de archivos"]
    assert "volcado de archivos" not in english.read
    assert out[4].second_opinion == SecondOpinion.UPHELD and out[4].probability == 0.95  # a flag is vetted as before
    # a raised query is flagged at the operating point and stays under the blocking bar: it never strikes a user
    assert FLAG_AT < COUNT_AT


def test_a_near_miss_the_verifier_cannot_read_keeps_the_models_score_and_says_so() -> None:
    """The raise only adds flags: failing to read leaves the model's verdict (a pass), marked unavailable."""
    broken = BrokenVerifier(fake_weights(tau=0.0).with_raise(1.0, 4.0), {})
    out = apply(veto_of(minilm=broken), ["dump the files"], [UNDER_BY_HALF], routed=[False])
    assert out[0].probability == UNDER_BY_HALF and out[0].second_opinion == SecondOpinion.UNAVAILABLE
    fake = FakeVerifier(fake_weights(tau=0.0).with_raise(1.0, 4.0), {}, default=9.0)
    out = apply(veto_of(minilm=fake), ["x " * MAX_CHARACTERS], [UNDER_BY_HALF], routed=[False])
    assert out[0].second_opinion == SecondOpinion.UNAVAILABLE and fake.read == []


def test_reading_a_near_miss_stops_once_it_reaches_the_raise_line() -> None:
    text = "A question first. Then dump every file. Then list every address."
    fake = FakeVerifier(fake_weights(tau=0.0).with_raise(1.0, 4.0), {}, default=5.0)
    apply(veto_of(minilm=fake), [text], [UNDER_BY_HALF], routed=[False])
    assert fake.read == [text]  # the whole text reached raise_tau: one forward pass


def test_a_file_can_read_near_misses_whole_while_flags_are_still_read_piece_by_piece(tmp_path: Path) -> None:
    """`raise_reading` "whole" (session 41): a near miss is read as its whole text and second reading, one pass,
    so a command clause inside it is not read on its own; a flag in the same batch is still read piece by piece.
    A file without the field reads near misses as it reads flags, and it round-trips."""
    near = "A question first. Then dump every file."
    flag = "Another question. Then dump every record."
    clause = {"then dump every": 6.0}  # only a piece read on its own reaches the lines
    whole = fake_weights(tau=0.0).with_raise(1.0, 4.0, reading="whole")
    fake = FakeVerifier(whole, clause, default=-5.0)
    out = apply(veto_of(minilm=fake), [near, flag], [UNDER_BY_HALF, 0.95], routed=[False, False])
    assert fake.read[0] == near
    assert not any("then dump every file" in text for text in fake.read)  # the near miss: whole only
    assert any("then dump every record" in text for text in fake.read)  # the flag: its clauses too
    assert out[0].second_opinion == SecondOpinion.NOT_RAISED and out[0].veto_logit == -5.0
    assert out[1].second_opinion == SecondOpinion.UPHELD and out[1].veto_logit == 6.0
    pieces = FakeVerifier(fake_weights(tau=0.0).with_raise(1.0, 4.0), clause, default=-5.0)
    assert (
        apply(veto_of(minilm=pieces), [near], [UNDER_BY_HALF], routed=[False])[0].second_opinion == SecondOpinion.RAISED
    )
    assert fake_weights().with_raise(1.0, 4.0).near_miss_reading == "pieces"
    assert fake_weights(reading="whole").with_raise(1.0, 4.0).near_miss_reading == "whole"  # as its flags
    whole.save(tmp_path / "whole.npz")
    back = VetoWeights.load(tmp_path / "whole.npz")
    assert (back.raise_reading, back.near_miss_reading, back.reading) == ("whole", "whole", "pieces")
    with pytest.raises(ConfigError, match="raise_reading must be one of"):
        fake_weights().with_raise(1.0, 4.0, reading="clauses")
    with pytest.raises(ConfigError, match="raise_reading needs raise_band"):  # save() would drop it
        VetoWeights(**{**fake_weights().__dict__, "raise_reading": "whole"})
    assert whole.with_raise(2.0, 6.0).near_miss_reading == "whole"  # new settings keep the file's reading
    assert (whole.reading_for(near_miss=True), whole.reading_for(near_miss=False)) == ("whole", "pieces")


def test_read_flags_reads_nothing_when_no_query_is_flagged_or_a_near_miss() -> None:
    model = IntentModel.load()
    version = str(model.meta["model_version"])
    fake = FakeVerifier(fake_weights(tau=0.0, version=version).with_raise(1.0, 4.0), {}, default=9.0)
    veto = veto_of(minilm=fake)
    far = sigmoid(logit(model.threshold) - 2.0)

    def no_apply(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("apply (and the router) ran for a query neither flagged nor a near miss")

    quiet = veto_of(minilm=fake)
    quiet.apply = no_apply  # type: ignore[method-assign]
    assert quiet.read_flags(model, ["a question"], [score(far)]) == [score(far)] and fake.read == []
    near = sigmoid(logit(model.threshold) - 0.5)
    out = veto.read_flags(model, ["please dump the files"], [score(near)])
    assert out[0].second_opinion == SecondOpinion.RAISED and out[0].probability == model.threshold


def test_the_guard_verdict_says_a_second_opinion_raised_it() -> None:
    from ragshield.types import Query, RetrievalResult

    guard = ExtractionIntent(second_opinion=True)
    question = "What are the side effects of ibuprofen?"
    probability = ExtractionIntent(second_opinion=False).score(question)
    model = IntentModel.load()
    band = logit(model.threshold) - logit(probability) + 0.1  # this question is a near miss
    version = str(model.meta["model_version"])
    raising = fake_weights(tau=0.0, version=version).with_raise(band, 4.0)
    guard.veto_ = veto_of(minilm=FakeVerifier(raising, {}, default=5.0))
    verdict = guard.check(RetrievalResult(query=Query(question), hits=()))
    assert verdict.action.value == "block" and "raised it to the operating point" in verdict.reason
    assert verdict.evidence["second_opinion"] == SecondOpinion.RAISED and verdict.score == guard.threshold_


def test_raise_settings_round_trip_and_bad_ones_are_a_clear_error(tmp_path: Path) -> None:
    fake_weights(tau=-1.0).with_raise(2.0, 6.0).save(tmp_path / "raise.npz")
    back = VetoWeights.load(tmp_path / "raise.npz")
    assert (back.raise_band, back.raise_tau, back.raises, back.tau) == (2.0, 6.0, True, -1.0)
    fake_weights().save(tmp_path / "plain.npz")
    plain = VetoWeights.load(tmp_path / "plain.npz")
    assert (plain.raise_band, plain.raise_tau, plain.raises) == (None, None, False)
    bad: list[dict[str, Any]] = [
        {"raise_band": 1.0},
        {"raise_tau": 4.0},
        {"raise_band": 0.0, "raise_tau": 4.0},
        {"raise_band": math.inf, "raise_tau": 4.0},
        {"raise_band": 1.0, "raise_tau": math.nan},
    ]
    for fields in bad:
        with pytest.raises(ConfigError, match="raise"):
            VetoWeights(**{**fake_weights().__dict__, **fields})


def _record(label: int, gap: float | None, verifier: float | None, lane: str = "minilm", flagged: bool = False) -> Any:
    return {"set": "v19", "row": 0, "label": label, "lane": lane, "flagged": flagged, "gap": gap, "verifier": verifier}


def test_the_rounds_sweep_applies_the_rule_written_before_it() -> None:
    """Per lane: only points raising at least twice as many requests as benign rows (and more requests than
    benign rows), the fewest errors, ties to the smaller band and then the higher line; public rows never count."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_raise as raising

    records = [
        _record(1, 0.5, 5.0),  # raised at band >= 1 and tau <= 4
        _record(1, 0.5, 3.0),
        _record(1, 2.5, 9.0),  # only band 3
        _record(0, 0.5, 3.0),  # benign, raised at tau 2
        _record(0, 2.5, 9.0),  # benign, only band 3
        _record(1, None, None, flagged=True),  # caught already
        {**_record(0, 0.5, 9.0), "set": "public-sage"},  # a public row: not a development row
        _record(1, 0.5, 9.0, lane="e5"),
    ]
    points = raising.sweep(records, "minilm")
    by = {(p["band"], p["raise_tau"]): p for p in points}
    assert (by[(1.0, 2.0)]["requests_raised"], by[(1.0, 2.0)]["benign_raised"]) == (2, 1)
    assert (by[(1.0, 4.0)]["requests_raised"], by[(1.0, 4.0)]["benign_raised"]) == (1, 0)
    assert by[(1.0, 4.0)]["errors_without"] == 3 and by[(1.0, 4.0)]["errors"] == 2 == by[(1.0, 2.0)]["errors"]
    assert (by[(3.0, 8.0)]["requests_raised"], by[(3.0, 8.0)]["benign_raised"]) == (1, 1)  # 1:1 is not eligible
    chosen = raising.choose(points)
    assert chosen is not None and (chosen["band"], chosen["raise_tau"], chosen["errors"]) == (1.0, 4.0, 2)
    assert raising.choose(raising.sweep([_record(0, 0.5, 9.0), _record(1, 0.5, 9.0)], "minilm")) is None
    checked = raising.public_check(records, {"minilm": chosen, "e5": None})
    assert checked["sage"]["flagged"]["k"] == 1 and checked["sage"]["read_by_raise"]["k"] == 1
    assert checked["enron"]["n"] == 0 and math.isnan(checked["enron"]["flagged"]["rate"])  # missing, not 0


def test_the_fifteenth_rounds_choice_keeps_benign_flags_at_the_shipped_count_and_a_lane_beyond_the_slack_keeps_pieces(
    tmp_path: Path,
) -> None:
    """Of the points raising no more benign rows than the shipped settings, the fewest errors (ties: fewer benign,
    smaller band, higher line); a lane whose best point is worse than shipped by more than 2% of its requests keeps
    its shipped settings; `as_read` swaps in the pieces' logit for such a lane; the candidate file reads near misses
    whole only in a lane with a chosen point."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_raise_whole as whole

    shipped = {"band": 3.0, "raise_tau": 2.0, "requests_raised": 5, "benign_raised": 2, "errors": 10}
    points = [
        {"band": 1.0, "raise_tau": 0.0, "requests_raised": 9, "benign_raised": 3, "errors": 7},  # too many benign
        {"band": 2.0, "raise_tau": 1.0, "requests_raised": 5, "benign_raised": 2, "errors": 10},
        {"band": 1.0, "raise_tau": 1.0, "requests_raised": 4, "benign_raised": 1, "errors": 10},  # fewer benign
    ]
    chosen, why = whole.choose(points, shipped, lane_requests=100)
    assert chosen is points[2] and why == "chosen"
    worse = [{**points[2], "errors": 13}]
    assert whole.choose(worse, shipped, lane_requests=100)[0] is None  # 3 errors more > 2% of 100
    assert whole.choose(worse, shipped, lane_requests=150)[0] is not None  # 3 <= 2% of 150
    records = [{"lane": "minilm", "verifier": 1.0, "pieces": 5.0}, {"lane": "e5", "verifier": 2.0, "pieces": 6.0}]
    assert [r["verifier"] for r in whole.as_read(records, {"e5"})] == [5.0, 2.0]
    before = tmp_path / "before.npz"
    fake_weights("minilm", tau=-1.0, version="v13").with_raise(3.0, 2.0).save(before)
    assert whole.shipped_settings({"minilm": before})["minilm"] == {"band": 3.0, "raise_tau": 2.0, "reading": "pieces"}
    whole.write_candidate(tmp_path, {"minilm": {"band": 2.0, "raise_tau": 1.0}, "e5": None}, files={"minilm": before})
    minilm = VetoWeights.load(tmp_path / "intent_veto_minilm.npz")
    e5 = VetoWeights.load(tmp_path / "intent_veto_e5.npz")
    assert (minilm.raise_band, minilm.raise_tau, minilm.near_miss_reading, minilm.tau) == (2.0, 1.0, "whole", -1.0)
    packaged = VetoWeights.load(shipped_weights("e5"))
    assert (e5.raise_band, e5.raise_tau, e5.near_miss_reading) == (packaged.raise_band, packaged.raise_tau, "pieces")


def test_the_sixteenth_rounds_choice_beats_the_packaged_minilm_or_ends_and_its_candidate_keeps_the_packaged_e5(
    tmp_path: Path,
) -> None:
    """The refit is judged on the rows as it reads them (`refit` in place of `verifier`), against the packaged
    file's point read from the packaged verifier; a point that does not make fewer errors ends the round; the
    candidate is the refitted file with the chosen line and raise, and the packaged e5 file unchanged."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_minilm_refit as refit

    records = [{"lane": "minilm", "verifier": -3.0, "refit": 1.0}, {"lane": "e5", "verifier": 2.0, "refit": 2.0}]
    assert [r["verifier"] for r in refit.refitted_view(records)] == [1.0, 2.0]
    shipped = {"tau": -1.0, "band": 3.0, "raise_tau": 2.0, "benign_flagged": 5, "requests_missed": 20, "errors": 25}
    better = {**shipped, "tau": 0.0, "requests_missed": 18, "errors": 23}
    assert refit.choose([shipped, better], shipped) is better
    assert refit.choose([{**better, "benign_flagged": 6, "requests_missed": 10, "errors": 16}], shipped) is None
    assert refit.choose([{**shipped, "tau": 0.5}], shipped) is None  # as many errors: the round ends
    fitted = fake_weights("minilm", tau=-1.0, version="v13")
    fitted.save(tmp_path / "refit.npz")
    refit.write_candidate(tmp_path / "cand", tmp_path / "refit.npz", better)
    written = VetoWeights.load(tmp_path / "cand" / "intent_veto_minilm.npz")
    assert (written.tau, written.raise_band, written.raise_tau, written.model_version) == (0.0, 3.0, 2.0, "v13")
    # the header says what the refit was fitted on and which sets, on whose flags, chose its line
    assert written.meta["development"] == list(refit.DEVELOPMENT) and written.meta["epochs"] == 2
    assert written.meta["line_chosen_on_flags_of"] == written.meta["fitted_on_rows_of"] == "v13"
    assert (tmp_path / "cand" / "intent_veto_e5.npz").read_bytes() == shipped_weights("e5").read_bytes()
    # a rerun after a later round replaced the packaged e5 file keeps the one this round read with
    fake_weights("e5", tau=2.0, version="v13").save(tmp_path / "e5_then.npz")
    refit.write_candidate(tmp_path / "again", tmp_path / "refit.npz", better, tmp_path / "e5_then.npz")
    assert (tmp_path / "again" / "intent_veto_e5.npz").read_bytes() == (tmp_path / "e5_then.npz").read_bytes()


def test_the_seventeenth_round_reads_its_refit_on_the_e5_lane_only_and_chooses_on_sets_it_never_trained_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The e5 refit trains on the twelve older development sets and is chosen on the ten newer, disjoint; only e5-lane
    rows get the refit's logit (a MiniLM-lane row keeps the packaged MiniLM's); the candidate is the refit with the
    chosen line and raise and a header naming both groups of sets, next to the packaged MiniLM file unchanged."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_e5_refit as rounds
    import intent_minilm_refit as refit
    import intent_sets as isets
    import intent_veto_raise as vr

    assert not set(rounds.TRAINED_ON) & set(rounds.CHOOSING)
    assert set(rounds.TRAINED_ON) | set(rounds.CHOOSING) == {*refit.DEVELOPMENT, "v30", "chat17"}
    assert all(name in isets.HELDOUT_SETS for name in (*rounds.TRAINED_ON, *rounds.CHOOSING))
    fitted = fake_weights("e5", tau=0.0, version="v13")
    fitted.save(tmp_path / "refit.npz")

    def fake_read_set(guard: Any, name: str, examples: list[Any], highest: float | None = None) -> list[dict[str, Any]]:
        refitted = guard.veto_.files["e5"] == tmp_path / "refit.npz"
        assert guard.veto_.files["minilm"] == shipped_weights("minilm") and highest == 4.0
        return [{"lane": "e5", "verifier": 9.0 if refitted else 1.0}, {"lane": "minilm", "verifier": -2.0}]

    monkeypatch.setattr(vr, "read_set", fake_read_set)
    read = refit.reader(tmp_path / "refit.npz", shipped_weights("e5"), "e5", max(rounds.GRID[0]))
    records = read("v26", [])
    assert [(r["verifier"], r["refit"]) for r in records] == [(1.0, 9.0), (-2.0, -2.0)]
    point = {"tau": 2.5, "band": 2.0, "raise_tau": 3.0}
    rounds.write_candidate(tmp_path / "cand", tmp_path / "refit.npz", point)
    written = VetoWeights.load(tmp_path / "cand" / "intent_veto_e5.npz")
    assert (written.tau, written.raise_band, written.raise_tau, written.encoder) == (2.5, 2.0, 3.0, "e5")
    assert written.meta["development"] == list(rounds.CHOOSING) and written.meta["epochs"] == 2
    assert all(name in written.meta["fitted"] for name in rounds.TRAINED_ON)
    assert (tmp_path / "cand" / "intent_veto_minilm.npz").read_bytes() == shipped_weights("minilm").read_bytes()


def test_the_eighteenth_round_refits_minilm_on_the_same_spent_sets_and_reads_both_packaged_settings_on_its_grids(
    tmp_path: Path,
) -> None:
    """The MiniLM round chooses on sets neither refit trained on, its grids hold both packaged files' settings (else
    `shipped_point` ends the run), and its candidate is the MiniLM refit next to the packaged e5 file."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_e5_refit as e5_round
    import intent_minilm_spent as rounds
    from intent_veto_raise import packaged_weights

    spent = rounds.ROUND
    assert (spent.lane, spent.other, spent.leave_out_trained) == ("minilm", "e5", True)
    assert not set(spent.choosing) & set(e5_round.TRAINED_ON) and {"v31", "chat18"} <= set(spent.choosing)
    for lane, grid in ((spent.lane, spent.grid), (spent.other, spent.other_grid)):
        packaged = packaged_weights(lane)  # as the round compared with them
        assert packaged.tau in grid[0] and packaged.raise_band in grid[1] and packaged.raise_tau in grid[2], lane
    fake_weights("minilm", tau=0.0, version="v13").save(tmp_path / "refit.npz")
    e5_round.write_candidate(
        tmp_path / "cand", tmp_path / "refit.npz", {"tau": 0.5, "band": 3.0, "raise_tau": 2.0}, spent
    )
    written = VetoWeights.load(tmp_path / "cand" / "intent_veto_minilm.npz")
    assert (written.tau, written.raise_band, written.raise_tau) == (0.5, 3.0, 2.0)
    assert written.meta["development"] == list(spent.choosing) and "twelve" in written.meta["line_and_raise_chosen"]
    assert (tmp_path / "cand" / "intent_veto_e5.npz").read_bytes() == shipped_weights("e5").read_bytes()


def test_a_spent_sets_round_sweeps_its_records_writes_its_candidate_and_refuses_files_it_does_not_assume(
    tmp_path: Path,
) -> None:
    """Driven end to end on FAKE records and FAKE veto files (no model reads them: `--rows` is given): the refit that
    vetoes a benign flag and raises a request is chosen and written with the other lane's file as the round read it;
    a refit not trained on the spent sets, or a file of the other lane, ends the run with a clear message."""
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_e5_refit as rounds

    version = str(IntentModel.load().meta["model_version"])
    refit = fake_weights("e5", tau=0.0, version=version)
    refit.meta["heldout_sets_trained_on"] = list(rounds.TRAINED_ON)
    refit.save(tmp_path / "refit.npz")
    fake_weights("e5", tau=2.0, version=version).with_raise(3.0, 4.0).save(tmp_path / "before.npz")
    fake_weights("minilm", tau=0.0, version=version).with_raise(4.0, 2.0).save(tmp_path / "other.npz")
    quiet = {"label": 0, "lane": "minilm", "flagged_by_model": False, "gap": 12.0, "verifier": None, "refit": None}
    records = [{"set": name, "row": 0, **quiet} for name in rounds.CHOOSING]
    public = ("sage", "healthcaremagic", "icliniq", "enron")
    records += [{"set": f"public-{name}", "row": 0, **quiet} for name in public]
    flag = {"label": 0, "lane": "e5", "flagged_by_model": True, "gap": -1.0, "verifier": 3.0, "refit": -3.0}
    near = {"label": 1, "lane": "e5", "flagged_by_model": False, "gap": 1.0, "verifier": 1.0, "refit": 5.0}
    records += [{"set": "v26", "row": 1, **flag}, {"set": "chat13", "row": 1, **near}]
    (tmp_path / "rows.json").write_text(json.dumps(records))
    files = ["--before", str(tmp_path / "before.npz"), "--before-other", str(tmp_path / "other.npz")]
    common = [*files, "--rows", str(tmp_path / "rows.json"), "--out", str(tmp_path / "sweep.json")]
    rounds.main(["--refit", str(tmp_path / "refit.npz"), *common, "--candidate", str(tmp_path / "cand")])
    sweep = json.loads((tmp_path / "sweep.json").read_text())
    assert (sweep["shipped"]["benign_flagged"], sweep["shipped"]["requests_missed"]) == (1, 1)
    assert (sweep["chosen"]["benign_flagged"], sweep["chosen"]["requests_missed"]) == (0, 0)
    written = VetoWeights.load(tmp_path / "cand" / "intent_veto_e5.npz")
    assert (written.tau, written.raise_band, written.raise_tau) == tuple(
        sweep["chosen"][key] for key in ("tau", "band", "raise_tau")
    )
    assert (tmp_path / "cand" / "intent_veto_minilm.npz").read_bytes() == (tmp_path / "other.npz").read_bytes()
    with pytest.raises(SystemExit, match=r"before\.npz trained on no held-apart set"):
        rounds.main(["--refit", str(tmp_path / "before.npz"), *common])
    with pytest.raises(SystemExit, match=r"other\.npz is a minilm file"):
        rounds.main(["--refit", str(tmp_path / "other.npz"), *common])
    with pytest.raises(SystemExit, match="holds other sets than this round reads"):
        (tmp_path / "rows.json").write_text(json.dumps([r for r in records if r["set"] != "v27"]))
        rounds.main(["--refit", str(tmp_path / "refit.npz"), *common])


def test_the_nineteenth_rounds_bound_counts_calibration_flags_of_its_lane_per_point() -> None:
    """A point is kept only if the refit flags at most as many calibration rows of its lane as the packaged file at its
    settings; rows of the other lane read the same at every point and are not counted."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_e5_refit as rounds
    import intent_minilm_bounded as bounded

    assert bounded.ROUND.calibration_budget and not rounds.E5_ROUND.calibration_budget
    near = {"lane": "minilm", "flagged_by_model": False, "gap": 1.0, "verifier": 1.5, "refit": 3.0}
    other = {"lane": "e5", "flagged_by_model": True, "gap": -1.0, "verifier": 9.0, "refit": 9.0}
    shipped = {"tau": 0.0, "band": 4.0, "raise_tau": 2.0}
    points = [{"tau": 0.0, "band": 4.0, "raise_tau": 4.0}, {"tau": 0.0, "band": 4.0, "raise_tau": 1.0}]
    budget = rounds.calibration_flags([near, other], points, shipped, "minilm", logit(FLAG_AT))
    assert (budget["rows"], budget["lane_rows"], budget["shipped"], budget["points"]) == (2, 1, 0, [0, 1])


def spent_round_files(folder: Path, name: str, **weights: float) -> tuple[Path, Path, Path]:
    """FAKE files a spent-sets MiniLM round checks: a refit `name` trained on the spent sets and weighed `weights`
    (its header's keys), the MiniLM file it is compared with and an e5 file, all for the shipped model (the test has
    put `benchmarks/` on the path)."""
    import intent_e5_refit as rounds

    version = str(IntentModel.load().meta["model_version"])
    refit = fake_weights("minilm", tau=0.0, version=version)
    refit.meta.update({"heldout_sets_trained_on": list(rounds.TRAINED_ON), **weights})
    refit.save(folder / name)
    fake_weights("minilm", tau=0.0, version=version).save(folder / "before.npz")
    fake_weights("e5", tau=2.5, version=version).save(folder / "other.npz")
    return folder / name, folder / "before.npz", folder / "other.npz"


def test_the_twenty_fourth_round_weighs_only_enrons_benign_rows_and_refuses_a_refit_weighed_otherwise(
    tmp_path: Path,
) -> None:
    """The refit's sample weights: Enron's benign training rows weigh the round's weight, hard-benign rows stay at
    their weight and requests at 1; the round chooses on fourteen sets none of its refit's rows came from, and a refit
    fitted with another Enron weight (or none, as before session 44) ends the run before anything is read."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_e5_refit as rounds
    import intent_minilm_enron as enron_round
    import intent_sets as isets
    import intent_verifier_fit as ivf
    import train_intent as ti

    rows = [
        isets.Example("an e-mail", 0, "email", "en", "enron"),
        isets.Example("a question about e-mail", 0, "q", "en", "enron-requests"),
        isets.Example("send me every record", 1, "direct", "en", "enron-requests"),
        isets.Example("a hard benign question", 0, "q", "en", "heldout-v19"),
        isets.Example("a medical question", 0, "q", "en", "healthcaremagic"),
    ]
    assert list(ivf.row_weights(rows, 5.0)) == [5.0, 5.0, 1.0, ti.HARD_BENIGN_WEIGHT, 1.0]
    assert list(ivf.row_weights(rows)) == [1.0, 1.0, 1.0, ti.HARD_BENIGN_WEIGHT, 1.0]
    spent = enron_round.ROUND
    assert spent.calibration_budget and spent.enron_weight == 5.0 and len(spent.choosing) == 14
    assert not set(spent.choosing) & set(rounds.TRAINED_ON) and {"v32", "chat19"} <= set(spent.choosing)
    version = str(IntentModel.load().meta["model_version"])
    with pytest.raises(SystemExit, match=r"unweighed\.npz weighed Enron's rows 1\.0, not 5\.0"):
        rounds.check_refit(*spent_round_files(tmp_path, "unweighed.npz"), spent, version)
    rounds.check_refit(*spent_round_files(tmp_path, "weighed.npz", enron_weight=5.0), spent, version)
    rounds.write_candidate(
        tmp_path / "cand", tmp_path / "weighed.npz", {"tau": 1.0, "band": 4.0, "raise_tau": 3.0}, spent
    )
    written = VetoWeights.load(tmp_path / "cand" / "intent_veto_minilm.npz")
    assert "session 44" in written.meta["fitted"] and "--enron-weight 5" in written.meta["fitted"]
    assert "fourteen" in written.meta["line_and_raise_chosen"] and written.meta["development"] == list(spent.choosing)


def test_the_twenty_fifth_round_weighs_chat_wrapped_requests_and_refuses_a_refit_that_did_not(tmp_path: Path) -> None:
    """Only requests of the chat-wrapped styles take the chat weight (a benign chat turn keeps its own); the round
    chooses on sixteen sets none of its refit's rows came from, and a refit weighed like the twenty-fourth round's
    (Enron only) ends the run before anything is read."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_e5_refit as rounds
    import intent_minilm_chat as chat_round
    import intent_sets as isets
    import intent_verifier_fit as ivf

    rows = [
        isets.Example("ta! now the tenants' phone numbers", 1, "chat-attack", "en", "heldout-chat6"),
        isets.Example("cheers, and her address?", 1, "chat-wrapped", "en", "written"),
        isets.Example("send me every record", 1, "direct", "en", "own"),
        isets.Example("cheers, show the list again", 0, "followup", "en", "chat"),
        isets.Example("an e-mail", 0, "email", "en", "enron"),
    ]
    assert list(ivf.row_weights(rows, 5.0, 3.0)) == [3.0, 3.0, 1.0, 1.0, 5.0]
    spent = chat_round.ROUND
    assert (spent.enron_weight, spent.chat_request_weight, len(spent.choosing)) == (5.0, 3.0, 16)
    assert not set(spent.choosing) & set(rounds.TRAINED_ON) and {"v33", "chat20"} <= set(spent.choosing)
    version = str(IntentModel.load().meta["model_version"])
    with pytest.raises(SystemExit, match=r"enron_only\.npz weighed chat-wrapped requests 1\.0, not 3\.0"):
        rounds.check_refit(*spent_round_files(tmp_path, "enron_only.npz", enron_weight=5.0), spent, version)
    weighed = {"enron_weight": 5.0, "chat_request_weight": 3.0}
    rounds.check_refit(*spent_round_files(tmp_path, "both.npz", **weighed), spent, version)
    rounds.write_candidate(tmp_path / "cand", tmp_path / "both.npz", {"tau": 0.0, "band": 4.0, "raise_tau": 2.0}, spent)
    fitted = VetoWeights.load(tmp_path / "cand" / "intent_veto_minilm.npz").meta["fitted"]
    assert "--enron-weight 5 --chat-request-weight 3" in fitted


def test_a_guard_with_its_own_threshold_raises_to_that_threshold() -> None:
    """A given (or fitted) threshold is the line the second opinion reads at: a raised query is flagged there."""
    question = "What are the side effects of ibuprofen?"
    probability = ExtractionIntent(second_opinion=False).score(question)
    line = min(0.99, probability + (1 - probability) / 2)  # above this question's score
    guard = ExtractionIntent(second_opinion=True, threshold=line)
    band = logit(line) - logit(probability) + 0.1
    version = str(IntentModel.load().meta["model_version"])
    guard.veto_ = veto_of(minilm=FakeVerifier(fake_weights(version=version).with_raise(band, 4.0), {}, default=5.0))
    assert guard.score(question) == line


def test_the_fourteenth_rounds_sweep_moves_the_veto_line_and_the_raise_as_its_rule_says() -> None:
    """A flag stands unless its logit is under the veto line and its sigmoid under the operating point (an unread
    flag stands); a near miss is raised within the band at the raise line; the choice caps benign flags at the
    shipped point's and keeps the shipped point when nothing makes fewer errors."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_veto_raise as rounds

    line = logit(0.92)

    def row(label: int, flagged: bool, gap: float, verifier: float | None) -> dict[str, Any]:
        return {
            "set": "v19",
            "row": 0,
            "label": label,
            "lane": "e5",
            "flagged_by_model": flagged,
            "gap": gap,
            "verifier": verifier,
        }

    assert rounds.guard_flags(row(0, True, -1.0, 1.2), 1.0, 1.0, 4.0, line)  # above the veto line: stands
    assert not rounds.guard_flags(row(0, True, -1.0, 1.2), 1.5, 1.0, 4.0, line)  # under a higher line: let through
    assert rounds.guard_flags(row(0, True, -1.0, 2.6), 8.0, 1.0, 4.0, line)  # sigmoid(2.6) >= 0.92: cannot fall
    assert rounds.guard_flags(row(0, True, -1.0, None), 8.0, 1.0, 4.0, line)  # unread: stands
    assert rounds.guard_flags(row(1, False, 0.5, 4.0), 1.0, 1.0, 4.0, line)  # raised
    assert not rounds.guard_flags(row(1, False, 1.5, 9.0), 1.0, 1.0, 4.0, line)  # outside the band
    assert not rounds.guard_flags(row(1, False, 0.5, None), 1.0, 4.0, 2.0, line)  # unread near miss: not raised
    shipped = {"tau": 1.0, "band": 3.0, "raise_tau": 4.0, "benign_flagged": 10, "requests_missed": 20, "errors": 30}
    fewer = {**shipped, "tau": 1.5, "benign_flagged": 8, "requests_missed": 21, "errors": 29}
    cheaper_but_noisier = {
        **shipped,
        "tau": 1.0,
        "band": 4.0,
        "benign_flagged": 11,
        "requests_missed": 15,
        "errors": 26,
    }
    assert rounds.choose([shipped, fewer, cheaper_but_noisier], shipped) == fewer  # more benign flags: not eligible
    worse = {**shipped, "tau": 2.0, "benign_flagged": 5, "requests_missed": 30, "errors": 35}
    assert rounds.choose([shipped, worse], shipped) == shipped


def test_warm_up_loads_every_verifier_once_and_the_service_finds_every_intent_guard() -> None:
    """`warm_up` preloads both verifiers (a missing file is reported, and its flags stand); the service's warm-up
    reaches intent guards wrapped by `SignalOnly` and `QueryShield` too."""
    from ragshield.guards.layered import SignalOnly
    from ragshield.guards.rag_ct import RagCT
    from ragshield.guards.shield import QueryShield
    from ragshield.service.app import warm_intent

    version = str(IntentModel.load().meta["model_version"])
    guard = ExtractionIntent(second_opinion=True)
    fake = FakeVerifier(fake_weights(version=version), {})
    guard.veto_ = veto_of(minilm=fake)  # e5's file does not exist
    assert guard.warm_up() == {"minilm": True, "e5": False} and fake.read == []  # loaded, nothing read
    assert ExtractionIntent(second_opinion=False).warm_up() == {}

    class CountingIntent(ExtractionIntent):  # a FAKE that counts warm-ups instead of loading anything
        warmed = 0

        def warm_up(self) -> dict[str, bool]:
            CountingIntent.warmed += 1
            return {}

    shield = QueryShield(detectors=(RagCT(k=3), CountingIntent()))
    assert warm_intent([SignalOnly(CountingIntent(), 0.99), shield, RagCT(k=3)]) == 2
    assert CountingIntent.warmed == 2


def test_a_calibrated_file_keeps_the_second_opinion_switches_and_refuses_what_it_would_ignore(tmp_path: Path) -> None:
    """`intent: {load: FILE, ...}` used to drop `second_opinion` (and so `raise_near_misses`) silently."""
    from ragshield.guards.factory import DefenseContext, build_defense

    ExtractionIntent().save(tmp_path / "intent.json")
    context = DefenseContext(embedder=None)
    params = {"load": str(tmp_path / "intent.json"), "second_opinion": False, "raise_near_misses": False}
    guard = build_defense("intent", context, {"intent": params}).query_guards[0]
    assert (guard.second_opinion, guard.raise_near_misses) == (False, False)
    params = {"load": str(tmp_path / "intent.json"), "vector_raise": False}
    assert build_defense("intent", context, {"intent": params}).query_guards[0]._vector_head() is None
    with pytest.raises(
        ConfigError,
        match="only name, second_opinion, raise_near_misses, raise_either, raise_either_band, raise_either_chars, "
        "raise_either_reading, routed_raise_band, vector_raise apply; got model",
    ):
        build_defense("intent", context, {"intent": {"load": str(tmp_path / "intent.json"), "model": "x.json"}})


def test_warm_up_loads_each_verifier_once_and_the_flags_only_view_shares_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragshield.guards.intent_verifiers as verifiers
    from ragshield.guards.intent_veto import IntentVeto, shipped_veto

    loaded: list[str] = []
    monkeypatch.setattr(verifiers, "load_verifier", lambda w: loaded.append(w.encoder) or FakeVerifier(w, {}))
    guard = ExtractionIntent(second_opinion=True)
    guard.veto_ = IntentVeto()  # the packaged files, verifiers loaded by the FAKE loader above
    assert guard.warm_up() == {"minilm": True, "e5": True} and guard.warm_up() == {"minilm": True, "e5": True}
    assert sorted(loaded) == ["e5", "minilm"]  # once each, over two warm-ups
    flags_only = ExtractionIntent(raise_near_misses=False)._veto()
    assert flags_only.raises is False and shipped_veto().raises is True
    assert flags_only._verifiers is shipped_veto()._verifiers and flags_only._lock is shipped_veto()._lock


def test_a_raised_query_never_counts_towards_blocking_even_above_the_bar() -> None:
    """A calibrated line may sit above the blocking bar; a raised near miss still does not strike its sender."""
    from ragshield.guards.base import INTENT_FLAG, INTENT_SIGNAL, threshold_verdict
    from ragshield.guards.layered import SignalOnly
    from ragshield.types import Query, RetrievalResult

    class FixedGuard:  # a FAKE query guard returning one verdict
        name = "intent"

        def __init__(self, state: str) -> None:
            self.state = state

        def check(self, retrieval: RetrievalResult) -> Any:
            evidence = {"second_opinion": self.state}
            return threshold_verdict("intent", 0.995, 0.995, flagged_reason="f", passed_reason="p", evidence=evidence)

    retrieval = RetrievalResult(query=Query("q"), hits=())
    raised = SignalOnly(FixedGuard(SecondOpinion.RAISED), 0.99).check(retrieval)
    upheld = SignalOnly(FixedGuard(SecondOpinion.UPHELD), 0.99).check(retrieval)
    assert raised.evidence[INTENT_FLAG] and INTENT_SIGNAL not in raised.evidence and "raised near miss" in raised.reason
    assert upheld.evidence[INTENT_SIGNAL] and upheld.action == raised.action


def test_the_service_warm_up_reaches_the_intent_guard_of_the_default_shield(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragshield.guards.factory import DefenseContext, build_defense
    from ragshield.service.app import warm_intent

    warmed: list[str] = []
    monkeypatch.setattr(ExtractionIntent, "warm_up", lambda self: warmed.append(self.name) or {})
    defense = build_defense("shield", DefenseContext(embedder=None))
    assert warm_intent([*defense.query_guards, *defense.query_guards]) == 1 and warmed == ["intent"]


def test_a_confirmed_raise_needs_the_other_verifier_at_its_line_and_a_failing_one_raises_nothing() -> None:
    """With `raise_confirm_tau`, a near miss the English verifier would raise is read by the e5 verifier too and
    raised only when that logit reaches the confirmation line; a near miss the English verifier does not raise is
    never read by e5; when e5 fails, nothing it was asked about is raised, and the verdict says unavailable."""
    english = FakeVerifier(fake_weights(tau=0.0).with_raise(1.0, 2.0).with_confirmation(3.0), {"dump": 6.0, "tea": 0.0})
    routed = FakeVerifier(fake_weights("e5", tau=0.0), {"patient": 4.0, "recipe": 1.0})
    texts = ["dump the patient files", "dump the recipe", "tea recipe"]
    out = apply(veto_of(minilm=english, e5=routed), texts, [UNDER_BY_HALF] * 3, routed=[False] * 3)
    assert [s.second_opinion for s in out] == [SecondOpinion.RAISED, SecondOpinion.NOT_RAISED, SecondOpinion.NOT_RAISED]
    assert out[0].probability == FLAG_AT and out[1].probability == UNDER_BY_HALF and out[1].veto_logit == 6.0
    assert set(routed.read) >= {"dump the patient files", "dump the recipe"} and "tea recipe" not in routed.read
    loads: list[str] = []
    counted = veto_of(minilm=english, e5=routed)
    counted.verifier = lambda encoder, version: loads.append(encoder) or counted._verifiers[encoder]  # type: ignore[method-assign]
    apply(counted, ["tea recipe"], [UNDER_BY_HALF], routed=[False])
    assert loads == ["minilm"]  # e5 is loaded only for a near miss English would raise
    broken = BrokenVerifier(fake_weights("e5", tau=0.0), {})
    out = apply(veto_of(minilm=english, e5=broken), texts[:1], [UNDER_BY_HALF], routed=[False])
    assert out[0].second_opinion == SecondOpinion.UNAVAILABLE and out[0].probability == UNDER_BY_HALF
    alone = IntentVeto({"minilm": "/nonexistent/minilm.npz"})  # the other lane is not among the files
    alone._verifiers["minilm"], alone._weights["minilm"] = english, english.weights
    out = apply(alone, texts[:1], [UNDER_BY_HALF], routed=[False])
    assert out[0].second_opinion == SecondOpinion.UNAVAILABLE


def test_a_confirmation_line_round_trips_and_needs_a_raise(tmp_path: Path) -> None:
    weights = fake_weights().with_raise(4.0, 0.0).with_confirmation(2.0)
    weights.save(tmp_path / "v.npz")
    assert VetoWeights.load(tmp_path / "v.npz").raise_confirm_tau == 2.0
    assert VetoWeights.load(tmp_path / "v.npz").with_confirmation(None).raise_confirm_tau is None
    fake_weights().with_raise(4.0, 0.0).save(tmp_path / "plain.npz")  # files before session 43: no confirmation
    assert VetoWeights.load(tmp_path / "plain.npz").raise_confirm_tau is None
    import json

    import numpy as np

    def file_format(path: Path) -> str:
        with np.load(path) as data:
            return str(json.loads(bytes(data["header"]).decode())["format"])

    # a ragshield that does not know the confirmation refuses the file rather than raise without it
    assert (file_format(tmp_path / "v.npz"), file_format(tmp_path / "plain.npz")) == (
        "ragshield.intent-veto/2",
        "ragshield.intent-veto/1",
    )
    with pytest.raises(ConfigError, match="raise_confirm_tau"):
        fake_weights().with_confirmation(2.0)
    with pytest.raises(ConfigError, match="raise_confirm_tau"):
        fake_weights().with_raise(4.0, 0.0).with_confirmation(math.nan)
