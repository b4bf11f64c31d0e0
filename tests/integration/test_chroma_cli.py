"""`ragshield index --backend chroma`, `ask` and `eval` end to end with the REAL default embedder
(MiniLM) and a REAL embedded Chroma, beside a FAISS index of the same corpus. The target is the
echo-context generator (a fully compliant worst case), so answers are deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragshield.cli import app
from ragshield.rag.index import read_manifest

pytest.importorskip("chromadb", reason="the chroma extra is not installed: pip install 'ragshield[chroma]'")
pytestmark = pytest.mark.integration

QUESTION = "I have had a headache and a fever for three days, what should I do?"
CONFIG = """
corpus: synthetic:24
holdout: 6
index: {index}
generator: {{name: echo-context}}
k: 3
attacks: [{{name: tgtb, budget: 2}}]
defenses: [none]
benign: {{path: holdout, limit: 2}}
seed: 0
"""


def test_index_ask_and_eval_over_chroma(tmp_path: Path) -> None:
    runner = CliRunner()
    answers = {}
    for backend in ("faiss", "chroma"):
        folder = tmp_path / backend
        built = runner.invoke(
            app, ["index", "--corpus", "synthetic:24", "--out", str(folder), "--backend", backend, "--no-pii"]
        )
        assert built.exit_code == 0, built.output
        assert read_manifest(folder).backend == backend
        asked = runner.invoke(
            app, ["ask", QUESTION, "--index", str(folder), "--generator", "echo-context", "--defense", "none", "--json"]
        )
        assert asked.exit_code == 0, asked.output
        answers[backend] = json.loads(asked.stdout)
    faiss_hits, chroma_hits = answers["faiss"]["chunks"], answers["chroma"]["chunks"]
    assert [hit["id"] for hit in chroma_hits] == [hit["id"] for hit in faiss_hits] and len(faiss_hits) == 3
    assert [h["similarity"] for h in chroma_hits] == pytest.approx([h["similarity"] for h in faiss_hits], abs=1e-5)
    assert answers["chroma"]["answer"] == answers["faiss"]["answer"]

    config = tmp_path / "eval.yaml"
    config.write_text(CONFIG.format(index=tmp_path / "chroma"))
    out = tmp_path / "out"
    evaluated = runner.invoke(app, ["eval", "--config", str(config), "--out", str(out)])
    assert evaluated.exit_code == 0, evaluated.output
    results = json.loads((out / "results.json").read_text())
    assert results["meta"]["kb_size"] == 18  # 24 records less the 6 held out, rebuilt in the folder's store
    assert read_manifest(tmp_path / "chroma").backend == "chroma"
    assert [row["queries"] for row in results["attack_rows"]] == [2]
