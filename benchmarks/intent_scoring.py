"""How the intent benchmarks score texts with a model file (issue 18): cached embedders, and the
probabilities the guard gives (`ExtractionIntent.scores`), routed and obfuscated texts included.
"""

from __future__ import annotations

from typing import Any

import query_sets as qs
from ragshield.guards.intent_model import IntentModel, IntentScore
from ragshield.rag.embedding import MultilingualE5Embedder

CACHE = qs.REPO / "runs" / "intent-cache" / "embeddings.npz"
MULTI_CACHE = qs.REPO / "runs" / "intent-cache" / "multilingual.npz"


class Embedders:
    """The cached MiniLM embedder (`embed`, `name`) and the cached multilingual one (`multi`)."""

    def __init__(self) -> None:
        self.main = qs.CachedEmbedder(qs.SentenceTransformerEmbedder(), CACHE)
        self.multi = qs.CachedEmbedder(MultilingualE5Embedder(), MULTI_CACHE)  # type: ignore[arg-type]
        self.name = self.main.name

    def embed(self, texts: list[str]) -> Any:
        return self.main.embed(texts)

    def save(self) -> None:
        self.main.save()
        self.multi.save()


def guard_scores(model: IntentModel, texts: list[str], embedders: Embedders) -> list[IntentScore]:
    routed = [i for i, r in enumerate(model.routes(texts)) if r]
    multi = dict(zip(routed, embedders.multi.embed([texts[i] for i in routed]), strict=True)) if routed else None
    return model.score(texts, embedders.embed(texts), multi)


def first_stage_scores(model: IntentModel, texts: list[str], embedders: Embedders) -> list[IntentScore]:
    """The model's scores as the guard's first stage gives them (`ExtractionIntent.scores` without its second
    opinion), with multilingual vectors for the texts it routes there and obfuscated texts read again."""
    return model.with_readable_forms(
        texts, guard_scores(model, texts, embedders), lambda f: guard_scores(model, f, embedders)
    )


def probabilities(model: IntentModel, texts: list[str], embedders: Embedders) -> Any:
    """The probabilities of `first_stage_scores` (an empty array for no texts)."""
    import numpy as np

    if not texts:
        return np.empty(0)
    return np.array([s.probability for s in first_stage_scores(model, texts, embedders)])
