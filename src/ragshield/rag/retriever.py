"""The retriever: embed the query, search the index, return the top-k WITH similarity scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragshield.rag.embedding import Embedder, make_embedder
from ragshield.rag.index import IndexManifest, VectorIndex
from ragshield.rag.store import open_index
from ragshield.types import Query, RetrievalResult


class Retriever:
    """Dense retrieval over a `VectorIndex`; similarities are cosine (higher = closer)."""

    def __init__(self, embedder: Embedder, index: VectorIndex) -> None:
        self.embedder = embedder
        self.index = index

    def retrieve(self, query: Query, k: int) -> RetrievalResult:
        vector = self.embedder.embed([query.text])[0]
        return RetrievalResult(query=query, hits=tuple(self.index.search(vector, k)), query_vector=_as_tuple(vector))

    def retrieve_many(self, queries: list[Query], k: int) -> list[RetrievalResult]:
        """Batch retrieval (one embedding pass); same results as calling `retrieve` per query."""
        vectors = self.embedder.embed([query.text for query in queries])
        return [
            RetrievalResult(query=query, hits=tuple(self.index.search(vector, k)), query_vector=_as_tuple(vector))
            for query, vector in zip(queries, vectors, strict=True)
        ]


def _as_tuple(vector: Any) -> tuple[float, ...]:
    """The query embedding as plain floats, carried on the result for query guards to reuse."""
    values = vector.tolist() if hasattr(vector, "tolist") else list(vector)
    return tuple(float(value) for value in values)


def open_retriever(directory: str | Path, embedder: Embedder | None = None) -> tuple[Retriever, IndexManifest]:
    """Open an index folder (in the backend its manifest names) with the embedder it was built with.

    Raises:
        IndexLoadError: the folder is missing or corrupt, or `embedder` differs from the manifest's.
        BackendUnavailable: the backend's package is missing (the message names the extra).
    """
    from ragshield.errors import IndexLoadError

    index, manifest = open_index(directory)
    if embedder is None:
        embedder = make_embedder(manifest.embedder)
    elif embedder.name != manifest.embedder:
        raise IndexLoadError(
            f"index at {directory} was built with {manifest.embedder!r}, not {embedder.name!r}; rebuild it"
        )
    return Retriever(embedder, index), manifest
