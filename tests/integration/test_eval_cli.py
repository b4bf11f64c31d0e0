"""`ragshield eval` and `ragshield report` end to end with the REAL models (MiniLM, SmolLM2-135M)
on a tiny synthetic knowledge base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragshield.cli import app
from ragshield.types import Transcript

pytestmark = pytest.mark.integration

CONFIG = """
corpus: synthetic:40
holdout: 12
generator: {name: llama-cpp}
k: 3
max_tokens: 16
attacks: [{name: tgtb, budget: 2}]
defenses: [none, rag-ct]
benign: {path: holdout, limit: 2}
calibration: {path: holdout, target_fpr: 0.1, limit: 10}
seed: 0
"""


def test_eval_then_report_with_real_models(tmp_path: Path) -> None:
    config = tmp_path / "eval.yaml"
    config.write_text(CONFIG)
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "--config", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "leakage: synthetic:40" in result.output

    results = json.loads((out / "results.json").read_text())
    assert {(r["attack"], r["defense"]) for r in results["attack_rows"]} == {("tgtb", "none"), ("tgtb", "rag-ct")}
    assert results["meta"]["generator"] == "smollm2-135m-instruct"
    assert results["meta"]["kb_size"] == 28
    undefended = Transcript.read_jsonl(out / "transcripts" / "tgtb__none.jsonl")
    assert len(undefended.responses) == 2
    assert all(r.retrieval is not None and len(r.retrieval.hits) == 3 for r in undefended.responses)
    assert any(r.text.strip() for r in undefended.responses)  # the real model answered
    guarded = Transcript.read_jsonl(out / "transcripts" / "tgtb__rag-ct.jsonl")
    assert all(any(v.guard == "rag-ct" for v in r.verdicts) for r in guarded.responses)
    benign = {row["defense"]: row for row in results["benign_rows"]}
    assert set(benign) == {"none", "rag-ct"} and benign["none"]["latency_p50_ms"] > 0

    (out / "report.md").unlink()
    rebuilt = runner.invoke(app, ["report", str(out), "--no-plots"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "RAG-CT paper's Table 1" in (out / "report.md").read_text()
    assert json.loads((out / "results.json").read_text())["attack_rows"] == results["attack_rows"]
