"""The Chroma backend against a REAL Chroma server (`chroma run`, started here on loopback) reached
by URI: the code path a distributed Chroma cluster takes. The hashing embedder is a fake, for speed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.errors import IndexLoadError
from ragshield.rag.build import build_index
from ragshield.rag.embedding import HashingEmbedder
from ragshield.rag.index import read_manifest
from ragshield.rag.retriever import open_retriever
from ragshield.rag.store import read_chunks
from ragshield.service.server import free_port
from ragshield.types import Query

pytest.importorskip("chromadb", reason="the chroma extra is not installed: pip install 'ragshield[chroma]'")
pytestmark = pytest.mark.service

EMBEDDER = HashingEmbedder(64)


@pytest.fixture(scope="module")
def chroma_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    server = subprocess.Popen(
        [binary, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{uri}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chroma run did not come up on {uri} (exit code {server.poll()})")
            time.sleep(0.2)
        yield uri
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def test_an_index_on_a_chroma_server_matches_faiss(chroma_uri: str, tmp_path: Path) -> None:
    corpus = make_synthetic_corpus(50, seed=4)
    build_index(corpus, EMBEDDER, tmp_path / "faiss", pii=False)
    manifest, _ = build_index(corpus, EMBEDDER, tmp_path / "remote", pii=False, backend="chroma", uri=chroma_uri)
    assert manifest.uri == chroma_uri and manifest.collection.startswith("ragshield-")
    assert sorted(p.name for p in (tmp_path / "remote").iterdir()) == ["manifest.json", "pii.jsonl"]
    local, _ = open_retriever(tmp_path / "faiss", EMBEDDER)
    remote, _ = open_retriever(tmp_path / "remote", EMBEDDER)
    for text in ("fever and a cough", "send me every email address", "knee pain after running"):
        expected, got = local.retrieve(Query(text), 4).hits, remote.retrieve(Query(text), 4).hits
        assert [h.chunk for h in got] == [h.chunk for h in expected]
        assert [h.similarity for h in got] == pytest.approx([h.similarity for h in expected], abs=1e-5)
    assert read_chunks(tmp_path / "remote") == read_chunks(tmp_path / "faiss")


def test_two_folders_of_one_corpus_share_the_servers_collection(chroma_uri: str, tmp_path: Path) -> None:
    corpus = make_synthetic_corpus(12, seed=5)
    first, _ = build_index(corpus, EMBEDDER, tmp_path / "a", pii=False, backend="chroma", uri=chroma_uri)
    second, _ = build_index(corpus, EMBEDDER, tmp_path / "b", pii=False, backend="chroma", uri=chroma_uri)
    other, _ = build_index(
        make_synthetic_corpus(13, seed=5), EMBEDDER, tmp_path / "c", pii=False, backend="chroma", uri=chroma_uri
    )
    assert first.collection == second.collection != other.collection
    assert len(read_chunks(tmp_path / "a")) == 12 and len(read_chunks(tmp_path / "c")) == 13


def test_a_collection_gone_from_the_server_says_rebuild(chroma_uri: str, tmp_path: Path) -> None:
    import chromadb

    manifest, _ = build_index(
        make_synthetic_corpus(5, seed=6), EMBEDDER, tmp_path, pii=False, backend="chroma", uri=chroma_uri
    )
    port = int(chroma_uri.rsplit(":", 1)[1])
    chromadb.HttpClient(host="127.0.0.1", port=port).delete_collection(manifest.collection)
    with pytest.raises(IndexLoadError, match="rebuild it"):
        open_retriever(tmp_path, EMBEDDER)
    assert read_manifest(tmp_path).uri == chroma_uri
