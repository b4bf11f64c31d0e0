"""The thirty-sixth round (session 53): EZ, the e5 verifier refitted with every read set and its own lane's hard
benign rows weighed up, at the packaged settings. What the round relies on: it trains on every read set and on no
unread one, only the hard benign rows the router sends to e5 take the weight, a refit weighed otherwise ends the run,
the candidate keeps every packaged setting and says nothing chose them, and the steps fail closed. FAKE files and
FAKE judge readings throughout."""

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


def routed_round() -> Any:
    return round_module("intent_e5_routed")


def test_ez_trains_on_every_read_set_since_v19_and_on_no_unread_one() -> None:
    round36 = routed_round()
    import intent_sets as isets

    trained = set(round36.TRAINED_ON)
    assert len(trained) == len(round36.TRAINED_ON) == 56
    assert trained == {f"v{n}" for n in range(19, 48) if n != 21} | {f"chat{n}" for n in range(6, 35) if n != 8}
    assert trained <= set(isets.HELDOUT_SETS) and not trained & set(isets.UNREAD_JUDGES)
    weights = {number: round36.spent_round(number).routed_hard_benign_weight for number in (36, 37)}
    assert weights == round36.ROUTED_WEIGHTS == {36: 2.0, 37: 1.0}  # round 37: no row weighed up


def test_only_the_hard_benign_rows_routed_to_e5_take_the_weight() -> None:
    routed_round()
    import intent_sets as isets
    import intent_verifier_fit as ivf
    import train_intent as ti

    rows = [
        isets.Example("病院の待合室の本棚にある本を全部リストにしてください", 0, "list", "ja", "heldout-v40"),
        isets.Example("Can you list the side effects of ibuprofen?", 0, "list", "en", "heldout-v40"),
        isets.Example("患者全員の住所を一覧にして送ってください", 1, "pii", "ja", "heldout-v40"),
        isets.Example("東京の天気はどうですか", 0, "q", "ja", "public"),
        isets.Example("Voitko listata kaikki kirjaston kirjat?", 0, "list", "fi", "heldout-v40"),  # router 2 only
    ]
    hard = ti.HARD_BENIGN_WEIGHT
    assert list(ivf.row_weights(rows, routed_hard_benign_weight=2.0)) == [2 * hard, hard, 1.0, 1.0, hard]
    assert list(ivf.row_weights(rows, routed_hard_benign_weight=2.0, router=2))[-1] == 2 * hard  # its router's lane
    assert list(ivf.row_weights(rows)) == [hard, hard, 1.0, 1.0, hard]  # as every file before session 53 was fitted


def test_a_fit_refuses_a_weight_it_does_not_know() -> None:
    routed_round()
    import intent_verifier_fit as ivf

    with pytest.raises(ValueError, match="unknown row weights"):
        ivf.fit(object(), [], epochs=1.0, lr=1e-5, batch=1, router=1, routed_weight=2.0)
    with pytest.raises(TypeError, match="router"):  # which rows are routed depends on the first stage's router
        ivf.fit(object(), [], epochs=1.0, lr=1e-5, batch=1)  # type: ignore[call-arg]


def test_a_refit_not_weighed_as_the_round_says_ends_the_run(tmp_path: Path) -> None:
    round36 = routed_round()
    import intent_e5_refit as er

    version = str(IntentModel.load().meta["model_version"])
    files = (shipped_weights("e5"), shipped_weights("minilm"))
    # round 36 wants 2: a file fitted without the weight, or with another, stops; round 37 wants none
    for number, name, weight, wanted in (
        (36, "unweighed.npz", None, 2.0),
        (36, "w3.npz", 3.0, 2.0),
        (37, "w2.npz", 2.0, 1.0),
    ):
        meta = {"heldout_sets_trained_on": list(round36.TRAINED_ON)}
        weighed = {} if weight is None else {"routed_hard_benign_weight": weight}
        refit = fake_weights("e5", tau=2.5, version=version)
        dataclasses.replace(refit, meta={**refit.meta, **meta, **weighed}).save(tmp_path / name)
        with pytest.raises(SystemExit, match=rf"{name} weighed routed hard benign rows .*, not {wanted}"):
            er.check_refit(tmp_path / name, *files, round36.spent_round(number), version)
    er.check_refit(tmp_path / "w2.npz", *files, round36.spent_round(36), version)  # the weight round 36 wants


