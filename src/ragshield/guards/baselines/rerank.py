"""Re-ranker baseline (`rerank`): drop weakly relevant chunks by a finer relevance score.

TGTB and LeakDojo re-rank with `BAAI/bge-reranker-large`, a cross-encoder that is not
installable offline here. This baseline uses the system's own embedder instead, at a finer
grain than retrieval: a chunk's relevance is the largest cosine similarity between the
query and any one of the chunk's sentences,

    relevance(chunk) = max over sentences s of cos(embed(query), embed(s))   in [-1, 1], higher = more relevant

A question about one symptom matches one sentence of a relevant record strongly, while an
extraction query ("... please repeat all the context") matches no sentence well. Chunks
with relevance below `min_relevance` are dropped; the rest are re-ordered by relevance
(their `similarity` becomes the relevance, so hits stay sorted). When every chunk is
dropped, the prompt has no context.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ragshield.errors import ConfigError
from ragshield.guards.base import Defense
from ragshield.rag.embedding import embed_documents
from ragshield.types import RetrievalResult, ScoredChunk

if TYPE_CHECKING:
    from ragshield.guards.factory import DefenseContext
    from ragshield.rag.embedding import Embedder

NAME = "rerank"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str, *, max_sentences: int = 32, min_chars: int = 3) -> list[str]:
    """The chunk's sentences (split after . ! ? and at line breaks), at most `max_sentences`."""
    pieces = [piece.strip() for piece in _SENTENCE.split(text)]
    kept = [piece for piece in pieces if len(piece) >= min_chars]
    return kept[:max_sentences] or [text]


class SentenceReranker:
    """ContextDecorator: re-scores hits by best query-sentence cosine and drops those below `min_relevance`.

    Args:
        embedder: the embedder (the system's; one batch per query: query + all sentences).
        min_relevance: cosine in [-1, 1] a chunk's best sentence must reach.
        top_n: keep at most this many chunks after re-ranking (None: all that pass).
        max_sentences: sentences per chunk considered (bounds the cost on long chunks).
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        min_relevance: float = 0.35,
        top_n: int | None = None,
        max_sentences: int = 32,
        name: str = NAME,
    ) -> None:
        if not -1.0 <= min_relevance <= 1.0:
            raise ConfigError(f"rerank min_relevance is a cosine in [-1, 1], got {min_relevance}")
        if top_n is not None and top_n < 1:
            raise ConfigError(f"rerank top_n must be >= 1 or None, got {top_n}")
        self.name = name
        self.embedder = embedder
        self.min_relevance = float(min_relevance)
        self.top_n = top_n
        self.max_sentences = max_sentences

    def relevance(self, query: str, texts: list[str]) -> list[float]:
        """Each text's best sentence cosine with the query."""
        split = [sentences(text, max_sentences=self.max_sentences) for text in texts]
        flat = [sentence for parts in split for sentence in parts]
        # the sentences are indexed text (an embedder's document side), the query is asked
        cosines = embed_documents(self.embedder, flat) @ self.embedder.embed([query])[0]
        scores: list[float] = []
        start = 0
        for parts in split:
            scores.append(float(np.max(cosines[start : start + len(parts)])))
            start += len(parts)
        return scores

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        if not retrieval.hits:
            return retrieval
        scores = self.relevance(retrieval.query.text, [hit.chunk.text for hit in retrieval.hits])
        ranked = sorted(
            ((score, hit) for score, hit in zip(scores, retrieval.hits, strict=True) if score >= self.min_relevance),
            key=lambda pair: -pair[0],
        )[: self.top_n]
        hits = tuple(ScoredChunk(hit.chunk, score, rank) for rank, (score, hit) in enumerate(ranked))
        kept_ids = {hit.chunk.id for hit in hits}
        markers = {key: value for key, value in retrieval.markers.items() if key in kept_ids}
        return replace(retrieval, hits=hits, markers=markers)


def build_defense(
    context: DefenseContext,
    *,
    min_relevance: float = 0.35,
    top_n: int | None = None,
    max_sentences: int = 32,
) -> Defense:
    """Re-ranker: drop chunks whose best sentence is weakly similar to the query (system embedder).

    Raises:
        ConfigError: invalid value; no embedder in the context.
    """
    embedder = context.embedder or (context.retriever.embedder if context.retriever is not None else None)
    if embedder is None:
        raise ConfigError("defense 'rerank' needs the system's embedder (DefenseContext.embedder)")
    reranker = SentenceReranker(embedder, min_relevance=min_relevance, top_n=top_n, max_sentences=max_sentences)
    return Defense(name=NAME, decorators=(reranker,), fail_closed=context.fail_closed)
