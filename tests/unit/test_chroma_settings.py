"""Chroma's HNSW settings as backend parameters: checked, written into the collection, recorded in
the manifest, kept when the index is reopened, and on the same score scale in every space."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.errors import ConfigError, IndexLoadError
from ragshield.rag.backends.chroma import DEFAULTS
from ragshield.rag.build import build_index
from ragshield.rag.embedding import HashingEmbedder
from ragshield.rag.index import read_manifest
from ragshield.rag.store import backend_settings, create_index, open_index

pytest.importorskip("chromadb", reason="the chroma extra is not installed: pip install 'ragshield[chroma]'")

EMBEDDER = HashingEmbedder(64)
CORPUS = make_synthetic_corpus(40, seed=5)
CHOSEN = {"ef_search": 37, "max_neighbors": 12, "ef_construction": 64, "space": "cosine"}


def fresh_clients() -> None:
    """Forget the embedded clients of this process, so the next open reads what Chroma persisted
    (an embedded client otherwise keeps the collection it already loaded)."""
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def stored_configuration(folder: Path) -> dict[str, Any]:
    import chromadb

    client = chromadb.PersistentClient(path=str(folder / "chroma"))
    return dict(client.get_collection("ragshield").configuration["hnsw"] or {})


def test_parameters_reach_the_collection_and_the_manifest_and_survive_a_reopen(tmp_path: Path) -> None:
    manifest, _ = build_index(CORPUS, EMBEDDER, tmp_path, pii=False, backend="chroma", params=CHOSEN)
    expected = {**DEFAULTS, **CHOSEN}
    assert manifest.backend_params == expected
    assert json.loads((tmp_path / "manifest.json").read_text())["backend_params"] == expected
    fresh_clients()
    stored = stored_configuration(tmp_path)
    assert {key: stored[key] for key in expected} == expected
    fresh_clients()
    index, reopened = open_index(tmp_path)
    assert reopened.backend_params == expected
    assert index.settings == expected  # type: ignore[attr-defined]
    assert len(index.search(EMBEDDER.embed(["fever"])[0], 3)) == 3


def test_a_rebuild_keeps_the_folders_settings_unless_new_ones_are_given(tmp_path: Path) -> None:
    build_index(CORPUS, EMBEDDER, tmp_path, pii=False, backend="chroma", params=CHOSEN)
    kept, rebuilt = build_index(CORPUS, EMBEDDER, tmp_path, pii=False)
    assert not rebuilt and kept.backend_params["ef_search"] == 37
    changed, rebuilt = build_index(CORPUS, EMBEDDER, tmp_path, pii=False, params={"ef_search": 50})
    assert rebuilt and changed.backend_params == {**DEFAULTS, "ef_search": 50}
    fresh_clients()
    assert stored_configuration(tmp_path)["ef_search"] == 50


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"ef_serch": 10}, r"unknown parameter\(s\) \['ef_serch'\]; valid: space, ef_construction, ef_search"),
        ({"num_threads": 2}, "unknown parameter"),  # Chroma does not keep it in the collection
        ({"ef_search": 0}, r"ef_search must be in \[1, 4096\], got 0"),
        ({"ef_search": 100_000}, r"ef_search must be in \[1, 4096\]"),
        ({"max_neighbors": 1}, r"max_neighbors must be in \[2, 512\]"),
        ({"ef_search": "100"}, "ef_search must be an integer, got '100'"),
        ({"ef_search": 10.5}, "ef_search must be an integer"),
        ({"max_neighbors": True}, "max_neighbors must be an integer, got True"),
        ({"resize_factor": 1.0}, r"resize_factor must be in \[1.01, 10\]"),
        ({"space": "dot"}, "space must be one of ip, cosine, l2, got 'dot'"),
    ],
)
def test_bad_parameters_fail_with_a_clear_error(params: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        backend_settings("chroma", params)


def test_bad_parameters_leave_the_folder_as_it_was(tmp_path: Path) -> None:
    build_index(CORPUS, EMBEDDER, tmp_path, pii=False, backend="faiss")
    before = sorted(path.name for path in tmp_path.iterdir())
    with pytest.raises(ConfigError, match="ef_search"):
        build_index(CORPUS, EMBEDDER, tmp_path, pii=False, backend="chroma", params={"ef_search": -1})
    with pytest.raises(ConfigError, match="ef_search"):
        create_index(tmp_path / "new", 64, backend="chroma", params={"ef_search": -1})
    assert sorted(path.name for path in tmp_path.iterdir()) == before
    assert read_manifest(tmp_path).backend == "faiss"


def test_faiss_takes_no_parameters(tmp_path: Path) -> None:
    assert backend_settings("faiss") == {}
    with pytest.raises(ConfigError, match=r"faiss backend .* takes no parameters"):
        build_index(CORPUS, EMBEDDER, tmp_path, pii=False, backend="faiss", params={"ef_search": 10})


def test_a_collection_whose_settings_drifted_from_the_manifest_is_refused(tmp_path: Path) -> None:
    build_index(CORPUS, EMBEDDER, tmp_path, pii=False, backend="chroma", params={"ef_search": 40})
    fresh_clients()
    import chromadb

    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    client.get_collection("ragshield").modify(configuration={"hnsw": {"ef_search": 80}})
    fresh_clients()
    with pytest.raises(IndexLoadError, match=r"ef_search 40 -> 80.*ragshield index --backend chroma"):
        open_index(tmp_path)


def test_every_space_gives_the_faiss_scores(tmp_path: Path) -> None:
    build_index(CORPUS, EMBEDDER, tmp_path / "faiss", pii=False, backend="faiss")
    exact, _ = open_index(tmp_path / "faiss")
    for space in ("cosine", "l2"):
        build_index(CORPUS, EMBEDDER, tmp_path / space, pii=False, backend="chroma", params={"space": space})
        approximate, _ = open_index(tmp_path / space)
        for text in ("fever and cough", "invoice for the pipeline", "knee pain in winter"):
            vector = EMBEDDER.embed([text])[0]
            expected, got = exact.search(vector, 5), approximate.search(vector, 5)
            assert [hit.chunk.id for hit in got] == [hit.chunk.id for hit in expected], (space, text)
            for mine, theirs in zip(got, expected, strict=True):
                assert mine.similarity == pytest.approx(theirs.similarity, abs=1e-5)


def test_the_index_command_passes_backend_params_and_names_a_bad_one(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragshield.cli import app

    common = ["index", "--corpus", "synthetic:12", "--out", str(tmp_path), "--embedder", "hashing", "--no-pii"]
    built = CliRunner().invoke(app, [*common, "--backend", "chroma", "--backend-param", "ef_search=55"])
    assert built.exit_code == 0, built.output
    assert read_manifest(tmp_path).backend_params == {**DEFAULTS, "ef_search": 55}
    refused = CliRunner().invoke(app, [*common, "--backend-param", "ef_serch=55"])
    assert refused.exit_code != 0  # the console entry point prints a ConfigError as one "error:" line
    assert isinstance(refused.exception, ConfigError)
    assert "unknown parameter(s) ['ef_serch']" in str(refused.exception)
    assert read_manifest(tmp_path).backend_params["ef_search"] == 55  # the built index is untouched
