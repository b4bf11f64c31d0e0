"""Build (or reuse) a persisted index folder from a corpus."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ragshield.datasets.base import Corpus
from ragshield.errors import IndexLoadError
from ragshield.rag.chunking import Chunker, RecordChunker
from ragshield.rag.embedding import Embedder
from ragshield.rag.index import FaissIndex, IndexManifest, corpus_hash, read_manifest, save_index

Progress = Callable[[int, int], None]  # (chunks embedded so far, total)


def build_index(
    corpus: Corpus,
    embedder: Embedder,
    directory: str | Path,
    *,
    chunker: Chunker | None = None,
    corpus_spec: str = "",
    batch_size: int = 256,
    progress: Progress | None = None,
) -> tuple[IndexManifest, bool]:
    """Chunk, embed and save `corpus` under `directory`.

    Returns the manifest and whether the index was rebuilt (False: an index for the same
    corpus hash and embedder already existed and was reused).
    """
    chunks = list((chunker or RecordChunker()).split(corpus.documents))
    digest = corpus_hash(chunks)
    folder = Path(directory)
    try:
        existing = read_manifest(folder)
    except IndexLoadError:
        existing = None
    if existing and existing.corpus_hash == digest and existing.embedder == embedder.name:
        return existing, False
    index = FaissIndex(embedder.dimension)
    for start in range(0, len(chunks), batch_size):
        batch = chunks[start : start + batch_size]
        index.add(batch, embedder.embed([chunk.text for chunk in batch]))
        if progress is not None:
            progress(min(start + batch_size, len(chunks)), len(chunks))
    manifest = IndexManifest(
        embedder=embedder.name,
        dimension=embedder.dimension,
        count=len(chunks),
        corpus_hash=digest,
        corpus=corpus_spec or corpus.name,
    )
    save_index(folder, index, manifest)
    (folder / "pii.jsonl").unlink(missing_ok=True)
    corpus.write_pii(folder / "pii.jsonl")
    return manifest, True
