"""Build (or reuse) a persisted index folder from a corpus, with its index-time PII pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragshield.datasets.base import Corpus
from ragshield.errors import IndexLoadError
from ragshield.pii.spans import SPANS_FILE, analyse_chunks, write_pii_spans
from ragshield.rag.chunking import Chunker, RecordChunker
from ragshield.rag.embedding import Embedder
from ragshield.rag.index import FaissIndex, IndexManifest, corpus_hash, read_manifest, save_index
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
) -> tuple[IndexManifest, bool]:
    """Chunk, embed and save `corpus` under `directory`, and store the PII spans of its chunks.

    Args:
        pii: the index-time PII pass: True (default) runs `PiiAnalyzer()` (spaCy NER when
            the `ner` extra is installed, else pattern recognizers only) and writes
            `pii_spans.jsonl` (offsets and hashes, never values); an analyzer runs as given;
            False skips the pass (guards then find PII at request time).
        progress: called with (chunks embedded, total) after each embedding batch.
        pii_progress: called with (chunks analysed, total) during the PII pass.

    Returns the manifest and whether the vectors were rebuilt (False: an index for the
    same corpus hash and embedder already existed and was reused; its PII spans are
    rewritten when the requested recognizers differ from the stored ones).
    """
    chunks = list((chunker or RecordChunker()).split(corpus.documents))
    digest = corpus_hash(chunks)
    folder = Path(directory)
    analyzer = _analyzer(pii)
    recognizers = list(analyzer.recognizers) if analyzer is not None else []
    try:
        existing = read_manifest(folder)
    except IndexLoadError:
        existing = None
    if existing and existing.corpus_hash == digest and existing.embedder == embedder.name:
        if analyzer is None or existing.pii_recognizers == recognizers:
            return existing, False
        # same vectors, another PII pass: rewrite the spans, then the manifest that vouches for them
        (folder / "manifest.json").unlink()
        write_chunk_pii(folder, chunks, analyzer, progress=pii_progress)
        updated = replace(existing, pii_recognizers=recognizers)
        (folder / "manifest.json").write_text(json.dumps(asdict(updated), indent=2))
        return updated, False
    folder.mkdir(parents=True, exist_ok=True)
    # no manifest while the folder is half rewritten: a crash leaves an index that reports itself incomplete
    (folder / "manifest.json").unlink(missing_ok=True)
    index = FaissIndex(embedder.dimension)
    for start in range(0, len(chunks), batch_size):
        batch = chunks[start : start + batch_size]
        index.add(batch, embedder.embed([chunk.text for chunk in batch]))
        if progress is not None:
            progress(min(start + batch_size, len(chunks)), len(chunks))
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
    )
    save_index(folder, index, manifest)
    (folder / "pii.jsonl").unlink(missing_ok=True)
    corpus.write_pii(folder / "pii.jsonl")
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
