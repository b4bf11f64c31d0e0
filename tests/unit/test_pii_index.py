"""The index-time PII pass and the chunk PII store: `pii_spans.jsonl`, old indexes, corrupt files,
spans that no longer verify. Hashing embedder (fake, fast); the real PII analyzer."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.errors import IndexLoadError
from ragshield.pii import PiiAnalyzer, PiiMatch, open_chunk_pii_store, pii_digest
from ragshield.pii.store import ChunkPiiStore
from ragshield.rag.build import build_index
from ragshield.rag.embedding import HashingEmbedder
from ragshield.rag.index import read_manifest
from ragshield.types import Chunk, iter_jsonl

RECORDS = 24
SPEC = f"synthetic:{RECORDS}"


@pytest.fixture(scope="module")
def analyzer() -> PiiAnalyzer:
    return PiiAnalyzer()


@pytest.fixture(scope="module")
def pii_index(tmp_path_factory: pytest.TempPathFactory, analyzer: PiiAnalyzer) -> Path:
    folder = tmp_path_factory.mktemp("pii-index")
    build_index(make_synthetic_corpus(RECORDS, seed=0), HashingEmbedder(), folder, corpus_spec=SPEC, pii=analyzer)
    return folder


def _chunks(folder: Path) -> list[Chunk]:
    return [Chunk.from_dict(row) for row in iter_jsonl(folder / "chunks.jsonl")]


def _copy_index(source: Path, target: Path) -> Path:
    target.mkdir()
    for path in source.iterdir():
        (target / path.name).write_bytes(path.read_bytes())
    return target


def test_the_index_stores_verifiable_spans_and_no_values(pii_index: Path, analyzer: PiiAnalyzer) -> None:
    manifest = read_manifest(pii_index)
    assert manifest.pii_recognizers == list(analyzer.recognizers)
    chunks = {chunk.id: chunk for chunk in _chunks(pii_index)}
    rows = list(iter_jsonl(pii_index / "pii_spans.jsonl"))
    assert len(rows) == len(chunks)  # every synthetic record holds PII
    raw = (pii_index / "pii_spans.jsonl").read_text()
    corpus = make_synthetic_corpus(RECORDS, seed=0)
    assert corpus.pii is not None
    assert not any(item.value in raw for item in corpus.pii)  # offsets and hashes only
    kinds: set[str] = set()
    for row in rows:
        text = chunks[str(row["chunk_id"])].text
        for span in row["spans"]:  # type: ignore[union-attr]
            assert set(span) == {"kind", "start", "end", "digest"}  # type: ignore[arg-type]
            assert pii_digest(text[span["start"] : span["end"]]) == span["digest"]  # type: ignore[index]
            kinds.add(span["kind"])  # type: ignore[index]
    assert {"email", "phone", "ssn", "date", "address"} <= kinds


def test_the_store_returns_each_records_pii_from_the_index(pii_index: Path) -> None:
    store = open_chunk_pii_store(pii_index)
    assert store.source == "index"
    corpus = make_synthetic_corpus(RECORDS, seed=0)
    assert corpus.pii is not None
    by_doc = {chunk.doc_id: chunk for chunk in _chunks(pii_index)}
    for item in corpus.pii:
        if item.kind in ("email", "phone", "ssn", "dob", "address"):
            values = store.values(by_doc[item.doc_id])
            assert pii_digest(item.value) in {value.digest for value in values}, item.kind
    for chunk in by_doc.values():
        for value in store.values(chunk):
            assert value.value in chunk.text and pii_digest(value.value) == value.digest
            assert value.value not in repr(value)  # secret: kept out of repr (and so out of logs)
    assert store.fallbacks == 0


def test_an_old_index_gives_a_request_time_store_and_one_line_saying_how_to_rebuild(
    pii_index: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = _copy_index(pii_index, tmp_path / "old")
    (old / "pii_spans.jsonl").unlink()
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["pii_recognizers"]  # as written before the field existed
    (old / "manifest.json").write_text(json.dumps(manifest))
    assert read_manifest(old).pii_recognizers == []
    with caplog.at_level(logging.INFO, logger="ragshield.pii"):
        store = open_chunk_pii_store(old)
    assert store.source == "request-time"
    records = [record for record in caplog.records if record.name.startswith("ragshield.pii")]
    assert len(records) == 1
    message = records[0].getMessage()
    assert "\n" not in message and f"ragshield index --corpus {SPEC} --out {old}" in message
    chunk = _chunks(old)[0]
    assert {value.kind for value in store.values(chunk)} >= {"email", "phone", "ssn", "date", "address"}


def test_an_index_built_without_the_pass_is_request_time(tmp_path: Path) -> None:
    folder = tmp_path / "no-pii"
    manifest, _ = build_index(make_synthetic_corpus(4, seed=0), HashingEmbedder(), folder, pii=False)
    assert manifest.pii_recognizers == [] and not (folder / "pii_spans.jsonl").exists()
    assert open_chunk_pii_store(folder).source == "request-time"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "invalid JSON"),
        ('{"chunk_id": "x", "spans": []}', "non-empty list 'spans'"),
        ('{"chunk_id": "x", "spans": [{"kind": "email", "start": 5, "end": 2, "digest": "%s"}]}', "offsets"),
        ('{"chunk_id": "x", "spans": [{"kind": "email", "start": 0, "end": 2, "digest": "abc"}]}', "digest"),
        ('{"spans": [{"kind": "email", "start": 0, "end": 2, "digest": "%s"}]}', "chunk_id"),
    ],
)
def test_a_corrupt_spans_file_is_a_clear_error_naming_the_file_and_line(
    pii_index: Path, tmp_path: Path, line: str, problem: str
) -> None:
    broken = _copy_index(pii_index, tmp_path / "broken")
    lines = (broken / "pii_spans.jsonl").read_text().splitlines()
    lines.insert(2, line.replace("%s", "0" * 64))
    (broken / "pii_spans.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(IndexLoadError, match=r"pii_spans\.jsonl: line 3: ") as error:
        open_chunk_pii_store(broken)
    assert problem in str(error.value) and "ragshield index" in str(error.value)


def test_a_missing_spans_file_of_an_index_that_lists_recognizers_is_an_error(pii_index: Path, tmp_path: Path) -> None:
    broken = _copy_index(pii_index, tmp_path / "missing")
    (broken / "pii_spans.jsonl").unlink()
    with pytest.raises(IndexLoadError, match=r"pii_spans\.jsonl is missing"):
        open_chunk_pii_store(broken)


def test_values_never_returns_a_value_whose_digest_does_not_verify(pii_index: Path, tmp_path: Path) -> None:
    tampered = _copy_index(pii_index, tmp_path / "tampered")
    rows = list(iter_jsonl(tampered / "pii_spans.jsonl"))
    rows[0]["spans"][0]["digest"] = "f" * 64  # type: ignore[index]
    rows[1]["spans"][0]["start"] += 1  # type: ignore[index, operator]
    rows[2]["spans"][0]["end"] = 10**6  # type: ignore[index]
    (tampered / "pii_spans.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    store = open_chunk_pii_store(tampered)
    chunks = {chunk.id: chunk for chunk in _chunks(tampered)}
    for row in rows[:3]:
        chunk = chunks[str(row["chunk_id"])]
        values = store.values(chunk)
        assert values  # the chunk was analysed afresh instead
        for value in values:
            assert pii_digest(value.value) == value.digest and value.value in chunk.text
    assert store.fallbacks == 3
    # a chunk whose text is not the indexed text (e.g. decorated) is analysed, never read from stale spans
    first = chunks[str(rows[3]["chunk_id"])]
    edited = Chunk(first.id, first.doc_id, "CANARY-x1 " + first.text)
    assert all(value.value in edited.text for value in store.values(edited))
    unknown = Chunk("not-in-index", "d", "Call Ann at (487) 647-5938.")
    assert "phone" in {value.kind for value in store.values(unknown)}
    assert store.fallbacks == 5


class _CountingAnalyzer(PiiAnalyzer):
    def __init__(self) -> None:
        super().__init__(ner=False)
        self.calls = 0  # texts analysed
        self.batches = 0

    def find_many(self, texts: Sequence[str]) -> list[list[PiiMatch]]:
        self.calls += len(texts)
        self.batches += 1
        return super().find_many(texts)


def test_the_request_time_cache_is_a_bounded_lru() -> None:
    analyzer = _CountingAnalyzer()
    store = ChunkPiiStore(analyzer, cache_size=2)
    a, b, c = (Chunk(name, name, f"mail {name}@example.org") for name in "abc")
    store.values(a)
    store.values(a)
    assert analyzer.calls == 1
    store.values(b)
    store.values(c)  # evicts a (least recently used)
    store.values(c)
    assert analyzer.calls == 3
    store.values(a)
    assert analyzer.calls == 4


def test_a_retrievals_chunks_are_analysed_in_one_batch() -> None:
    analyzer = _CountingAnalyzer()
    store = ChunkPiiStore(analyzer)
    chunks = [
        Chunk(name, name, f"write to {name}@example.org or call (487) 647-59{index}8")
        for index, name in enumerate("abc")
    ]
    batched = store.values_for(chunks)
    assert analyzer.batches == 1 and analyzer.calls == 3
    assert batched == tuple(ChunkPiiStore(PiiAnalyzer(ner=False)).values(chunk) for chunk in chunks)
    assert store.values_for(chunks[:2]) == batched[:2] and analyzer.calls == 3  # cached


def test_reindexing_reuses_vectors_and_adds_spans(tmp_path: Path, analyzer: PiiAnalyzer) -> None:
    corpus = make_synthetic_corpus(6, seed=2)
    folder = tmp_path / "idx"
    _, rebuilt = build_index(corpus, HashingEmbedder(), folder, pii=False)
    assert rebuilt and not (folder / "pii_spans.jsonl").exists()
    manifest, rebuilt = build_index(corpus, HashingEmbedder(), folder, pii=analyzer)
    assert not rebuilt and manifest.pii_recognizers == list(analyzer.recognizers)
    assert read_manifest(folder).pii_recognizers == list(analyzer.recognizers)
    assert open_chunk_pii_store(folder, analyzer=analyzer).source == "index"
    manifest, rebuilt = build_index(corpus, HashingEmbedder(), folder, pii=False)  # keeps the spans
    assert not rebuilt and manifest.pii_recognizers and (folder / "pii_spans.jsonl").exists()


def test_a_pattern_only_index_is_request_time_for_an_analyzer_with_ner(tmp_path: Path, analyzer: PiiAnalyzer) -> None:
    if not analyzer.ner_enabled:
        pytest.skip("the 'ner' extra is not installed (pip install ragshield[ner])")
    folder = tmp_path / "patterns"
    build_index(make_synthetic_corpus(4, seed=0), HashingEmbedder(), folder, pii=PiiAnalyzer(ner=False))
    assert open_chunk_pii_store(folder, analyzer=PiiAnalyzer(ner=False)).source == "index"
    assert open_chunk_pii_store(folder, analyzer=analyzer).source == "request-time"


def test_index_command_pii_option(tmp_path: Path) -> None:
    from ragshield.cli import app

    runner = CliRunner()
    off = tmp_path / "off"
    result = runner.invoke(
        app, ["index", "--corpus", "synthetic:5", "--out", str(off), "--embedder", "hashing", "--no-pii"]
    )
    assert result.exit_code == 0, result.output
    assert read_manifest(off).pii_recognizers == [] and not (off / "pii_spans.jsonl").exists()
    on = tmp_path / "on"
    result = runner.invoke(app, ["index", "--corpus", "synthetic:5", "--out", str(on), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    assert read_manifest(on).pii_recognizers and (on / "pii_spans.jsonl").is_file()


def test_chunk_frequency_counts_the_chunks_holding_a_value(pii_index: Path) -> None:
    store = open_chunk_pii_store(pii_index)
    rows = list(iter_jsonl(pii_index / "pii_spans.jsonl"))
    digest = rows[0]["spans"][0]["digest"]  # type: ignore[index]
    expected = sum(1 for row in rows if digest in {span["digest"] for span in row["spans"]})  # type: ignore[index, union-attr]
    assert store.chunk_frequency(str(digest)) == expected >= 1
    assert store.chunk_frequency("0" * 64) == 0
    assert ChunkPiiStore(PiiAnalyzer(ner=False)).chunk_frequency(str(digest)) is None


def test_build_system_gives_defense_factories_the_index_folder(
    pii_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragshield.system as system
    from ragshield.config import SystemConfig
    from ragshield.guards.base import NO_DEFENSE

    seen: list[object] = []

    def capture(spec: str, context: object, params: object = None) -> object:
        seen.append(context)
        return NO_DEFENSE

    monkeypatch.setattr(system, "build_defense", capture)
    system.build_system(SystemConfig(index=str(pii_index), generator={"name": "scripted"}, defenses=["none"]))
    assert [getattr(context, "index_dir", None) for context in seen] == [str(pii_index)]
