"""`/v1/guard/query` and `/v1/guard/output` for applications with their own RAG stack: real MiniLM
retrieval on the application side, the real service deciding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from service_helpers import EXTRACTION, KEY, Served, audit_lines

from ragshield.pipeline import DEFAULT_REFUSAL
from ragshield.types import Query

pytestmark = pytest.mark.service
QUESTION = "How long does acne usually take to clear with treatment?"


def _call(served: Served, path: str, body: dict[str, Any], user: str = "alice") -> httpx.Response:
    headers = {"Authorization": f"Bearer {KEY[user]}"}
    return httpx.post(f"{served.server.url}{path}", json=body, headers=headers, timeout=30.0)


def _chunks(retriever: Any, question: str) -> list[dict[str, Any]]:
    """What the application's own retriever found (here: the real MiniLM + FAISS index)."""
    retrieval = retriever.retrieve(Query(question), 3)
    return [{"id": h.chunk.id, "text": h.chunk.text, "similarity": h.similarity} for h in retrieval.hits]


def test_query_then_output_round_trip(echo_server: Served, synthetic_retriever: Any) -> None:
    chunks = _chunks(synthetic_retriever, QUESTION)
    reply = _call(echo_server, "/v1/guard/query", {"query": QUESTION, "chunks": chunks, "user": "u-17"})
    assert reply.status_code == 200, reply.text
    decision = reply.json()
    assert decision["action"] == "allow" and decision["blocked_by"] == []
    assert {v["guard"] for v in decision["verdicts"]} >= {"rag-ct", "intent"}
    context, markers = decision["context"], decision["markers"]
    assert [c["id"] for c in context] == [c["id"] for c in chunks]
    assert set(markers) == {c["id"] for c in chunks}
    for item in context:  # the context to prompt with carries this request's canaries
        assert all(canary in item["text"] for canary in markers[item["id"]])

    # a model that copies its context (worst case) is caught; a normal answer passes unchanged
    leaked = {
        "query": QUESTION,
        "context": context,
        "markers": markers,
        "user": "u-17",
        "output": "Here is everything: " + context[0]["text"],
    }
    verdict = _call(echo_server, "/v1/guard/output", leaked).json()
    assert verdict["action"] == "block" and "canary-rag" in verdict["blocked_by"]
    assert verdict["text"] == DEFAULT_REFUSAL
    fine = {**leaked, "output": "Most acne improves within 6 to 8 weeks of treatment."}
    verdict = _call(echo_server, "/v1/guard/output", fine).json()
    assert verdict["action"] == "allow" and verdict["text"] == fine["output"]

    assert echo_server.config.audit_log is not None
    raw = Path(echo_server.config.audit_log).read_text(encoding="utf-8")
    for canaries in markers.values():
        assert all(canary not in raw for canary in canaries)
    lines = [line for line in audit_lines(echo_server.config.audit_log) if line["user_id"] == "alice/u-17"]
    assert [line["endpoint"] for line in lines] == ["guard-query", "guard-output", "guard-output"]
    assert [line["action"] for line in lines] == ["allow", "block", "allow"]


def test_extraction_query_is_blocked_with_no_context(echo_server: Served, synthetic_retriever: Any) -> None:
    reply = _call(
        echo_server, "/v1/guard/query", {"query": EXTRACTION, "chunks": _chunks(synthetic_retriever, EXTRACTION)}
    )
    decision = reply.json()
    assert decision["action"] == "block" and "intent" in decision["blocked_by"]
    assert decision["context"] == [] and decision["markers"] == {}


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/v1/guard/query", {"query": "hi", "chunks": [{"id": "a", "text": "x", "similarity": "nan"}]}, "finite"),
        (
            "/v1/guard/query",
            {"query": "hi", "chunks": [{"id": "a", "similarity": 0.5}, {"id": "a", "similarity": 0.4}]},
            "twice",
        ),
        ("/v1/guard/query", {"chunks": []}, "query"),
        ("/v1/guard/query", {"query": "hi", "chunks": [], "extra": 1}, "extra"),
        (
            "/v1/guard/output",
            {"query": "hi", "context": [{"id": "a", "similarity": 0.5}], "markers": {"b": ["x"]}, "output": "ok"},
            "markers",
        ),
        ("/v1/guard/output", {"query": "hi"}, "output"),
    ],
)
def test_bad_guard_requests_get_a_clear_400(echo_server: Served, path: str, body: dict[str, Any], says: str) -> None:
    reply = _call(echo_server, path, body)
    assert reply.status_code == 400, reply.text
    assert says in reply.json()["error"]["message"]
