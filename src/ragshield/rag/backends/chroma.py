"""Chroma behind the retrieval seam: embedded in the index folder, or a Chroma server or
distributed cluster reached by URI, through the same collection code.

- embedded (`uri` empty): `chromadb.PersistentClient` over `<folder>/chroma/`, one collection;
- server (`uri` = `http[s]://host:port[?tenant=T&database=D]`): `chromadb.HttpClient`; the
  collection name is derived from the corpus hash and the embedder, so folders indexing the
  same chunks share it. The URI is stored in the manifest, so it must not hold credentials.

Chroma searches an HNSW graph (approximate). Its settings are the backend's parameters
(`SETTINGS`: `space`, `ef_construction`, `ef_search`, `max_neighbors`, `sync_threshold`,
`resize_factor`), checked by `resolve_settings`, written into the collection's configuration and
recorded, defaults filled in, in the index manifest (`backend_params`); `open` refuses a collection
whose configuration no longer matches the manifest. benchmarks/retrieval.py measures recall
against exact FAISS search per setting; docs/vector-stores.md gives the table behind `DEFAULTS`.

Whatever the space, `similarity` is the inner product of the L2-normalised vectors, the scale
FAISS `IndexFlatIP` gives: `ip` and `cosine` distances are 1 - <q, v>, so similarity = 1 - d;
`l2` is the squared Euclidean distance 2 - 2<q, v>, so similarity = 1 - d / 2.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np

from ragshield.errors import BackendUnavailable, ConfigError, IndexLoadError, missing_extra
from ragshield.rag.index import IndexManifest, check_vectors, query_vector
from ragshield.types import Chunk, ScoredChunk

EXTRA = "chroma"
EMBEDDED_FOLDER = "chroma"
EMBEDDED_COLLECTION = "ragshield"
SPACES = ("ip", "cosine", "l2")
# name -> (type, smallest, largest): the HNSW settings Chroma keeps in a collection's configuration.
# The upper bounds stop a configuration from asking for a graph that cannot be built in memory.
SETTINGS: dict[str, tuple[type, float, float]] = {
    "ef_construction": (int, 1, 4096),  # candidates kept while linking a new vector (build breadth)
    "ef_search": (int, 1, 4096),  # candidates kept while searching (search breadth; raised to k if below)
    "max_neighbors": (int, 2, 512),  # graph degree M: memory and build time grow with it, so does recall
    "sync_threshold": (int, 2, 10_000_000),  # vectors added between writes of the graph to disk
    "resize_factor": (float, 1.01, 10.0),  # growth factor of the graph's storage when full
}
# chosen from benchmarks/results/retrieval_{real,sweep}.json (docs/vector-stores.md has the table):
# M 32 beats M 16 at every ef_search on hard (random) vectors, and ef_search 400 over 200 lifts their
# recall@3 from 0.92 to 0.98 (20k) and 0.80 to 0.89 (50k) for search time only; real MiniLM vectors
# are exact from ef_search 100 at the sizes measured
DEFAULTS: dict[str, str | int | float] = {
    "space": "ip",
    "ef_construction": 200,
    "ef_search": 400,
    "max_neighbors": 32,
    "sync_threshold": 1000,
    "resize_factor": 1.2,
}
PAGE = 5000  # rows per `get` when reading the whole knowledge base back


class ChromaIndex:
    """One Chroma collection as a `StoredIndex` (similarity = inner product, higher = closer)."""

    def __init__(self, collection: Any, dimension: int, *, max_batch: int, settings: Mapping[str, Any]) -> None:
        self.dimension = dimension
        self.settings = dict(settings)
        self._to_similarity = _similarity(str(settings["space"]))
        self._collection = collection
        self._max_batch = max(1, max_batch)
        self._count = int(collection.count())
        self._chunks: list[Chunk] | None = None

    def __len__(self) -> int:
        return self._count

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        vectors = check_vectors(chunks, vectors, self.dimension)
        ids = [chunk.id for chunk in chunks]
        if len(set(ids)) != len(ids):
            raise ValueError("chunk ids must be unique within an index")
        for start in range(0, len(chunks), self._max_batch):
            batch = chunks[start : start + self._max_batch]
            self._collection.add(
                ids=ids[start : start + self._max_batch],
                embeddings=vectors[start : start + self._max_batch],
                documents=[chunk.text for chunk in batch],
                metadatas=[_metadata(chunk, self._count + start + row) for row, chunk in enumerate(batch)],
            )
        self._count += len(chunks)
        self._chunks = None

    def search(self, vector: np.ndarray, k: int) -> list[ScoredChunk]:
        if self._count == 0 or k <= 0:
            return []
        found = self._collection.query(
            query_embeddings=query_vector(vector, self.dimension),
            n_results=min(k, self._count),
            include=["documents", "metadatas", "distances"],
        )
        rows = zip(found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0], strict=True)
        return [
            ScoredChunk(_chunk(chunk_id, text, meta), self._to_similarity(float(distance)), rank)
            for rank, (chunk_id, text, meta, distance) in enumerate(rows)
        ]

    @property
    def chunks(self) -> list[Chunk]:
        """The whole knowledge base in insertion order (read from the store once, then cached)."""
        if self._chunks is None:
            rows: list[tuple[int, Chunk]] = []
            for offset in range(0, self._count, PAGE):
                page = self._collection.get(limit=PAGE, offset=offset, include=["documents", "metadatas"])
                for chunk_id, text, meta in zip(page["ids"], page["documents"], page["metadatas"], strict=True):
                    rows.append((int(meta["row"]), _chunk(chunk_id, text, meta)))
            rows.sort(key=lambda row: row[0])
            self._chunks = [chunk for _, chunk in rows]
        return list(self._chunks)

    def commit(self) -> None:
        """Nothing to do: Chroma makes each `add` durable."""


class ChromaBackend:
    """Chroma, embedded in the index folder or a server/cluster by URI (extra `chroma`)."""

    extra = EXTRA

    def settings(self, params: Mapping[str, object]) -> dict[str, Any]:
        return resolve_settings(params)

    def create(
        self,
        folder: Path,
        dimension: int,
        *,
        uri: str = "",
        collection: str = "",
        params: Mapping[str, object] | None = None,
    ) -> ChromaIndex:
        settings = resolve_settings(params or {})
        client = _client(folder, uri)
        name = collection or EMBEDDED_COLLECTION
        # a rebuild replaces the collection; absent is the usual case, and the store has no "exists" call
        with contextlib.suppress(Exception):
            client.delete_collection(name)
        try:
            created = client.create_collection(
                name,
                embedding_function=None,  # vectors come from ragshield's embedder; Chroma's default downloads a model
                configuration={"hnsw": settings},
            )
        except ValueError as error:
            raise ConfigError(f"Chroma refused collection {name!r}: {error}") from error
        return ChromaIndex(created, dimension, max_batch=_max_batch(client), settings=settings)

    def open(self, folder: Path, manifest: IndexManifest) -> ChromaIndex:
        client = _client(folder, manifest.uri, for_manifest=True)
        name = manifest.collection or EMBEDDED_COLLECTION
        try:
            collection = client.get_collection(name, embedding_function=None)
        except Exception as error:
            raise IndexLoadError(
                f"index at {folder}: no Chroma collection {name!r} at {_where(folder, manifest.uri)} "
                f"({type(error).__name__}); rebuild it with: ragshield index --backend chroma"
            ) from error
        settings = _stored_settings(collection)
        drifted = {
            key: (value, settings.get(key))
            for key, value in manifest.backend_params.items()
            if key in settings and settings[key] != value
        }
        if drifted:
            changes = ", ".join(f"{key} {want!r} -> {have!r}" for key, (want, have) in sorted(drifted.items()))
            raise IndexLoadError(
                f"index at {folder}: Chroma collection {name!r} no longer has the HNSW settings its manifest "
                f"records ({changes}); rebuild it with: ragshield index --backend chroma"
            )
        index = ChromaIndex(collection, manifest.dimension, max_batch=_max_batch(client), settings=settings)
        if len(index) != manifest.count:
            raise IndexLoadError(
                f"index at {folder}: Chroma collection {name!r} holds {len(index)} chunks, the manifest "
                f"{manifest.count}; rebuild it with: ragshield index --backend chroma"
            )
        return index

    def read_chunks(self, folder: Path, manifest: IndexManifest) -> list[Chunk]:
        return self.open(folder, manifest).chunks


def resolve_settings(params: Mapping[str, object]) -> dict[str, Any]:
    """The HNSW settings of a new collection: `DEFAULTS` overridden by `params`.

    Raises:
        ConfigError: an unknown name (the message lists the valid ones), a value of the wrong
            type or outside its range, or a space other than `SPACES`.
    """
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"chroma backend: unknown parameter(s) {unknown}; valid: {', '.join(DEFAULTS)}")
    settings = dict(DEFAULTS)
    for key, value in params.items():
        settings[key] = _checked(key, value)
    return settings


def _checked(key: str, value: object) -> str | int | float:
    if key == "space":
        if value not in SPACES:
            raise ConfigError(f"chroma backend: space must be one of {', '.join(SPACES)}, got {value!r}")
        return str(value)
    kind, low, high = SETTINGS[key]
    # bool is an int to Python, never a graph size; a float setting takes ints (2 -> 2.0)
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if not numeric or (kind is int and not isinstance(value, int)):
        raise ConfigError(f"chroma backend: {key} must be {'an integer' if kind is int else 'a number'}, got {value!r}")
    number = kind(value)
    if not low <= number <= high:
        raise ConfigError(f"chroma backend: {key} must be in [{low:g}, {high:g}], got {value!r}")
    return number


def _stored_settings(collection: Any) -> dict[str, Any]:
    """The HNSW settings in a collection's configuration (a collection made before they were
    recorded, or without them, reads as Chroma's `ip` space with its stored values)."""
    stored = (getattr(collection, "configuration", None) or {}).get("hnsw") or {}
    settings = {key: stored[key] for key in DEFAULTS if stored.get(key) is not None}
    settings.setdefault("space", "ip")
    return settings


