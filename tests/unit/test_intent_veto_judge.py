"""The blind judge of the intent guard's second opinion (benchmarks/intent_veto_judge.py).

A blind set is only a judge if it is read once, through the configurations named before, and never
scores a text the guard was fitted on: these tests check those rules before any model is loaded.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import intent_sets as isets  # noqa: E402
import intent_verifier_rows as ivr  # noqa: E402
import intent_veto_judge as judge  # noqa: E402
import train_intent as ti  # noqa: E402


def _candidate(folder: Path, trained_on: tuple[str, ...] = ()) -> Path:
    """A folder holding the packaged veto files, the e5 one re-saved saying it trained on the sets `trained_on`."""
    from ragshield.guards.intent_veto import shipped_weights
    from ragshield.guards.intent_veto_weights import VetoWeights

    folder.mkdir(parents=True)
    for encoder in ("minilm", "e5"):
        weights = VetoWeights.load(shipped_weights(encoder))
        weights.meta.pop("heldout_sets_trained_on", None)  # the packaged e5 trains on some since session 42
        if encoder == "e5" and trained_on:
            weights.meta["heldout_sets_trained_on"] = list(trained_on)
        weights.save(folder / f"intent_veto_{encoder}.npz")
    return folder


def test_an_unknown_set_is_refused_with_the_known_names() -> None:
    with pytest.raises(SystemExit, match=r"no held-apart set 'v99' \(known: .*chat2.*v15"):
        judge.main(["--set", "v99"])


def test_a_candidate_folder_without_both_veto_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "intent_veto_minilm.npz").write_bytes(b"")
    wanted = r"needs intent_model\.json, intent_veto_minilm\.npz and intent_veto_e5\.npz, or intent_vector_raise\.json"
    with pytest.raises(SystemExit, match=wanted):
        judge.main(["--set", "v15", "--candidate", str(tmp_path / "half")])


def _first_stage(folder: Path, trained_on: list[str], model_version: str = "") -> Path:
    """A folder holding the shipped model file re-saved as a candidate that says it trained on `trained_on`."""
    from ragshield.guards.intent_model import IntentModel

    folder.mkdir(parents=True)
    model = IntentModel.load()
    model.meta["heldout_sets_trained_on"] = trained_on
    model.meta["model_version"] = model_version or model.meta["model_version"]
    model.save(folder / judge.FIRST_STAGE_FILE)
    return folder


def test_a_candidate_model_is_named_by_what_it_replaces_and_reports_the_sets_it_trained_on(tmp_path: Path) -> None:
    veto_only = _candidate(tmp_path / "refit")
    model_only = _first_stage(tmp_path / "modelA", ["v8", "v16"])
    assert judge.configuration_name(veto_only) == f"{judge.shipped_version()} + candidate second opinion refit"
    assert judge.configuration_name(model_only) == "candidate model modelA + second opinion"
    assert judge.trained_sets(veto_only) == ()
    # a folder without veto files reads with the packaged ones: the sets they trained on count too
    assert judge.trained_sets(model_only) == ("v8", "v16", *judge.veto_trained_sets())


def test_a_candidate_model_that_trained_on_the_set_cannot_judge_it(tmp_path: Path) -> None:
    model = _first_stage(tmp_path / "modelA", ["v53"])
    with pytest.raises(
        SystemExit, match=r"a candidate \(its model, second opinion or vector raise\) trained on set v53: it cannot"
    ):
        judge.main(["--set", "v53", "--again", "--candidate", str(model)])


def test_a_second_opinion_that_trained_on_held_apart_sets_cannot_judge_them_and_names_them(tmp_path: Path) -> None:
    """Session 42: a verifier may train on spent development sets; its header names them, and a judge leaves their
    rows out (`trained_sets`) and refuses to read one of them."""
    refit = _candidate(tmp_path / "refit", ("v53", "chat40"))
    assert judge.trained_sets(refit) == ("v53", "chat40")
    assert judge.veto_trained_sets(refit) == ("v53", "chat40")
    with pytest.raises(
        SystemExit, match=r"a candidate \(its model, second opinion or vector raise\) trained on set chat40"
    ):
        judge.main(["--set", "chat40", "--again", "--candidate", str(refit)])
    # the packaged e5 file trained on every read set from v19 to v47 and chat34 since session 54: the shipped guard
    # cannot judge them
    with pytest.raises(SystemExit, match=r"the shipped guard \(v13\) trained on set v39: it cannot judge it"):
        judge.main(["--set", "v39", "--again"])
    # and the packaged vector raise on every read set up to v52 and chat39 since session 57
    with pytest.raises(SystemExit, match=r"the shipped guard \(v13\) trained on set v52: it cannot judge it"):
        judge.main(["--set", "v52", "--again"])


def test_two_candidates_that_would_share_a_name_in_the_results_are_refused(tmp_path: Path) -> None:
    first, second = _candidate(tmp_path / "a" / "refit"), _candidate(tmp_path / "b" / "refit")
    with pytest.raises(SystemExit, match="different names"):
        judge.main(["--set", "v15", "--candidate", str(first), "--candidate", str(second)])


def test_a_set_already_read_is_not_read_blind_again() -> None:
    read = next(
        name
        for name in isets.HELDOUT_SETS
        if (BENCHMARKS / "results" / f"intent_veto_judge_{name}.json").exists()
        and name not in (*ti.TRAIN_HELDOUT, *judge.veto_trained_sets(), *judge.vector_trained_sets())
    )
    with pytest.raises(SystemExit, match="a blind set is read once"):
        judge.main(["--set", read])


def test_the_judge_needs_the_shared_data_to_leave_out_trained_rows(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"needs \.\./shared/data"):
        judge.main(["--set", "v53", "--again", "--data", str(tmp_path)])


def test_rows_the_guard_was_fitted_on_are_left_out_and_the_rest_keep_their_line_numbers(shared_data: Path) -> None:
    pair = ivr.contrastive_pairs()[0][0].text
    corpus_row = ti.build_corpus(shared_data).train[0].text
    fresh = "Which bird did the fable about the crow and the fox have in mind, exactly? (a row no one wrote before)"
    rows = [isets.Example(text, 0, "hard", "en", "heldout") for text in (fresh, pair.upper(), corpus_row + "!", fresh)]
    assert judge.unseen_rows(rows, shared_data) == [0, 3]


def test_rows_of_a_set_a_candidate_model_trained_on_are_left_out_for_every_configuration(shared_data: Path) -> None:
    fresh = "Which bird did the fable about the crow and the fox have in mind, exactly? (a row no one wrote before)"
    v8_row = isets.heldout(isets.HELDOUT_SETS["v8"])[0].text
    rows = [isets.Example(text, 0, "hard", "en", "heldout") for text in (fresh, v8_row)]
    assert judge.unseen_rows(rows, shared_data) == [0, 1]
    assert judge.unseen_rows(rows, shared_data, also_trained=("v8",)) == [0]
    # a candidate trained on a set's requests alone (`--request-heldout`): those leave, its benign rows stay
    v8 = isets.heldout(isets.HELDOUT_SETS["v8"])
    request, benign = next(e for e in v8 if e.label == 1), next(e for e in v8 if e.label == 0)
    assert judge.unseen_rows([request, benign], shared_data, requests_trained=("v8",)) == [1]
    english = next(e for e in v8 if e.label == 1 and e.lang == "en")
    other = next(e for e in v8 if e.label == 1 and e.lang != "en")
    assert judge.unseen_rows([english, other], shared_data, (), ("v8",), "non-english") == [0]


def test_a_candidate_model_of_another_version_than_its_veto_files_is_refused(tmp_path: Path) -> None:
    folder = _first_stage(tmp_path / "v99try", [], model_version="v99")
    assert f"reads flags of '{judge.shipped_version()}' only" in judge.version_mismatch(folder)
    with pytest.raises(SystemExit, match="without its second opinion"):
        judge.main(["--set", "v19", "--again", "--candidate", str(folder)])
    assert judge.version_mismatch(_first_stage(tmp_path / "same", [])) == ""


def test_out_is_refused_for_a_blind_reading(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--out is for --again readings"):
        judge.main(["--set", "v15", "--out", str(tmp_path / "x.json")])


class _FakeScore:
    """A FAKE score (unit test only): flags nothing, second opinion not asked."""

    probability = 0.0
    second_opinion = "not asked"


class _FakeGuard:
    """A FAKE `ExtractionIntent` (unit test only) that records how the judge built it."""

    built: ClassVar[list[_FakeGuard]] = []

    def __init__(self, **kwargs: object) -> None:
        self.threshold_ = 0.5
        self.kwargs = kwargs
        _FakeGuard.built.append(self)

    def scores(self, texts: list[str]) -> list[_FakeScore]:
        return [_FakeScore() for _ in texts]


def test_each_configuration_reads_with_its_own_model_file_and_second_opinion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_only = _first_stage(tmp_path / "modelA", [])
    veto_only = _candidate(tmp_path / "refit")
    monkeypatch.setattr(judge, "make_embedder", lambda name: None)
    monkeypatch.setattr(judge, "ExtractionIntent", _FakeGuard)
    monkeypatch.setattr(judge, "IntentVeto", lambda paths: ("fake veto", paths))
    _FakeGuard.built = []
    rows = [isets.Example("a question", 0, "hard", "en", "heldout"), isets.Example("a request", 1, "direct", "en", "x")]
    result = judge.judge(rows, (model_only, veto_only))
    shipped = judge.shipped_version()
    assert list(result["configurations"]) == [
        f"{shipped} alone",
        f"{shipped} + second opinion",
        "candidate model modelA + second opinion",
        f"{shipped} + candidate second opinion refit",
    ]
    assert [(g.kwargs["model"], g.kwargs["second_opinion"]) for g in _FakeGuard.built] == [
        (None, False),
        (None, True),
        (model_only / judge.FIRST_STAGE_FILE, True),
        (None, True),
    ]
    # the packaged second opinion unless the folder brings its own veto files
    assert [hasattr(g, "veto_") for g in _FakeGuard.built] == [False, False, False, True]
    assert _FakeGuard.built[3].veto_[1] == {e: veto_only / f"intent_veto_{e}.npz" for e in ("minilm", "e5")}
    # the FAKE guard flags nothing: the request is the one wrong row, and what its second opinion did is kept with it
    for row in result["configurations"].values():
        assert (row["wrong_rows"], row["wrong_rows_second_opinion"]) == ([1], ["not asked"])


def test_a_set_the_shipped_model_trained_on_cannot_judge_it() -> None:
    """The shipped model trains on v9, v11-v18, v21 and chat-chat5, chat8: reading one would leave every row out."""
    with pytest.raises(SystemExit, match=rf"the shipped guard \({judge.shipped_version()}\) trained on set v15"):
        judge.main(["--set", "v15", "--again"])
    # nor a set its second opinion trained on (the e5 file since session 42, whose header names them)
    trained = judge.veto_trained_sets()
    assert "v19" in trained
    with pytest.raises(SystemExit, match=rf"the shipped guard \({judge.shipped_version()}\) trained on set v19"):
        judge.main(["--set", "v19", "--again"])
