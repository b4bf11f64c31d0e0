"""Every attack against the REAL pipeline: MiniLM + FAISS over the synthetic corpus, SmolLM2-135M
(llama.cpp) as target and attacker LLM, MiniLM as Pirates' attacker embedder. Tiny budgets:
this checks that each attack drives a real system end to end, not how much it extracts
(benchmarks/attacks.py measures that)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragshield.attacks import make_attack, run_attack
from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.generators.scripted import EchoContextGenerator
from ragshield.metrics.leakage import compute_leakage
from ragshield.rag.pipeline import RagPipeline
from ragshield.rag.prompting import PromptBuilder
from ragshield.registry import ATTACKS

pytestmark = pytest.mark.integration

# two queries for the attacks that learn from responses (the second one uses what the first
# taught them), one for the fixed-pool attacks
BUDGET = {"rag-thief": 2, "pirates": 2}
# short answers and attacker outputs keep the whole module near a minute on 2 CPU cores
PARAMS: dict[str, dict[str, Any]] = {
    "rag-thief": {"attacker_max_tokens": 48},
    "pirates": {"attacker_max_tokens": 24},
}


@pytest.fixture(scope="module")
def real_pipeline(synthetic_retriever, smollm) -> RagPipeline:  # type: ignore[no-untyped-def]
    return RagPipeline(synthetic_retriever, smollm, prompt_builder=PromptBuilder(max_tokens=24), k=2)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_drives_the_real_pipeline(name: str, real_pipeline: RagPipeline, smollm, minilm) -> None:  # type: ignore[no-untyped-def]
    attack = make_attack(name, attacker=smollm, embedder=minilm, **PARAMS.get(name, {}))
    budget = BUDGET.get(name, 1)
    transcript = run_attack(attack, real_pipeline, budget=budget, seed=0)
    assert transcript.kind == "attack" and transcript.name == name and transcript.defense == "none"
    assert len(transcript.responses) == budget
    for number, response in enumerate(transcript.responses):
        assert response.query.id == f"{name}-0-{number:05d}" and response.query.user_id == "attacker"
        assert response.retrieval is not None and len(response.retrieval.hits) == 2
        assert response.finish_reason in ("stop", "length") and response.text.strip()
        assert response.timings_ms["generate"] > 0 and response.timings_ms["retrieve"] > 0
    if name == "pirates":
        assert len(attack.anchors) >= 1 and all(0.0 < r <= 1.0 for r in attack.relevance[:1])  # type: ignore[attr-defined]


def test_tgtb_against_the_worst_case_target_leaks_retrieved_records(synthetic_retriever, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The labelled worst-case target copies its context: real retrieval decides what leaks."""
    pipeline = RagPipeline(synthetic_retriever, EchoContextGenerator(), k=3)
    transcript = run_attack(make_attack("tgtb"), pipeline, budget=6, seed=1)
    corpus = make_synthetic_corpus(300, seed=0)  # the records behind the synthetic_index fixture
    assert corpus.pii is not None
    report = compute_leakage(transcript, synthetic_retriever.index.chunks, corpus.pii)
    retrieved = {hit.chunk.id for r in transcript.responses for hit in (r.retrieval.hits if r.retrieval else ())}
    assert report.ulc == len(retrieved) >= 3 and report.pii > 0
    transcript.write_jsonl(tmp_path / "tgtb.jsonl")
    assert (tmp_path / "tgtb.jsonl").read_text().count("\n") == 7