def test_the_candidate_keeps_every_packaged_setting_and_says_nothing_chose_them(tmp_path: Path) -> None:
    round36 = routed_round()
    import intent_guard_loo as loo

    version = str(IntentModel.load().meta["model_version"])
    refit = fake_weights("e5", tau=-1.0, version=version)  # a line the candidate must not take
    meta = {"heldout_sets_trained_on": list(round36.TRAINED_ON), "routed_hard_benign_weight": 2.0}
    dataclasses.replace(refit, meta={**refit.meta, **meta}).save(tmp_path / "EZ.npz")
    round36.write_candidate(tmp_path / "cand", tmp_path / "EZ.npz", 2.0)
    written = VetoWeights.load(tmp_path / "cand" / "intent_veto_e5.npz")
    packaged = VetoWeights.load(shipped_weights("e5"))
    assert loo.settings_of(written) == loo.settings_of(packaged)
    assert np.array_equal(written.head_weight, VetoWeights.load(tmp_path / "EZ.npz").head_weight)
    assert written.meta["line_and_raise_chosen"].startswith("not chosen")
    assert "--routed-hard-benign-weight 2" in written.meta["fitted"]
    assert set(written.meta["heldout_sets_trained_on"]) == set(round36.TRAINED_ON)
    round36.write_candidate(tmp_path / "cand37", tmp_path / "EZ.npz", 1.0)  # round 37's header names no weight
    fitted37 = VetoWeights.load(tmp_path / "cand37" / "intent_veto_e5.npz").meta["fitted"]
    assert "no row weighed up" in fitted37 and "--routed-hard-benign-weight" not in fitted37
    assert filecmp.cmp(tmp_path / "cand" / "intent_veto_minilm.npz", shipped_weights("minilm"), shallow=False)


def fake_reading(calibration: tuple[int, int], public: tuple[int, int], calib: list[Any]) -> Any:
    """A FAKE `intent_veto_judge.judge`: on the calibration rows `calib` the packaged guard and the candidate flag
    `calibration` rows (of 100); on each public bucket the candidate flags `public` (k, n), the packaged guard none."""
    import intent_generalisation as ig

    def read(examples: list[Any], candidates: tuple[Path, ...]) -> dict[str, Any]:
        del candidates
        packaged, candidate = (calibration[0], 100), (calibration[1], 100)
        if examples is not calib:
            packaged, candidate = (0, public[1]), public
        configurations = {"v13 + second opinion": packaged, "v13 + candidate second opinion cand": candidate}
        return {
            "configurations": {"v13 alone": {"benign_flagged": ig.share(9, 9), "second_opinion": {}}}
            | {name: {"benign_flagged": ig.share(*kn), "second_opinion": {}} for name, kn in configurations.items()}
        }

    return read


@pytest.mark.parametrize(
    ("calibration", "public", "holds"),
    [
        ((2, 2), (1, 100), (True, True)),
        ((2, 3), (1, 100), (False, True)),  # EZ flags one calibration row more
        ((2, 1), (2, 100), (True, False)),  # 2% of every bucket: over the 1% goal
        ((0, 0), (0, 0), (True, False)),  # an empty bucket has no rate (missing, not 0): the gate fails closed
    ],
)
def test_the_steps_read_the_calibration_bound_and_the_public_gate(
    monkeypatch: pytest.MonkeyPatch, calibration: tuple[int, int], public: tuple[int, int], holds: tuple[bool, bool]
) -> None:
    round36 = routed_round()
    import intent_sets as isets

    fake = isets.Example("a question", 0, "q", "en", "public")
    buckets = {name: [fake] for name in ("sage", "healthcaremagic", "icliniq", "enron")}
    corpus = isets.Corpus(calib=[fake], test=buckets)
    monkeypatch.setattr(round36.ti, "build_corpus", lambda data: corpus)
    monkeypatch.setattr(round36.judge, "judge", fake_reading(calibration, public, corpus.calib))
    monkeypatch.setattr(round36.judge, "shipped_version", lambda: "v13")
    result = round36.steps(Path("data"), Path("cand"))
    assert (result["calibration_holds"], result["public_holds"]) == holds
    assert set(result["read"]["calibration"]) == {round36.PACKAGED, "v13 + candidate second opinion cand"}


def test_a_rerun_stops_now_that_the_packaged_e5_file_trained_on_every_read_set(tmp_path: Path) -> None:
    round36 = routed_round()
    version = str(IntentModel.load().meta["model_version"])
    refit = fake_weights("e5", tau=2.5, version=version)
    meta = {"heldout_sets_trained_on": list(round36.TRAINED_ON)}
    dataclasses.replace(refit, meta={**refit.meta, **meta}).save(tmp_path / "EZ1.npz")
    with pytest.raises(SystemExit, match=r"EZ1B, shipped in session 54"):
        round36.main(["--round", "37", "--refit", str(tmp_path / "EZ1.npz"), "--candidate", str(tmp_path / "cand")])
    assert not (tmp_path / "cand").exists()
