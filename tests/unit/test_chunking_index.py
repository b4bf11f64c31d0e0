"""Chunkers, indexes and index persistence."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.errors import ConfigError, IndexLoadError
from ragshield.rag.backends.faiss import FaissIndex
from ragshield.rag.build import build_index
from ragshield.rag.chunking import RecordChunker, RecursiveCharacterChunker
from ragshield.rag.embedding import HashingEmbedder
from ragshield.rag.index import NumpyIndex
from ragshield.rag.retriever import open_retriever
from ragshield.rag.store import open_index
from ragshield.types import Chunk, Document, Query


def test_record_chunker_keeps_one_record_per_chunk() -> None:
    docs = [Document("a", "first"), Document("b", "  "), Document("c", "third")]
    chunks = list(RecordChunker().split(docs))
    assert [c.id for c in chunks] == ["a", "c"]  # blank records are skipped


def test_recursive_chunker_respects_size_and_overlap() -> None:
    text = " ".join(f"word{i}." for i in range(2000))
    chunker = RecursiveCharacterChunker(chunk_size=300, overlap=50)
    pieces = chunker.split_text(text)
    assert len(pieces) > 10
    assert all(len(piece) <= 300 for piece in pieces)
    assert pieces[1].split()[0] in pieces[0]  # consecutive chunks overlap
    joined = " ".join(pieces)
    assert all(f"word{i}." in joined for i in range(2000))  # nothing lost


def test_recursive_chunker_rejects_bad_sizes() -> None:
    with pytest.raises(ConfigError):
        RecursiveCharacterChunker(chunk_size=100, overlap=100)


@pytest.mark.parametrize("index_class", [NumpyIndex, FaissIndex])
def test_indexes_return_sorted_cosine_scores(index_class: type) -> None:
    embedder = HashingEmbedder(64)
    chunks = [Chunk(str(i), str(i), f"document number {i} about topic {i % 3}") for i in range(20)]
    index = index_class(64)
    index.add(chunks, embedder.embed([c.text for c in chunks]))
    hits = index.search(embedder.embed(["document number 7 about topic 1"])[0], 5)
    assert hits[0].chunk.id == "7"
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert [h.rank for h in hits] == list(range(5))
    assert all(a.similarity >= b.similarity for a, b in itertools.pairwise(hits))
    assert len(index.search(embedder.embed(["x"])[0], 100)) == 20  # k larger than the index


def test_index_rejects_nan_vectors() -> None:
    index = NumpyIndex(2)
    with pytest.raises(ValueError, match="NaN"):
        index.add([Chunk("a", "a", "a")], np.array([[np.nan, 1.0]]))


def test_index_is_reused_when_corpus_and_embedder_are_unchanged(tmp_path: Path) -> None:
    corpus = make_synthetic_corpus(20, seed=0)
    embedder = HashingEmbedder(32)
    manifest, rebuilt = build_index(corpus, embedder, tmp_path)
    assert rebuilt and manifest.count == 20
    _, rebuilt_again = build_index(corpus, embedder, tmp_path)
    assert not rebuilt_again
    _, rebuilt_other = build_index(make_synthetic_corpus(21, seed=0), embedder, tmp_path)
    assert rebuilt_other
    index, _ = open_index(tmp_path)
    assert len(index) == 21
    assert (tmp_path / "pii.jsonl").exists()


def test_missing_and_corrupt_indexes_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(IndexLoadError, match="ragshield index"):
        open_index(tmp_path / "nowhere")
    build_index(make_synthetic_corpus(5), HashingEmbedder(16), tmp_path)
    (tmp_path / "index.faiss").write_bytes(b"garbage")
    with pytest.raises(IndexLoadError, match="corrupt"):
        open_index(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(IndexLoadError, match="corrupt"):
        open_index(tmp_path)


def test_retriever_refuses_an_index_built_with_another_embedder(tmp_path: Path) -> None:
    build_index(make_synthetic_corpus(5), HashingEmbedder(16), tmp_path)
    with pytest.raises(IndexLoadError, match="built with"):
        open_retriever(tmp_path, HashingEmbedder(32))
    retriever, _ = open_retriever(tmp_path, HashingEmbedder(16))
    result = retriever.retrieve(Query("headache"), 3)
    assert len(result.hits) == 3


class AsymmetricFake(HashingEmbedder):
    """A hashing FAKE whose document side differs from its query side, as e5's prefixes do."""

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        return self.embed([f"passage {text}" for text in texts])


def test_an_embedders_document_side_is_what_the_index_stores(tmp_path: Path) -> None:
    corpus = make_synthetic_corpus(5, seed=0)
    embedder = AsymmetricFake(64)
    build_index(corpus, embedder, tmp_path)
    retriever, _ = open_retriever(tmp_path, embedder)
    text = corpus.documents[0].text
    hit = retriever.retrieve(Query(text), 1).hits[0]
    stored = embedder.embed_documents([text])[0] @ embedder.embed([text])[0]
    assert hit.similarity == pytest.approx(float(stored), abs=1e-5)
    assert hit.similarity < 0.999  # the query side was not what was stored
