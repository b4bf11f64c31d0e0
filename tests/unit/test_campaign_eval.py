"""`targets:` in eval configs with FAKES (hashing embedder, echo-context worst-case model, a
RunnableLambda app): a grid spans targets like defenses, and a local target's cell equals the
defense grid's cell of the same defense."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragshield.errors import ConfigError
from ragshield.evaluation.config import EvalConfig
from ragshield.evaluation.harness import Parts, run_evaluation
from ragshield.generators.scripted import EchoContextGenerator
from ragshield.rag.embedding import HashingEmbedder
from ragshield.types import Transcript


def config(**overrides: Any) -> EvalConfig:
    data: dict[str, Any] = {
        "corpus": "synthetic:30",
        "embedder": "hashing",
        "generator": {"name": "echo-context"},
        "attacks": [{"name": "tgtb", "budget": 4}],
        "targets": [
            {"kind": "local", "label": "local-rule", "options": {"defense": "rule-based"}},
            {
                "kind": "langchain",
                "label": "app",
                "options": {"runnable": "test_campaign_eval:refusing_app", "refused_key": "refused"},
            },
        ],
    }
    data.update(overrides)
    return EvalConfig.model_validate(data)


def refusing_app() -> object:
    """FAKE app that refuses everything (a dict output with a refusal flag)."""
    pytest.importorskip("langchain_core")
    from langchain_core.runnables import RunnableLambda

    return RunnableLambda(lambda question: {"answer": "no", "refused": True})


def test_targets_are_cells_beside_defenses(tmp_path: Path) -> None:
    pytest.importorskip("langchain_core")
    run_evaluation(
        config(defenses=["rule-based"]),
        tmp_path,
        parts=Parts(embedder=HashingEmbedder(), generator=EchoContextGenerator()),
    )
    rows = {r["defense"]: r for r in json.loads((tmp_path / "results.json").read_text())["attack_rows"]}
    assert set(rows) == {"rule-based", "local-rule", "app"}
    assert rows["app"]["blocked"] == 4 and rows["app"]["ulc"] == 0
    by_grid = Transcript.read_jsonl(next((tmp_path / "transcripts").glob("tgtb__rule-based*")))
    by_target = Transcript.read_jsonl(next((tmp_path / "transcripts").glob("tgtb__local-rule*")))
    assert [(r.query.text, r.text) for r in by_target.responses] == [(r.query.text, r.text) for r in by_grid.responses]
    assert (tmp_path / "campaigns" / "tgtb__app.jsonl").exists()


def test_target_labels_must_not_collide() -> None:
    with pytest.raises(ValueError, match="target labels"):
        config(defenses=["app"])
    with pytest.raises((ValueError, ConfigError)):
        config(targets=[{"kind": "rest", "label": "a"}, {"kind": "rest", "label": "a"}])
