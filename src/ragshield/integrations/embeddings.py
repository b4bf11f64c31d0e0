"""The application's own embedding model as a ragshield `Embedder`.

Guards that embed text (the `intent` bank, `query-shield`'s intent part, `rerank`) take a
ragshield `Embedder`: `embed(texts) -> (n, d) float32`, L2-normalised, plus `name` and
`dimension`. An application built on LangChain or LlamaIndex already has an embedding model;
these wrappers let the guards use it, so no second model is loaded:

* `LangChainEmbedder(embeddings)` - any LangChain `Embeddings` (`embed_documents`).
* `LlamaIndexEmbedder(embed_model)` - any LlamaIndex `BaseEmbedding` (`get_text_embedding_batch`).
* `as_embedder(obj)` - the object itself when it is a ragshield `Embedder`, else the wrapper that
  fits it; anything else raises a `ConfigError` that says what is accepted.

`Shield.build(embedder=...)` and the adapters call `as_embedder`, so they accept all three.
Neither framework is imported here: the wrappers only call the methods named above.

Texts are embedded as documents (LangChain's `embed_documents`), queries included: the guards
compare queries with each other and with fixed instruction banks, so one space for all is what
they need. Models with separate query and document prompts (e5, bge with instructions) still
work, with slightly blurrier similarities; the `intent` guard reuses multilingual-e5-small's
vectors only from ragshield's own `MultilingualE5Embedder` (unwrapped from `RagshieldEmbeddings`
/ `RagshieldEmbedding`), never from a framework's model under that name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.rag.embedding import Embedder, l2_normalise

__all__ = ["LangChainEmbedder", "LlamaIndexEmbedder", "as_embedder"]

# attributes under which the frameworks' embedding classes keep their model's name
_NAME_ATTRIBUTES = ("model_name", "model", "model_id", "deployment")


def _model_name(model: Any, fallback: str) -> str:
    for attribute in _NAME_ATTRIBUTES:
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return fallback


class _ForeignEmbedder:
    """Shared part of the wrappers: normalisation, the lazily measured dimension, the name."""

    def __init__(self, model: Any, name: str | None) -> None:
        self.model = model
        self._name = name or _model_name(model, type(model).__name__)
        self._dimension: int | None = None

    @property
    def name(self) -> str:
        """The wrapped model's name (the `intent` guard reuses query vectors when it is the model's own)."""
        return self._name

    @property
    def dimension(self) -> int:
        """Vector length, measured with one embedding call on first use."""
        if self._dimension is None:
            self._dimension = int(self.embed(["dimension probe"]).shape[1])
        return self._dimension

    def _rows(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(n, d) float32 rows, L2-normalised (so a dot product is a cosine similarity)."""
        texts = [str(text) for text in texts]
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        vectors = np.asarray(self._rows(texts), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ConfigError(
                f"{type(self.model).__name__} returned shape {vectors.shape} for {len(texts)} texts; "
                "expected one row per text"
            )
        self._dimension = int(vectors.shape[1])
        return l2_normalise(vectors)


class LangChainEmbedder(_ForeignEmbedder):
    """A LangChain `Embeddings` object as a ragshield `Embedder`.

    Args:
        embeddings: the application's LangChain embeddings (`HuggingFaceEmbeddings`,
            `OpenAIEmbeddings`, ...).
        name: the model name in ragshield (default: the object's `model_name` / `model`).
    """

    def __init__(self, embeddings: Any, *, name: str | None = None) -> None:
        super().__init__(embeddings, name)

    def _rows(self, texts: list[str]) -> Any:
        return self.model.embed_documents(texts)


class LlamaIndexEmbedder(_ForeignEmbedder):
    """A LlamaIndex `BaseEmbedding` as a ragshield `Embedder`.

    Args:
        embed_model: the application's LlamaIndex embedding model.
        name: the model name in ragshield (default: the object's `model_name`).
    """

    def __init__(self, embed_model: Any, *, name: str | None = None) -> None:
        super().__init__(embed_model, name)

    def _rows(self, texts: list[str]) -> Any:
        return self.model.get_text_embedding_batch(texts)


def _is_ragshield_embedder(obj: Any) -> bool:
    return callable(getattr(obj, "embed", None)) and hasattr(obj, "name") and hasattr(obj, "dimension")


def as_embedder(obj: Any) -> Embedder | None:
    """`obj` as a ragshield `Embedder` (None stays None).

    Raises:
        ConfigError: `obj` is neither a ragshield `Embedder`, a LangChain `Embeddings` nor a
            LlamaIndex embedding model.
    """
    if obj is None or _is_ragshield_embedder(obj):
        embedder: Embedder | None = obj
        return embedder
    # ragshield's own model behind `RagshieldEmbeddings` (LangChain) or `RagshieldEmbedding` (LlamaIndex)
    inner: Any = getattr(obj, "embedder", None)
    if _is_ragshield_embedder(inner):
        unwrapped: Embedder = inner
        return unwrapped
    if callable(getattr(obj, "embed_documents", None)) and callable(getattr(obj, "embed_query", None)):
        return LangChainEmbedder(obj)
    if callable(getattr(obj, "get_text_embedding_batch", None)):
        return LlamaIndexEmbedder(obj)
    raise ConfigError(
        f"embedder must be a ragshield Embedder (e.g. SentenceTransformerEmbedder()), a LangChain Embeddings "
        f"or a LlamaIndex embedding model; got {type(obj).__name__}"
    )
