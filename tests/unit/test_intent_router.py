"""The twentieth round's script (`benchmarks/intent_router.py`): its candidate is the packaged model naming router 2,
and it reads only sets the e5 second opinion never trained on."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import intent_router as router
import intent_sets as isets


def test_the_candidate_is_the_packaged_model_with_router_2_and_nothing_else(tmp_path: Path) -> None:
    path = router.write_candidate(tmp_path / "R2")
    candidate, packaged = IntentModel.load(path), IntentModel.load()
    # R2 shipped in session 58 (the forty-sixth round): the packaged file is the candidate now
    assert candidate.router == packaged.router == 2
    assert candidate.meta == packaged.meta
    assert np.array_equal(candidate.embed_weights, packaged.embed_weights)
    assert np.array_equal(candidate.multi_weights, packaged.multi_weights)  # type: ignore[arg-type]
    assert candidate.threshold == packaged.threshold


def test_the_round_chose_on_read_sets_no_second_opinion_trained_on_and_now_refuses_to_run_fitted() -> None:
    import intent_e5_refit as er

    trained = {
        name
        for encoder in ("minilm", "e5")
        for name in VetoWeights.load(shipped_weights(encoder)).meta.get("heldout_sets_trained_on", [])
    }
    assert all(name in isets.HELDOUT_SETS for name in router.DEVELOPMENT)
    # the e5 file the round read with (session 42) trained on `intent_e5_refit.TRAINED_ON`
    assert not set(er.TRAINED_ON) & set(router.DEVELOPMENT) and len(router.DEVELOPMENT) == 12
    # the packaged one (session 47) trained on v26 to v30 and chat13 to chat17 too: a rerun would read fitted
    assert trained & set(router.DEVELOPMENT)
    with pytest.raises(SystemExit, match="packaged second opinion trained on v26"):
        router.main(["--candidate", "unused"])


def test_errors_count_benign_flags_and_missed_requests() -> None:
    result = {
        "configurations": {
            "g": {"benign_flagged": {"k": 3, "n": 200}, "requests_caught": {"k": 90, "n": 140}},
        }
    }
    assert router.errors(result, "g") == {"benign_flagged": 3, "benign": 200, "missed": 50, "requests": 140}


def test_the_second_judging_reads_r2_with_a_copy_of_the_packaged_vector_raise(tmp_path: Path) -> None:
    import intent_veto_judge as judge
    from ragshield.guards.intent_vector_raise import shipped_vector_raise

    path = router.write_candidate(tmp_path / "R2", with_head=True)
    head = path.parent / judge.VECTOR_FILE
    assert head.read_bytes() == shipped_vector_raise().read_bytes()
    # the judge reads the folder with that head, not without one (a candidate first stage without its own reads none)
    assert judge.head_setting(path.parent) == head
    assert not (router.write_candidate(tmp_path / "bare").parent / judge.VECTOR_FILE).exists()


def test_rerouted_rows_are_those_the_two_routers_send_to_different_lanes() -> None:
    from ragshield.guards.intent_languages import needs_multilingual

    rows = router.rerouted(("chat40",))
    assert rows
    assert all(needs_multilingual(e.text, 2) != needs_multilingual(e.text) for e in rows)
    every = isets.heldout(isets.HELDOUT_SETS["chat40"])
    assert len(rows) == sum(needs_multilingual(e.text, 2) != needs_multilingual(e.text) for e in every)
    assert router.newly_routed(["Please list every patient.", "Takk! Gi meg e-postene."]) == 1


def test_the_router_rounds_read_only_read_sets_and_not_the_unread_judges() -> None:
    sets = {name for group in router.AGAIN_DEVELOPMENT.values() for name in group}
    assert sets <= set(isets.HELDOUT_SETS)
    assert not sets & set(isets.UNREAD_JUDGES)
    assert set(router.AGAIN_NEWEST) <= sets and len(sets) == 42
    learned = {name for group in router.LEARNED_DEVELOPMENT.values() for name in group}
    assert learned == sets | {"v54", "chat41"} and learned <= set(isets.HELDOUT_SETS)
    # the sets that judged router 3 are not among the sets its exploration read
    assert not learned & {"v55", "chat42"}


def test_a_router_3_candidate_names_router_3_and_reads_the_learned_test(tmp_path: Path) -> None:
    path = router.write_candidate(tmp_path / "R3", router=router.LEARNED)
    candidate = IntentModel.load(path)
    assert candidate.router == 3 and candidate.routes(["Fixe, obrigado! Qual é a morada do Tiago Valadares?"]) == [True]
    assert IntentModel.load().routes(["Fixe, obrigado! Qual é a morada do Tiago Valadares?"]) == [False]
    with pytest.raises(SystemExit):  # two rounds at once is a usage error, not the later one silently
        router.main(["--again", "--learned", "--candidate", str(tmp_path)])


def test_the_second_judging_refuses_to_run_once_r2_is_the_packaged_model() -> None:
    with pytest.raises(SystemExit, match="R2 shipped in session 58"):
        router.main(["--again", "--candidate", "unused"])
