"""The twentieth round's script (`benchmarks/intent_router.py`): its candidate is the packaged model naming router 2,
and it reads only sets the e5 second opinion never trained on."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

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


def test_the_round_chooses_on_read_sets_no_second_opinion_trained_on() -> None:
    trained = {
        name
        for encoder in ("minilm", "e5")
        for name in VetoWeights.load(shipped_weights(encoder)).meta.get("heldout_sets_trained_on", [])
    }
    assert all(name in isets.HELDOUT_SETS for name in router.DEVELOPMENT)
    assert not trained & set(router.DEVELOPMENT) and len(router.DEVELOPMENT) == 12


def test_errors_count_benign_flags_and_missed_requests() -> None:
    result = {
        "configurations": {
            "g": {"benign_flagged": {"k": 3, "n": 200}, "requests_caught": {"k": 90, "n": 140}},
        }
    }
    assert router.errors(result, "g") == {"benign_flagged": 3, "benign": 200, "missed": 50, "requests": 140}
