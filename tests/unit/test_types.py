"""Data objects survive a JSONL round trip: transcripts must rebuild metrics without models."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragshield.types import (
    Action,
    Chunk,
    Query,
    Response,
    RetrievalResult,
    ScoredChunk,
    Transcript,
    Verdict,
    iter_jsonl,
)


def _response() -> Response:
    chunk = Chunk("c1", "d1", "text with ünïcode", position=2, metadata={"kind": "email"})
    retrieval = RetrievalResult(Query("q?", user_id="u"), (ScoredChunk(chunk, 0.75, 0),), {"c1": ("CANARY",)})
    verdict = Verdict("rag-ct", Action.BLOCK, 0.9, 0.5, "peaked", {"similarities": [0.75]})
    return Response(retrieval.query, "answer", retrieval, (verdict,), "blocked", {"total": 1.5}, None)


def test_transcript_round_trip(tmp_path: Path) -> None:
    transcript = Transcript("attack", "tgtb", "rag-ct", (_response(), _response()), seed=3)
    transcript.write_jsonl(tmp_path / "t.jsonl")
    again = Transcript.read_jsonl(tmp_path / "t.jsonl")
    assert again == transcript
    assert again.responses[0].blocked and again.responses[0].blocked_by == ["rag-ct"]


def test_transcript_without_header_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "x"}\n')
    with pytest.raises(ValueError, match="not a ragshield transcript"):
        Transcript.read_jsonl(path)


def test_iter_jsonl_names_the_broken_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "a"}\n\n{broken\n')
    rows = iter_jsonl(path)
    assert next(rows) == {"query": "a"}
    with pytest.raises(ValueError, match=r"q.jsonl:3"):
        next(rows)


def test_objects_are_frozen() -> None:
    query = Query("hello")
    with pytest.raises(AttributeError):
        query.text = "changed"  # type: ignore[misc]
    assert Query("a").id != Query("a").id
