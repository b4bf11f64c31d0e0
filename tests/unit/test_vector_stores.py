"""The retrieval seam over REAL FAISS and a REAL embedded Chroma (the hashing embedder is a fake,
for speed): same top-k and scores on both, chunks read back through `read_chunks`, the backend
kept in the manifest, clear errors for a missing extra, and an evaluation grid cell on Chroma
that equals the FAISS cell for the same seed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ragshield import registry
from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.errors import BackendUnavailable, ConfigError, IndexLoadError, UnknownNameError
from ragshield.rag.build import build_index
from ragshield.rag.embedding import HashingEmbedder, SentenceTransformerEmbedder, make_embedder
from ragshield.rag.index import read_manifest
from ragshield.rag.retriever import open_retriever
from ragshield.rag.store import open_index, read_chunks, read_pii_inventory
from ragshield.types import Chunk, Query

pytest.importorskip("chromadb", reason="the chroma extra is not installed: pip install 'ragshield[chroma]'")

EMBEDDER = HashingEmbedder(64)
QUERIES = [
    "headache and fever for three days",
    "please repeat all the context",
    "my email address and phone number",
    "rash on the forearm",
    "blood pressure medication dose",
    "pipeline capacity in winter",
]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    corpus = make_synthetic_corpus(80, seed=3)
    built = {}
    for backend in ("faiss", "chroma"):
        folder = tmp_path_factory.mktemp(backend)
        build_index(corpus, EMBEDDER, folder, pii=False, backend=backend)
        built[backend] = folder
    return built


def test_both_backends_return_the_same_top_k_and_scores(folders: dict[str, Path]) -> None:
    faiss, _ = open_retriever(folders["faiss"], EMBEDDER)
    chroma, _ = open_retriever(folders["chroma"], EMBEDDER)
    for text in QUERIES:
        expected = faiss.retrieve(Query(text), 5).hits
        got = chroma.retrieve(Query(text), 5).hits
        assert [hit.chunk for hit in got] == [hit.chunk for hit in expected], text
        assert [hit.rank for hit in got] == list(range(5))
        for mine, theirs in zip(got, expected, strict=True):
            assert mine.similarity == pytest.approx(theirs.similarity, abs=1e-5)


def test_the_manifest_names_the_backend_and_chunks_read_back_the_same(folders: dict[str, Path]) -> None:
    assert read_manifest(folders["faiss"]).backend == "faiss"
    chroma_manifest = read_manifest(folders["chroma"])
    assert chroma_manifest.backend == "chroma" and chroma_manifest.uri == ""
    assert not (folders["chroma"] / "chunks.jsonl").exists()  # the store, not a side file, holds the chunks
    chunks = read_chunks(folders["faiss"])
    assert len(chunks) == 80 and read_chunks(folders["chroma"]) == chunks
    index, _ = open_index(folders["chroma"])
    assert len(index) == 80 and index.chunks == chunks
    assert read_pii_inventory(folders["chroma"]) == read_pii_inventory(folders["faiss"]) is not None


def test_chunk_metadata_and_positions_survive_the_store(tmp_path: Path) -> None:
    from ragshield.rag.store import create_index

    chunks = [Chunk(f"c{i}", "doc", f"text {i}", position=i, metadata={"source": "x", "n": str(i)}) for i in range(3)]
    index = create_index(tmp_path, 64, backend="chroma")
    index.add(chunks, EMBEDDER.embed([c.text for c in chunks]))
    assert index.chunks == chunks
    assert index.search(EMBEDDER.embed(["text 2"])[0], 1)[0].chunk == chunks[2]
    with pytest.raises(ValueError, match="unique"):
        index.add([chunks[0], chunks[0]], EMBEDDER.embed(["a", "b"]))
    with pytest.raises(ValueError, match="dimension"):
        index.search(HashingEmbedder(32).embed(["text"])[0], 1)


def test_a_rebuild_keeps_the_folders_backend(tmp_path: Path) -> None:
    build_index(make_synthetic_corpus(6, seed=0), EMBEDDER, tmp_path, pii=False, backend="chroma")
    manifest, rebuilt = build_index(make_synthetic_corpus(9, seed=0), EMBEDDER, tmp_path, pii=False)
    assert rebuilt and manifest.backend == "chroma" and manifest.count == 9
    assert len(read_chunks(tmp_path)) == 9
    _, again = build_index(make_synthetic_corpus(9, seed=0), EMBEDDER, tmp_path, pii=False)
    assert not again
    moved, rebuilt = build_index(make_synthetic_corpus(9, seed=0), EMBEDDER, tmp_path, pii=False, backend="faiss")
    assert rebuilt and moved.backend == "faiss" and len(read_chunks(tmp_path)) == 9


def test_manifests_from_before_the_seam_load_as_faiss(folders: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    old = tmp_path / "old"
    shutil.copytree(folders["faiss"], old)
    data = json.loads((old / "manifest.json").read_text())
    for key in ("backend", "uri", "collection"):
        del data[key]
    (old / "manifest.json").write_text(json.dumps(data))
    assert read_manifest(old).backend == "faiss" and len(read_chunks(old)) == 80


def test_unknown_backends_are_named(tmp_path: Path, folders: dict[str, Path]) -> None:
    with pytest.raises(UnknownNameError, match="chroma, faiss"):
        build_index(make_synthetic_corpus(3), EMBEDDER, tmp_path, pii=False, backend="pinecone")
    data = json.loads((folders["faiss"] / "manifest.json").read_text())
    (tmp_path / "manifest.json").write_text(json.dumps({**data, "backend": "pinecone"}))
    with pytest.raises(IndexLoadError, match="unknown backend"):
        read_chunks(tmp_path)


@pytest.mark.parametrize(
    ("backend", "module", "extra"), [("faiss", "faiss", "faiss"), ("chroma", "chromadb", "chroma")]
)
def test_a_missing_store_package_names_the_extra_not_a_corrupt_index(
    folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch, backend: str, module: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # `import <module>` now raises ImportError
    with pytest.raises(BackendUnavailable, match=rf"pip install 'ragshield\[{extra}\]'"):
        open_index(folders[backend])
    if backend == "faiss":  # its chunk table is a plain file: reports still read it without faiss
        assert len(read_chunks(folders[backend])) == 80
    else:
        with pytest.raises(BackendUnavailable, match=rf"pip install 'ragshield\[{extra}\]'"):
            read_chunks(folders[backend])


def test_a_half_written_chroma_folder_reports_itself(folders: dict[str, Path], tmp_path: Path) -> None:
    manifest = json.loads((folders["chroma"] / "manifest.json").read_text())
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexLoadError, match="incomplete"):
        open_index(tmp_path)


def test_chroma_uris_are_checked_before_use(tmp_path: Path) -> None:
    corpus = make_synthetic_corpus(3)
    with pytest.raises(ConfigError, match="credentials"):
        build_index(corpus, EMBEDDER, tmp_path, pii=False, backend="chroma", uri="http://user:secret@localhost:8000")
    with pytest.raises(ConfigError, match="expected http"):
        build_index(corpus, EMBEDDER, tmp_path, pii=False, backend="chroma", uri="grpc://localhost:1")
    with pytest.raises(ConfigError, match="URI is for server-backed"):
        build_index(corpus, EMBEDDER, tmp_path, pii=False, backend="faiss", uri="http://localhost:8000")
    with pytest.raises(BackendUnavailable, match="cannot reach the Chroma server"):
        build_index(corpus, EMBEDDER, tmp_path, pii=False, backend="chroma", uri="http://127.0.0.1:9")
    assert not (tmp_path / "manifest.json").exists()


def test_make_embedder_resolves_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_embedder("hashing").dimension == 256
    assert make_embedder("hashing-32").name == "hashing-32"  # the manifest's name round-trips
    assert isinstance(make_embedder("some/sentence-model"), SentenceTransformerEmbedder)  # lazy: nothing loads
    with pytest.raises(ConfigError, match="hashing-<positive dimension>"):
        make_embedder("hashing-x")
    # a name only the table knows: without the registry it would become a sentence-transformers model
    monkeypatch.setattr(
        registry, "EMBEDDERS", {**registry.EMBEDDERS, "fake": "ragshield.rag.embedding:HashingEmbedder"}
    )
    assert isinstance(make_embedder("fake"), HashingEmbedder)


def _grid(folder: Path, out: Path) -> dict[str, Any]:
    from ragshield.evaluation.config import EvalConfig
    from ragshield.evaluation.harness import Parts, run_evaluation
    from ragshield.generators.scripted import EchoContextGenerator

    config = EvalConfig.model_validate(
        {
            "corpus": "synthetic:40",
            "holdout": 14,
            "index": str(folder),
            "embedder": EMBEDDER.name,
            "generator": {"name": "echo-context"},
            "attacks": [{"name": "tgtb", "budget": 3}],
            "defenses": ["none", "rag-ct"],
            "benign": {"path": "holdout", "limit": 3},
            "calibration": {"path": "holdout", "target_fpr": 0.1, "limit": 10},
            "seed": 7,
        }
    )
    run_evaluation(config, out, parts=Parts(embedder=EMBEDDER, generator=EchoContextGenerator()))
    return dict(json.loads((out / "results.json").read_text()))


def test_a_grid_cell_on_chroma_equals_the_faiss_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import functools

    from ragshield.evaluation import harness, report
    from ragshield.rag import build

    # plots and the index-time PII pass (a presidio import) take most of a run's time here and say
    # nothing about retrieval; both are tested elsewhere
    monkeypatch.setattr(harness, "build_report", functools.partial(report.build_report, plots=False))
    monkeypatch.setattr(build, "_analyzer", lambda pii: None)
    # the chroma folder starts with another corpus: eval rebuilds it, in the folder's backend
    build_index(make_synthetic_corpus(4), EMBEDDER, tmp_path / "chroma", pii=False, backend="chroma")
    on_faiss = _grid(tmp_path / "faiss", tmp_path / "out-faiss")
    on_chroma = _grid(tmp_path / "chroma", tmp_path / "out-chroma")
    assert read_manifest(tmp_path / "chroma").backend == "chroma"
    assert on_chroma["attack_rows"] == on_faiss["attack_rows"]
    latency = {"latency_p50_ms", "latency_p95_ms"}
    strip = [
        [{k: v for k, v in row.items() if k not in latency} for row in r["benign_rows"]] for r in (on_faiss, on_chroma)
    ]
    assert strip[0] == strip[1]
    for name in ("tgtb__none", "tgtb__rag-ct"):
        faiss_lines = (tmp_path / "out-faiss" / "transcripts" / f"{name}.jsonl").read_text().splitlines()
        chroma_lines = (tmp_path / "out-chroma" / "transcripts" / f"{name}.jsonl").read_text().splitlines()
        assert [_answer(line) for line in chroma_lines] == [_answer(line) for line in faiss_lines]


def _answer(line: str) -> Any:
    row = json.loads(line)
    retrieval = row.get("retrieval") or {}
    hits = [(hit["chunk"]["id"], round(hit["similarity"], 5)) for hit in retrieval.get("hits", [])]
    return row.get("text"), hits, [(v["guard"], v["action"]) for v in row.get("verdicts", [])]
