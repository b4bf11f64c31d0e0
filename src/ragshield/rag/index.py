"""Vector indexes over L2-normalised vectors (inner product = cosine similarity), and the manifest
of an index folder.

`NumpyIndex` is a brute-force in-memory index for tiny corpora and tests. Persisted indexes
live behind the retrieval seam (`ragshield.rag.store`): one backend per vector store
(`rag/backends/faiss.py`, `rag/backends/chroma.py`), named in the folder's manifest, which is
keyed by the corpus hash and the embedder name so an unchanged corpus is not re-embedded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragshield.errors import IndexLoadError
from ragshield.types import Chunk, ScoredChunk

FORMAT_VERSION = 1
MANIFEST_FILE = "manifest.json"


class VectorIndex(Protocol):
    """Top-k search over chunk vectors; `similarity` is the inner product of L2-normalised
    vectors (cosine in [-1, 1], higher = closer), whatever the store's native distance."""

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None: ...

    def search(self, vector: np.ndarray, k: int) -> list[ScoredChunk]: ...

    def __len__(self) -> int: ...


def check_vectors(chunks: Sequence[Chunk], vectors: np.ndarray, dimension: int | None = None) -> np.ndarray:
    """`vectors` as a C-contiguous float32 (n, d) array, one row per chunk.

    Raises:
        ValueError: wrong shape or dimension, NaN or infinity.
    """
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(chunks):
        raise ValueError(f"expected {len(chunks)} vectors as an (n, d) array, got shape {vectors.shape}")
    if dimension is not None and vectors.shape[1] != dimension:
        raise ValueError(f"index has dimension {dimension}, vectors have {vectors.shape[1]}")
    if not np.all(np.isfinite(vectors)):
        raise ValueError("vectors contain NaN or infinity")
    return vectors


def query_vector(vector: np.ndarray, dimension: int) -> np.ndarray:
    """One query as a (1, d) float32 row.

    Raises:
        ValueError: the query has another dimension than the index.
    """
    query = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1))
    if query.shape[1] != dimension:
        raise ValueError(f"index has dimension {dimension}, the query vector has {query.shape[1]}")
    return query


class ChunkTable:
    """The chunk list an index keeps beside its vectors (row i of the vectors = chunk i)."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._chunks: list[Chunk] = []

    def __len__(self) -> int:
        return len(self._chunks)

    @property
    def chunks(self) -> list[Chunk]:
        return list(self._chunks)


class NumpyIndex(ChunkTable):
    """Brute-force exact inner-product search in numpy (for tiny corpora and tests)."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self._vectors = np.zeros((0, dimension), dtype=np.float32)

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        vectors = check_vectors(chunks, vectors, self.dimension)
        self._chunks.extend(chunks)
        self._vectors = np.vstack([self._vectors, vectors])

    def search(self, vector: np.ndarray, k: int) -> list[ScoredChunk]:
        if not self._chunks or k <= 0:
            return []
        scores = self._vectors @ np.asarray(vector, dtype=np.float32).reshape(-1)
        k = min(k, len(self._chunks))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [ScoredChunk(self._chunks[i], float(scores[i]), rank) for rank, i in enumerate(top)]


def corpus_hash(chunks: Iterable[Chunk]) -> str:
    """SHA-256 over chunk ids and texts, in order: the key that decides whether to re-embed."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk.id.encode())
        digest.update(b"\0")
        digest.update(chunk.text.encode())
        digest.update(b"\1")
    return digest.hexdigest()


@dataclass(frozen=True)
class IndexManifest:
    """What an index folder holds; `embedder` must match the query embedder.

    `pii_recognizers` names the recognizers of the index-time PII pass whose spans are in
    `pii_spans.jsonl` (empty: no pass; manifests written before the field load as empty).
    `backend` names the vector store (`registry.INDEXES`; manifests written before the field
    load as `faiss`); `uri` is where a server-backed store lives (empty: embedded in the
    folder) and `collection` the store's name for this index (empty: the backend's one
    embedded collection, or none for FAISS). `backend_params` are the store's settings the
    index was built with, defaults filled in (Chroma: its HNSW graph's; empty for FAISS and
    for manifests written before the field).
    """

    embedder: str
    dimension: int
    count: int
    corpus_hash: str
    corpus: str
    format_version: int = FORMAT_VERSION
    pii_recognizers: list[str] = field(default_factory=list)
    backend: str = "faiss"
    uri: str = ""
    collection: str = ""
    backend_params: dict[str, Any] = field(default_factory=dict)


def read_manifest(directory: str | Path) -> IndexManifest:
    """The manifest of an index folder.

    Raises:
        IndexLoadError: the folder or its manifest is missing or unreadable.
    """
    folder = Path(directory)
    path = folder / MANIFEST_FILE
    if not folder.is_dir():
        raise IndexLoadError(f"no index at {folder}; build one with: ragshield index --corpus synthetic --out {folder}")
    try:
        data = json.loads(path.read_text())
        manifest = IndexManifest(**data)
    except (OSError, ValueError, TypeError) as error:
        raise IndexLoadError(
            f"index at {folder} is incomplete or corrupt ({type(error).__name__}); rebuild it with: ragshield index"
        ) from error
    if manifest.format_version != FORMAT_VERSION:
        raise IndexLoadError(
            f"index at {folder} has format {manifest.format_version}; rebuild it with: ragshield index"
        )
    return manifest


def write_manifest(directory: str | Path, manifest: IndexManifest) -> None:
    """Write the manifest of an index folder: the last step of a build, so that a folder whose
    build crashed has none and reports itself incomplete rather than serving a wrong index."""
    (Path(directory) / MANIFEST_FILE).write_text(json.dumps(asdict(manifest), indent=2))


def drop_manifest(directory: str | Path) -> None:
    """Remove the manifest before rewriting a folder (see `write_manifest`)."""
    (Path(directory) / MANIFEST_FILE).unlink(missing_ok=True)
