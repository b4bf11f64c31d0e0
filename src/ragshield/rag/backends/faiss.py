"""FAISS behind the retrieval seam: exact inner product (`IndexFlatIP`), files in the index folder.

The folder holds `index.faiss` (the vectors) and `chunks.jsonl` (row i = the chunk of vector i).
`faiss` is imported on first use, so a missing `faiss-cpu` names the extra to install.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import ConfigError, IndexLoadError, missing_extra
from ragshield.rag.index import ChunkTable, IndexManifest, check_vectors, query_vector
from ragshield.types import Chunk, ScoredChunk, iter_jsonl, write_jsonl

EXTRA = "faiss"
INDEX_FILE = "index.faiss"
CHUNKS_FILE = "chunks.jsonl"


class FaissIndex(ChunkTable):
    """FAISS exact inner-product index (`IndexFlatIP`) with the chunk table beside it.

    Similarity is the float32 inner product of the (L2-normalised) vectors: cosine, higher = closer.
    `folder` is where `commit` writes it (None: in memory only).
    """

    def __init__(self, dimension: int, folder: Path | None = None) -> None:
        super().__init__(dimension)
        self.folder = folder
        self._index: Any = _faiss().IndexFlatIP(dimension)

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        vectors = check_vectors(chunks, vectors, self.dimension)
        self._index.add(vectors)
        self._chunks.extend(chunks)

    def search(self, vector: np.ndarray, k: int) -> list[ScoredChunk]:
        if not self._chunks or k <= 0:
            return []
        scores, ids = self._index.search(query_vector(vector, self.dimension), min(k, len(self._chunks)))
        return [
            ScoredChunk(self._chunks[int(i)], float(s), rank)
            for rank, (s, i) in enumerate(zip(scores[0], ids[0], strict=True))
            if i >= 0
        ]

    def commit(self) -> None:
        """Write `index.faiss` and `chunks.jsonl` into the folder.

        Raises:
            ValueError: the index was made in memory, without a folder.
        """
        if self.folder is None:
            raise ValueError("this FAISS index has no folder to be written to")
        _faiss().write_index(self._index, str(self.folder / INDEX_FILE))
        write_jsonl(self.folder / CHUNKS_FILE, (chunk.to_dict() for chunk in self._chunks))


class FaissBackend:
    """FAISS exact inner product, kept in the index folder (extra `faiss`)."""

    extra = EXTRA

    def settings(self, params: Mapping[str, object]) -> dict[str, Any]:
        if params:
            raise ConfigError(f"the faiss backend (exact search) takes no parameters, got {sorted(params)}")
        return {}

    def create(
        self,
        folder: Path,
        dimension: int,
        *,
        uri: str = "",
        collection: str = "",
        params: Mapping[str, object] | None = None,
    ) -> FaissIndex:
        self.settings(params or {})
        if uri:
            raise ConfigError("the faiss backend keeps its index in the folder; a URI is for server-backed stores")
        return FaissIndex(dimension, folder)

    def open(self, folder: Path, manifest: IndexManifest) -> FaissIndex:
        faiss = _faiss()  # outside the try: a missing package is not a corrupt index
        try:
            raw = faiss.read_index(str(folder / INDEX_FILE))
        except Exception as error:
            raise _corrupt(folder, error) from error
        chunks = self.read_chunks(folder, manifest)
        if raw.ntotal != len(chunks) or raw.d != manifest.dimension:
            raise IndexLoadError(f"index at {folder} is inconsistent (vector and chunk counts differ); rebuild it")
        index = FaissIndex(manifest.dimension, folder)
        index._index = raw
        index._chunks = chunks
        return index

    def read_chunks(self, folder: Path, manifest: IndexManifest) -> list[Chunk]:
        try:
            chunks = [Chunk.from_dict(row) for row in iter_jsonl(folder / CHUNKS_FILE)]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise _corrupt(folder, error) from error
        if len(chunks) != manifest.count:
            raise IndexLoadError(
                f"index at {folder} is inconsistent (chunk count differs from its manifest); rebuild it"
            )
        return chunks


def _corrupt(folder: Path, error: Exception) -> IndexLoadError:
    return IndexLoadError(f"index at {folder} is corrupt ({type(error).__name__}); rebuild it with: ragshield index")


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as error:
        raise missing_extra("faiss-cpu", EXTRA) from error
    return faiss
