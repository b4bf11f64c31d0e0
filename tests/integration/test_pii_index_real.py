"""The index-time PII pass on real chunks (HealthcareMagic and Enron from ../shared/data): the spans
written verify against the chunk text, hold no values, and the store reads them back."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragshield.datasets.base import Corpus, load_corpus
from ragshield.pii import PiiAnalyzer, open_chunk_pii_store, pii_digest
from ragshield.rag.build import build_index
from ragshield.rag.embedding import HashingEmbedder
from ragshield.types import Chunk, iter_jsonl

pytestmark = pytest.mark.shared_data


@pytest.mark.parametrize(("name", "records"), [("healthcaremagic", 40), ("enron", 12)])
def test_real_chunks_get_spans_that_verify_and_hold_no_values(
    shared_data: Path, tmp_path: Path, name: str, records: int
) -> None:
    corpus = load_corpus(f"{name}:{shared_data / (name + '.jsonl')}", limit=records)
    analyzer = PiiAnalyzer()
    folder = tmp_path / name
    manifest, _ = build_index(
        Corpus(corpus.name, corpus.documents), HashingEmbedder(), folder, corpus_spec=name, pii=analyzer
    )
    assert manifest.pii_recognizers == list(analyzer.recognizers)
    chunks = {chunk.id: chunk for chunk in (Chunk.from_dict(row) for row in iter_jsonl(folder / "chunks.jsonl"))}
    store = open_chunk_pii_store(folder, analyzer=analyzer)
    assert store.source == "index"
    raw = (folder / "pii_spans.jsonl").read_text(encoding="utf-8")
    found = 0
    for chunk in chunks.values():
        values = store.values(chunk)
        found += len(values)
        for value in values:
            assert pii_digest(value.value) == value.digest and value.value in chunk.text
            if len(value.value) >= 6:  # a short value ("US") can occur by chance in the hex digests
                assert value.value not in raw
    assert found > 0 and store.fallbacks == 0
