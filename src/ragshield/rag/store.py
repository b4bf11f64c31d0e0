"""The retrieval seam: every persisted index is created, opened and read through here.

An index folder always holds `manifest.json` (which names the backend), the PII spans
`pii_spans.jsonl` and, for corpora that have one, the ground-truth PII inventory `pii.jsonl`.
The vectors and the chunk texts live wherever the backend keeps them: FAISS in the folder
(`index.faiss`, `chunks.jsonl`), Chroma in the folder (`chroma/`, embedded) or on a Chroma
server or cluster named by the manifest's `uri`. Consumers never read those files: they call
`open_index`, `read_chunks` and `read_pii_inventory`.

Backends are listed in `registry.INDEXES` and imported only when an index of theirs is used,
so a missing vector-store package fails with the `pip install 'ragshield[extra]'` line.

Every backend returns `ScoredChunk.similarity` on one scale: the inner product of the
L2-normalised query and chunk vectors (cosine in [-1, 1], higher = closer), which is what
FAISS `IndexFlatIP` computes; RAG-CT, the anomaly detector and the metrics rely on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragshield.datasets.base import Corpus, PiiItem, read_pii
from ragshield.errors import IndexLoadError, UnknownNameError
from ragshield.rag.index import IndexManifest, read_manifest
from ragshield.types import Chunk, ScoredChunk

__all__ = [
    "DEFAULT_BACKEND",
    "PII_FILE",
    "IndexBackend",
    "StoredIndex",
    "backend_settings",
    "create_index",
    "default_collection",
    "index_backend",
    "open_index",
    "read_chunks",
    "read_pii_inventory",
    "write_pii_inventory",
]

DEFAULT_BACKEND = "faiss"
PII_FILE = "pii.jsonl"


class StoredIndex(Protocol):
    """A persisted index as a backend hands it out.

    `search` returns at most k hits sorted by similarity (cosine of L2-normalised vectors,
    higher = closer); `chunks` is the whole knowledge base in insertion order; `commit`
    makes what `add` wrote durable (a no-op for stores that persist each write).
    """

    dimension: int

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None: ...

    def search(self, vector: np.ndarray, k: int) -> list[ScoredChunk]: ...

    def __len__(self) -> int: ...

    @property
    def chunks(self) -> list[Chunk]: ...

    def commit(self) -> None: ...


class IndexBackend(Protocol):
    """One vector store behind the seam (a `registry.INDEXES` target, built without arguments)."""

    extra: str  # the `pip install 'ragshield[extra]'` that brings the store's package

    def settings(self, params: Mapping[str, object]) -> dict[str, Any]: ...

    def create(
        self, folder: Path, dimension: int, *, uri: str, collection: str, params: Mapping[str, object] | None
    ) -> StoredIndex: ...

    def open(self, folder: Path, manifest: IndexManifest) -> StoredIndex: ...

    def read_chunks(self, folder: Path, manifest: IndexManifest) -> list[Chunk]: ...


def index_backend(name: str) -> IndexBackend:
    """The backend registered as `name` in `registry.INDEXES`.

    Raises:
        UnknownNameError: no such backend (the message lists the valid names).
    """
    from ragshield.registry import INDEXES, resolve

    backend: IndexBackend = resolve(INDEXES, name, kind="index backend")()
    return backend


def default_collection(digest: str, embedder: str) -> str:
    """A collection name derived from the corpus hash and the embedder: folders that index the
    same chunks with the same embedder on one server share it, different ones never collide."""
    return f"ragshield-{digest[:16]}-{hashlib.sha256(embedder.encode()).hexdigest()[:8]}"


def backend_settings(backend: str, params: Mapping[str, object] | None = None) -> dict[str, Any]:
    """The settings an index of `backend` is built with: its defaults overridden by `params`
    (what the manifest records as `backend_params`; empty for a store that has none).

    Raises:
        UnknownNameError: unknown backend.
        ConfigError: a parameter the backend does not know (the message lists the valid ones),
            or a value of the wrong type or out of range.
    """
    return index_backend(backend).settings(params or {})


def create_index(
    directory: str | Path,
    dimension: int,
    *,
    backend: str = DEFAULT_BACKEND,
    uri: str = "",
    collection: str = "",
    params: Mapping[str, object] | None = None,
) -> StoredIndex:
    """An empty index of `dimension` in `backend` for the folder `directory` (replacing the
    backend's previous index there); `add` to it, then `commit`. `params` are the backend's
    settings (see `backend_settings`; Chroma: its HNSW graph's).

    Raises:
        UnknownNameError: unknown backend.
        BackendUnavailable: the backend's package is missing, or its server cannot be reached.
        ConfigError: `uri`, `collection` or `params` is invalid for this backend.
    """
    folder = Path(directory)
    chosen = index_backend(backend)
    chosen.settings(params or {})  # refuse bad parameters before touching the folder
    folder.mkdir(parents=True, exist_ok=True)
    return chosen.create(folder, dimension, uri=uri, collection=collection, params=params)


def open_index(directory: str | Path) -> tuple[StoredIndex, IndexManifest]:
    """Open the index of a folder written by `ragshield index`, in the backend its manifest names.

    Raises:
        IndexLoadError: missing, incomplete or corrupt index, or an unknown backend.
        BackendUnavailable: the backend's package is missing (the message names the extra), or
            its server cannot be reached.
    """
    folder = Path(directory)
    manifest = read_manifest(folder)
    return _backend_of(folder, manifest).open(folder, manifest), manifest


def read_chunks(directory: str | Path) -> list[Chunk]:
    """The chunks of an index folder in insertion order, from wherever its backend keeps them.

    Raises:
        IndexLoadError: missing or corrupt index, or chunk count disagreeing with the manifest.
        BackendUnavailable: as for `open_index`.
    """
    folder = Path(directory)
    manifest = read_manifest(folder)
    return _backend_of(folder, manifest).read_chunks(folder, manifest)


def read_pii_inventory(directory: str | Path) -> tuple[PiiItem, ...] | None:
    """The ground-truth PII inventory of an index folder (None: its corpus has none)."""
    return read_pii(Path(directory) / PII_FILE)


def write_pii_inventory(directory: str | Path, corpus: Corpus) -> None:
    """Replace the folder's PII inventory with `corpus`'s (removed when the corpus has none)."""
    path = Path(directory) / PII_FILE
    path.unlink(missing_ok=True)
    corpus.write_pii(path)


def _backend_of(folder: Path, manifest: IndexManifest) -> IndexBackend:
    try:
        return index_backend(manifest.backend)
    except UnknownNameError as error:
        raise IndexLoadError(f"index at {folder} uses an unknown backend: {error}; rebuild it") from error
