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
    assert (candidate.router, packaged.router) == (2, 1)
    assert {k: v for k, v in candidate.meta.items() if k != "router"} == packaged.meta
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
