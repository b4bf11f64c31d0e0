"""How the `intent` guard gets its vectors (`ExtractionIntent` inherits `IntentEmbedding`): the retrieval's own query
vector when the system embeds with the model's embedder (no second pass), else one batched pass of the model's own
embedder; the multilingual part's vectors for the texts the router sends it, read the same way.

Apart from `intent.py` so the guard's module holds its scoring and verdicts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ragshield.errors import ConfigError
from ragshield.guards.intent_model import IntentModel
from ragshield.rag.embedding import Embedder, MultilingualE5Embedder
from ragshield.types import Query, RetrievalResult

logger = logging.getLogger("ragshield.guards.intent")  # the guard's own logger, as before this module


def _reusable_vector(item: RetrievalResult | Query | str, dimension: int) -> np.ndarray | None:
    """The retrieval's query vector (float32) when `item` carries one of `dimension`, else None."""
    vector = getattr(item, "query_vector", None)
    return np.asarray(vector, dtype=np.float32) if vector is not None and len(vector) == dimension else None


class IntentEmbedding:
    """The guard's embedding half: `embedder` (the system's, or None) and `_model()` come from the guard."""

    embedder: Embedder | None

    def _model(self) -> IntentModel:
        raise NotImplementedError

    def _embedder(self) -> tuple[Embedder, bool]:
        """The embedder for the model's vectors and whether it is the system's (vector reuse)."""
        model = self._model()
        if self.embedder is not None and getattr(self.embedder, "name", None) == model.embedder_name:
            return self.embedder, True
        if not hasattr(self, "own_embedder_"):
            from ragshield.rag.embedding import make_embedder

            logger.info("intent: the system embedder is not %s; loading it for the intent model", model.embedder_name)
            self.own_embedder_ = make_embedder(model.embedder_name)
        return self.own_embedder_, False

    def _vectors(
        self,
        items: Sequence[RetrievalResult | Query | str],
        texts: list[str],
        skip: set[int] | frozenset[int] = frozenset(),
    ) -> np.ndarray:
        """The first embedding part's vectors, one row per text; rows in `skip` (texts the
        multilingual part reads) are zeros, never embedded."""
        dimension = self._model().dimension
        out = np.zeros((len(texts), dimension), dtype=np.float32)
        wanted = [i for i in range(len(texts)) if i not in skip]
        if not wanted:
            return out
        embedder, shared = self._embedder()
        missing = []
        for i in wanted:
            vector = _reusable_vector(items[i], dimension) if shared else None
            if vector is not None:
                out[i] = vector
            else:
                missing.append(i)
        if missing:
            # every query without a reusable vector is embedded in ONE batch
            fresh = np.asarray(embedder.embed([texts[i] for i in missing]), dtype=np.float32)
            if fresh.shape != (len(missing), dimension):
                raise ConfigError(
                    f"intent model expects {dimension}-dimensional vectors from {self._model().embedder_name!r}; "
                    f"embedder {getattr(embedder, 'name', '?')!r} returned shape {fresh.shape}"
                )
            out[missing] = fresh
        return out

    def _multilingual(
        self, items: Sequence[RetrievalResult | Query | str], texts: list[str]
    ) -> dict[int, np.ndarray] | None:
        """Multilingual vectors, by row, of the texts the model routes to its multilingual part:
        the retrieval's own query vector when the system retrieves with ragshield's
        `MultilingualE5Embedder` (no second pass), the others embedded in one batch. A routed text
        missing from the result (all of them, when the `intent-multilingual` extra is not
        installed) is read by the first embedding part, as in models without a multilingual part;
        None when nothing is routed or nothing could be embedded."""
        routed = [i for i, r in enumerate(self._model().routes(texts)) if r]
        if not routed:
            return None
        # ragshield's own e5 only: a framework's wrapper under the same name may embed queries with
        # e5's "passage:" side, which the model was not trained on
        shared = isinstance(self.embedder, MultilingualE5Embedder)
        found: dict[int, np.ndarray] = {}
        for i in routed:
            vector = _reusable_vector(items[i], MultilingualE5Embedder.dimension) if shared else None
            if vector is not None:
                found[i] = vector
        missing = [i for i in routed if i not in found]
        if not missing:
            return found
        if not hasattr(self, "multilingual_embedder_"):
            available = shared or MultilingualE5Embedder.available()
            if not available:
                logger.warning(
                    "intent: non-English queries are read without the multilingual embedder; "
                    "pip install 'ragshield[intent-multilingual]' to catch them as the model card reports"
                )
            self.multilingual_embedder_ = (self.embedder if shared else MultilingualE5Embedder()) if available else None
        if self.multilingual_embedder_ is None:
            return found or None
        vectors = self.multilingual_embedder_.embed([texts[i] for i in missing])
        return {**found, **dict(zip(missing, vectors, strict=True))}
