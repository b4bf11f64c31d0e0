"""Fail closed: a guard that raises or hangs blocks the request (configurable), and both the client's
verdict and the audit line say why. Uses FAKE guards and the FAKE hashing retriever (fast)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_helpers import KEY, KEYS, audit_lines, openai

from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import Defense
from ragshield.pipeline import DEFAULT_REFUSAL, RagPipeline
from ragshield.service.app import create_app
from ragshield.service.server import BackgroundServer
from ragshield.service.settings import ServeConfig
from ragshield.types import Action, GenerationRequest, RetrievalResult, Verdict

pytestmark = pytest.mark.service
ASK = [{"role": "user", "content": "What helps with a stiff neck in the morning?"}]


class RaisingGuard:
    """FAKE query guard that always raises (its message quotes text that must not be logged)."""

    name = "raising-fake"

    def check(self, retrieval: RetrievalResult) -> Verdict:
        raise RuntimeError(f"boom while reading {retrieval.hits[0].chunk.text[:40]}")


class HangingGuard:
    """FAKE query guard that takes `seconds` (an oracle or a remote detector that hangs)."""

    name = "hanging-fake"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def check(self, retrieval: RetrievalResult) -> Verdict:
        time.sleep(self.seconds)
        return Verdict(self.name, Action.ALLOW, 0.0, 1.0, "fine")


class DripGenerator:
    """FAKE model: a word every 50 ms, 200 words."""

    name = "drip-fake"

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        for _ in range(200):
            time.sleep(0.05)
            yield "word "


def _serve(
    fake_retriever: Any,
    tmp_path: Path,
    guards: tuple[Any, ...],
    *,
    fail_closed: bool = True,
    timeout_s: float = 30.0,
    generator: Any = None,
) -> tuple[BackgroundServer, Any, Path]:
    audit = tmp_path / "audit.jsonl"
    config = ServeConfig(api_keys=KEYS, audit_log=str(audit), fail_closed=fail_closed, request_timeout_s=timeout_s)
    pipeline = RagPipeline(
        fake_retriever,
        generator or ScriptedGenerator(["Rest and gentle stretching help."]),
        defense=Defense(name="fakes", query_guards=guards, fail_closed=fail_closed),
    )
    server = BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)).start()
    api = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY["alice"], max_retries=0, timeout=30.0)
    return server, api, audit


def test_raising_guard_blocks_and_says_why(fake_retriever: Any, tmp_path: Path) -> None:
    server, api, audit = _serve(fake_retriever, tmp_path, (RaisingGuard(),))
    try:
        reply = api.chat.completions.create(model="ragshield", messages=ASK)
    finally:
        server.stop()
    assert reply.choices[0].message.content == DEFAULT_REFUSAL
    assert reply.choices[0].finish_reason == "content_filter" and reply.ragshield["stage"] == "query"
    (line,) = audit_lines(audit)
    assert line["action"] == "block" and line["blocked_by"] == ["raising-fake"]
    verdict = line["verdicts"][0]
    assert verdict["reason"] == "guard error (RuntimeError); failing closed (blocked)"
    assert verdict["evidence"] == {"error_type": "RuntimeError", "fail_closed": True}
    assert "boom" not in audit.read_text(encoding="utf-8")


def test_raising_guard_fails_open_when_configured(fake_retriever: Any, tmp_path: Path) -> None:
    server, api, audit = _serve(fake_retriever, tmp_path, (RaisingGuard(),), fail_closed=False)
    try:
        reply = api.chat.completions.create(model="ragshield", messages=ASK)
    finally:
        server.stop()
    assert reply.choices[0].message.content == "Rest and gentle stretching help."
    (line,) = audit_lines(audit)
    assert line["action"] == "allow"
    assert line["verdicts"][0]["reason"] == "guard error (RuntimeError); failing open (allowed)"


def test_hanging_guard_times_out_and_blocks(fake_retriever: Any, tmp_path: Path) -> None:
    server, api, audit = _serve(fake_retriever, tmp_path, (HangingGuard(3.0),), timeout_s=0.5)
    try:
        started = time.perf_counter()
        reply = api.chat.completions.create(model="ragshield", messages=ASK)
        elapsed = time.perf_counter() - started
    finally:
        server.stop()
    assert elapsed < 2.5, "the timeout must answer before the hanging guard returns"
    assert reply.choices[0].message.content == DEFAULT_REFUSAL
    assert reply.ragshield["blocked"] is True and reply.ragshield["stage"] == "service"
    (line,) = audit_lines(audit)
    assert line["action"] == "timeout" and line["blocked_by"] == ["request-timeout"]
    assert "exceeded the 0.5s timeout" in line["verdicts"][0]["reason"]
    assert "failing closed (blocked)" in line["verdicts"][0]["reason"]


def test_hanging_guard_fail_open_is_a_504(fake_retriever: Any, tmp_path: Path) -> None:
    server, api, audit = _serve(fake_retriever, tmp_path, (HangingGuard(3.0),), fail_closed=False, timeout_s=0.5)
    try:
        with pytest.raises(openai.InternalServerError) as caught:
            api.chat.completions.create(model="ragshield", messages=ASK)
    finally:
        server.stop()
    assert caught.value.status_code == 504 and caught.value.code == "request_timeout"
    (line,) = audit_lines(audit)
    assert line["action"] == "timeout" and line["blocked_by"] == []
    assert "failing open" in line["verdicts"][0]["reason"]


def test_timeout_mid_stream_ends_with_an_error_event(fake_retriever: Any, tmp_path: Path) -> None:
    server, api, audit = _serve(fake_retriever, tmp_path, (), timeout_s=0.6, generator=DripGenerator())
    received: list[str] = []
    try:
        with pytest.raises(openai.APIError) as caught:
            for chunk in api.chat.completions.create(model="ragshield", messages=ASK, stream=True):
                received.append(chunk.choices[0].delta.content or "")
    finally:
        server.stop()
    assert caught.value.code == "request_timeout"
    assert "word" in "".join(received)
    (line,) = audit_lines(audit)
    assert line["action"] == "timeout"


def test_fail_closed_verdicts_serialise_on_guard_endpoints_and_exposed_verdicts(
    fake_retriever: Any, tmp_path: Path
) -> None:
    """A fail-closed verdict scores +inf: exposed to clients it must still be valid JSON."""
    config = ServeConfig(api_keys=KEYS, audit_log=str(tmp_path / "audit.jsonl"), expose_verdicts=True)
    pipeline = RagPipeline(fake_retriever, ScriptedGenerator(["ok"]), defense=Defense(query_guards=(RaisingGuard(),)))
    with BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)) as server:
        headers = {"Authorization": f"Bearer {KEY['alice']}"}
        chunk = {"id": "c1", "text": "some text", "similarity": 0.4}
        reply = httpx.post(
            f"{server.url}/v1/guard/query", json={"query": "hi there", "chunks": [chunk]}, headers=headers
        )
        assert reply.status_code == 200, reply.text
        verdict = reply.json()["verdicts"][0]
        assert reply.json()["action"] == "block" and verdict["score"] == "Infinity"
        api = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY["alice"], max_retries=0)
        completion = api.chat.completions.create(model="ragshield", messages=ASK)
        assert completion.ragshield["verdicts"][0]["reason"].startswith("guard error (RuntimeError)")
        with api.chat.completions.create(model="ragshield", messages=ASK, stream=True) as stream:
            streamed = list(stream)
        assert streamed[-1].ragshield["verdicts"][0]["score"] == "Infinity"
    assert all(line["verdicts"][0]["score"] == "inf" for line in audit_lines(tmp_path / "audit.jsonl"))
