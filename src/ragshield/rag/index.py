"""Vector indexes over L2-normalised vectors (inner product = cosine similarity).

`FaissIndex` (exact inner product, `faiss-cpu`) is the default; `NumpyIndex` is a brute-force
fallback for tiny corpora. `save_index` / `load_index` persist an index folder keyed by the
corpus hash and the embedder name, so an unchanged corpus is not re-embedded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragshield.errors import IndexLoadError, missing_extra
from ragshield.types import Chunk, ScoredChunk, iter_jsonl, write_jsonl

FORMAT_VERSION = 1


class VectorIndex(Protocol):
    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None: ...

    def search(self, vector: np.ndarray, k: int) -> list[ScoredChunk]: ...

    def __len__(self) -> int: ...


def _check_vectors(chunks: Sequence[Chunk], vectors: np.ndarray) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(chunks):
        raise ValueError(f"expected {len(chunks)} vectors as an (n, d) array, got shape {vectors.shape}")
    if not np.all(np.isfinite(vectors)):
        raise ValueError("vectors contain NaN or infinity")
    return vectors


class _ChunkTable:
    """The chunk list an index keeps beside its vectors (row i of the vectors = chunk i)."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._chunks: list[Chunk] = []

    def __len__(self) -> int:
        return len(self._chunks)

    @property
    def chunks(self) -> list[Chunk]:
        return list(self._chunks)


class NumpyIndex(_ChunkTable):
    """Brute-force exact inner-product search in numpy (for tiny corpora and tests)."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self._vectors = np.zeros((0, dimension), dtype=np.float32)

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        vectors = _check_vectors(chunks, vectors)
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


class FaissIndex(_ChunkTable):
    """FAISS exact inner-product index (`IndexFlatIP`) with the chunk table beside it."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self._index: Any = _faiss().IndexFlatIP(dimension)

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        vectors = _check_vectors(chunks, vectors)
        if vectors.shape[1] != self.dimension:
            raise ValueError(f"index has dimension {self.dimension}, vectors have {vectors.shape[1]}")
        self._index.add(vectors)
        self._chunks.extend(chunks)

    def search(self, vector: np.ndarray, k: int) -> list[ScoredChunk]:
        if not self._chunks or k <= 0:
            return []
        query = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        scores, ids = self._index.search(query, min(k, len(self._chunks)))
        return [
            ScoredChunk(self._chunks[int(i)], float(s), rank)
            for rank, (s, i) in enumerate(zip(scores[0], ids[0], strict=True))
            if i >= 0
        ]


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as error:  # pragma: no cover - depends on the install
        raise missing_extra("faiss-cpu", "models") from error
    return faiss


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
    """

    embedder: str
    dimension: int
    count: int
    corpus_hash: str
    corpus: str
    format_version: int = FORMAT_VERSION
    pii_recognizers: list[str] = field(default_factory=list)


def save_index(directory: str | Path, index: FaissIndex, manifest: IndexManifest) -> None:
    """Write `index.faiss`, `chunks.jsonl` and `manifest.json` (manifest last, so a crash mid-save
    leaves a folder that `load_index` reports as incomplete rather than a wrong index)."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").unlink(missing_ok=True)
    _faiss().write_index(index._index, str(folder / "index.faiss"))
    write_jsonl(folder / "chunks.jsonl", (chunk.to_dict() for chunk in index.chunks))
    (folder / "manifest.json").write_text(json.dumps(manifest.__dict__, indent=2))


def read_manifest(directory: str | Path) -> IndexManifest:
    """The manifest of an index folder.

    Raises:
        IndexLoadError: the folder or its manifest is missing or unreadable.
    """
    folder = Path(directory)
    path = folder / "manifest.json"
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


def load_index(directory: str | Path) -> tuple[FaissIndex, IndexManifest]:
    """Load an index folder written by `save_index`.

    Raises:
        IndexLoadError: missing files, corrupt data or counts that disagree.
    """
    folder = Path(directory)
    manifest = read_manifest(folder)
    try:
        raw = _faiss().read_index(str(folder / "index.faiss"))
        chunks = [Chunk.from_dict(row) for row in iter_jsonl(folder / "chunks.jsonl")]
    except Exception as error:
        raise IndexLoadError(
            f"index at {folder} is corrupt ({type(error).__name__}); rebuild it with: ragshield index"
        ) from error
    if raw.ntotal != len(chunks) or len(chunks) != manifest.count or raw.d != manifest.dimension:
        raise IndexLoadError(f"index at {folder} is inconsistent (vector and chunk counts differ); rebuild it")
    index = FaissIndex(manifest.dimension)
    index._index = raw
    index._chunks = chunks
    return index, manifest