def _similarity(space: str) -> Callable[[float], float]:
    """Chroma distance -> inner product of the L2-normalised vectors (see the module docstring)."""
    if space == "l2":
        return lambda distance: 1.0 - distance / 2.0
    return lambda distance: 1.0 - distance


def parse_uri(uri: str) -> dict[str, Any]:
    """`HttpClient` arguments from `http[s]://host[:port][?tenant=T&database=D]`.

    Raises:
        ConfigError: another scheme, no host, credentials in the URI, or unknown query keys.
    """
    parts = urlsplit(uri)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ConfigError(f"Chroma URI {uri!r}: expected http[s]://host:port")
    if parts.username or parts.password:
        raise ConfigError("Chroma URI: credentials do not belong in the URI (it is stored in the index manifest)")
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    unknown = set(query) - {"tenant", "database"}
    if unknown:
        raise ConfigError(f"Chroma URI: unknown parameter(s) {sorted(unknown)}; valid: tenant, database")
    ssl = parts.scheme == "https"
    return {"host": parts.hostname, "port": parts.port or (443 if ssl else 8000), "ssl": ssl, **query}


def _client(folder: Path, uri: str, *, for_manifest: bool = False) -> Any:
    chromadb = _chromadb()
    settings = chromadb.config.Settings(anonymized_telemetry=False)
    if not uri:
        path = folder / EMBEDDED_FOLDER
        if for_manifest and not path.is_dir():
            raise IndexLoadError(
                f"index at {folder} is incomplete ({path} is missing); rebuild it with: ragshield index"
            )
        return chromadb.PersistentClient(path=str(path), settings=settings)
    try:
        arguments = parse_uri(uri)
    except ConfigError as error:
        if for_manifest:
            raise IndexLoadError(f"index at {folder}: {error}; rebuild it") from error
        raise
    try:
        return chromadb.HttpClient(settings=settings, **arguments)
    except Exception as error:
        raise BackendUnavailable(
            f"cannot reach the Chroma server at {uri} ({type(error).__name__}); start it "
            "(chroma run --path DIR --port PORT) or point --backend-uri at a running one"
        ) from error


def _where(folder: Path, uri: str) -> str:
    return uri or str(folder / EMBEDDED_FOLDER)


def _max_batch(client: Any) -> int:
    getter = getattr(client, "get_max_batch_size", None)
    return int(getter()) if getter is not None else 1000


def _metadata(chunk: Chunk, row: int) -> dict[str, str | int]:
    meta: dict[str, str | int] = {"doc_id": chunk.doc_id, "position": chunk.position, "row": row}
    if chunk.metadata:
        meta["metadata"] = json.dumps(dict(chunk.metadata), sort_keys=True)
    return meta


def _chunk(chunk_id: str, text: str | None, meta: Any) -> Chunk:
    extra = json.loads(meta["metadata"]) if "metadata" in meta else {}
    return Chunk(chunk_id, str(meta["doc_id"]), text or "", int(meta["position"]), extra)


def _chromadb() -> Any:
    try:
        import chromadb
        import chromadb.config
    except ImportError as error:
        raise missing_extra("chromadb", EXTRA) from error
    return chromadb
