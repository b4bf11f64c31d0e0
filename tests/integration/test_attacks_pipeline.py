"""Every attack against the REAL pipeline: MiniLM + FAISS over the synthetic corpus, SmolLM2-135M
(llama.cpp) as target and attacker LLM, MiniLM as Pirates' attacker embedder. Tiny budgets:
this checks that each attack drives a real system end to end, not how much it extracts
(benchmarks/attacks.py measures that).

Only what the pipeline guarantees is asserted (the transcript's shape, ids, retrieval, finish
reasons, timings, that the target model was called once per query), never what the model
chose to say: SmolLM2's output differs between CPUs, and an empty answer is a valid answer."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragshield.attacks import make_attack, run_attack
from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.generators.scripted import EchoContextGenerator
from ragshield.metrics.leakage import compute_leakage
from ragshield.pipeline import RagPipeline
from ragshield.rag.prompting import PromptBuilder
from ragshield.registry import ATTACKS
from ragshield.types import GenerationRequest

pytestmark = pytest.mark.integration

# two queries for the attacks that learn from responses (the second one uses what the first
# taught them), one for the fixed-pool attacks
BUDGET = {"rag-thief": 2, "pirates": 2}
# short answers and attacker outputs keep the whole module near a minute on 2 CPU cores
PARAMS: dict[str, dict[str, Any]] = {
    "rag-thief": {"attacker_max_tokens": 48},
    "pirates": {"attacker_max_tokens": 24},
}


class CountingTarget:
    """The real target model, counting the answers asked of it (the attacker's calls are not
    counted: the attack holds the unwrapped model)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = model.name
        self.calls = 0

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        self.calls += 1
        return iter(self.model.stream(request))


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_drives_the_real_pipeline(name: str, synthetic_retriever, smollm, minilm) -> None:  # type: ignore[no-untyped-def]
    target = CountingTarget(smollm)
    pipeline = RagPipeline(synthetic_retriever, target, prompt_builder=PromptBuilder(max_tokens=24), k=2)
    attack = make_attack(name, attacker=smollm, embedder=minilm, **PARAMS.get(name, {}))
    budget = BUDGET.get(name, 1)
    transcript = run_attack(attack, pipeline, budget=budget, seed=0)
    assert transcript.kind == "attack" and transcript.name == name and transcript.defense == "none"
    assert len(transcript.responses) == budget
    assert target.calls == budget  # every query reached the model (no defense refuses)
    for number, response in enumerate(transcript.responses):
        assert response.query.id == f"{name}-0-{number:05d}" and response.query.user_id == "attacker"
        assert response.query.text.strip()  # the attack sent a query (the pipeline refuses empty ones)
        assert response.retrieval is not None and len(response.retrieval.hits) == 2
        assert response.finish_reason in ("stop", "length") and isinstance(response.text, str)
        assert response.error is None and not response.blocked
        assert response.timings_ms["generate"] > 0 and response.timings_ms["retrieve"] > 0
        assert response.timings_ms["total"] >= response.timings_ms["generate"]
    if name == "pirates":
        anchors, relevance = attack.anchors, attack.relevance  # type: ignore[attr-defined]
        assert anchors[0] == "love" and len(relevance) == len(anchors)  # the seed anchor is kept
        assert all(math.isfinite(r) for r in relevance)


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
