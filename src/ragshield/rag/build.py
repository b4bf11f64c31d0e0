"""Build (or reuse) a persisted index folder from a corpus, with its index-time PII pass."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragshield.datasets.base import Corpus
from ragshield.errors import IndexLoadError
from ragshield.pii.spans import SPANS_FILE, analyse_chunks, write_pii_spans
from ragshield.rag.chunking import Chunker, RecordChunker
from ragshield.rag.embedding import Embedder, embed_documents
from ragshield.rag.index import IndexManifest, corpus_hash, drop_manifest, read_manifest, write_manifest
from ragshield.rag.store import (
    DEFAULT_BACKEND,
    backend_settings,
    create_index,
    default_collection,
    write_pii_inventory,
)
from ragshield.types import Chunk

if TYPE_CHECKING:
    from ragshield.pii.analyzer import PiiAnalyzer

Progress = Callable[[int, int], None]  # (chunks done so far, total)


def build_index(
    corpus: Corpus,
    embedder: Embedder,
    directory: str | Path,
    *,
    chunker: Chunker | None = None,
    corpus_spec: str = "",
    batch_size: int = 256,
    progress: Progress | None = None,
    pii: bool | PiiAnalyzer = True,
    pii_progress: Progress | None = None,
    backend: str | None = None,
    uri: str | None = None,
    params: Mapping[str, object] | None = None,
) -> tuple[IndexManifest, bool]:
    """Chunk, embed and save `corpus` under `directory`, and store the PII spans of its chunks.

    Args:
        backend: the vector store (`registry.INDEXES`); None keeps the folder's current
            backend (so `eval` rebuilds a Chroma index in Chroma), else `faiss`.
        uri: where a server-backed store lives (`http://host:port` for Chroma); None keeps
            the folder's current one when the backend is unchanged, else embedded.
        params: the store's settings (`store.backend_settings`; Chroma: its HNSW graph's), over
            its defaults; None keeps the folder's current ones when the backend is unchanged.
            The manifest records them, defaults filled in, as `backend_params`.
        pii: the index-time PII pass: True (default) runs `PiiAnalyzer()` (spaCy NER when
            the `ner` extra is installed, else pattern recognizers only) and writes
            `pii_spans.jsonl` (offsets and hashes, never values); an analyzer runs as given;
            False skips the pass (guards then find PII at request time).
        progress: called with (chunks embedded, total) after each embedding batch.
        pii_progress: called with (chunks analysed, total) during the PII pass.

    Returns the manifest and whether the vectors were rebuilt (False: an index for the
    same corpus hash, embedder, backend, URI and settings already existed and was reused; its PII
    spans are rewritten when the requested recognizers differ from the stored ones).

    Raises:
        UnknownNameError: unknown backend.
        ConfigError: `params` the backend does not know, or out of range.
        BackendUnavailable: the backend's package is missing, or its server cannot be reached.
    """
    chunks = list((chunker or RecordChunker()).split(corpus.documents))
    digest = corpus_hash(chunks)
    folder = Path(directory)
    analyzer = _analyzer(pii)
    recognizers = list(analyzer.recognizers) if analyzer is not None else []
    try:
        existing: IndexManifest | None = read_manifest(folder)
    except IndexLoadError:
        existing = None
    store = backend or (existing.backend if existing else DEFAULT_BACKEND)
    if uri is None:
        uri = existing.uri if existing and existing.backend == store else ""
    keep_params = params is None and existing is not None and existing.backend == store
    # an index built before settings were recorded keeps its (empty) record rather than being rebuilt
    settings = dict(existing.backend_params) if keep_params and existing else backend_settings(store, params)
    same_place = existing is not None and (existing.backend, existing.uri, existing.backend_params) == (
        store,
        uri,
        settings,
    )
    if existing and same_place and existing.corpus_hash == digest and existing.embedder == embedder.name:
        if analyzer is None or existing.pii_recognizers == recognizers:
            return existing, False
        # same vectors, another PII pass: rewrite the spans, then the manifest that vouches for them
        drop_manifest(folder)
        write_chunk_pii(folder, chunks, analyzer, progress=pii_progress)
        updated = replace(existing, pii_recognizers=recognizers)
        write_manifest(folder, updated)
        return updated, False
    folder.mkdir(parents=True, exist_ok=True)
    # no manifest while the folder is half rewritten: a crash leaves an index that reports itself incomplete
    drop_manifest(folder)
    # a server is shared between folders: name the collection by content there; embedded, one per folder
    collection = default_collection(digest, embedder.name) if uri else ""
    settings = backend_settings(store, settings)
    index = create_index(folder, embedder.dimension, backend=store, uri=uri, collection=collection, params=settings)
    for start in range(0, len(chunks), batch_size):
        batch = chunks[start : start + batch_size]
        index.add(batch, embed_documents(embedder, [chunk.text for chunk in batch]))
        if progress is not None:
            progress(min(start + batch_size, len(chunks)), len(chunks))
    index.commit()
    if analyzer is not None:
        write_chunk_pii(folder, chunks, analyzer, progress=pii_progress)
    else:
        (folder / SPANS_FILE).unlink(missing_ok=True)
    manifest = IndexManifest(
        embedder=embedder.name,
        dimension=embedder.dimension,
        count=len(chunks),
        corpus_hash=digest,
        corpus=corpus_spec or corpus.name,
        pii_recognizers=recognizers,
        backend=store,
        uri=uri,
        collection=collection,
        backend_params=settings,
    )
    write_pii_inventory(folder, corpus)
    write_manifest(folder, manifest)
    return manifest, True


def write_chunk_pii(
    folder: str | Path, chunks: list[Chunk], analyzer: PiiAnalyzer, *, progress: Progress | None = None
) -> int:
    """Run `analyzer` over every chunk and write `pii_spans.jsonl` in `folder`; returns the span count."""
    rows = analyse_chunks([(chunk.id, chunk.text) for chunk in chunks], analyzer, progress=progress)
    return write_pii_spans(Path(folder) / SPANS_FILE, rows)


def _analyzer(pii: bool | PiiAnalyzer) -> PiiAnalyzer | None:
    if pii is False:
        return None
    if pii is True:
        from ragshield.pii.analyzer import PiiAnalyzer

        return PiiAnalyzer()
    return pii
