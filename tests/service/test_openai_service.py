"""The real service on loopback, driven by the official `openai` client.

A benign streamed answer from the real SmolLM2 arrives; an extraction query is refused before
generation; a canary never reaches the client in any streamed chunk (worst-case echo model); the
audit log holds no canary, chunk text or PII value; a blocked user stays blocked across a restart
of the server process (SQLite policy store).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from service_helpers import EXTRACTION, KEY, Served, audit_lines, client, openai, running, serve_config

from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.generators.scripted import EchoContextGenerator
from ragshield.pipeline import DEFAULT_REFUSAL
from ragshield.service.server import free_port

pytestmark = pytest.mark.service
BENIGN_QUESTION = "What should I do about persistent headaches?"


def _line(path: str | None, request_id: str) -> dict[str, Any]:
    assert path is not None
    lines = [line for line in audit_lines(path) if line["request_id"] == request_id]
    assert len(lines) == 1, f"expected one audit line for {request_id}, found {len(lines)}"
    return lines[0]


def test_benign_streamed_answer_arrives_from_smollm(smol_server: Served) -> None:
    stream = client(smol_server.server, "alice").chat.completions.create(
        model="ragshield", messages=[{"role": "user", "content": BENIGN_QUESTION}], stream=True
    )
    chunks = list(stream)
    contents = [chunk.choices[0].delta.content for chunk in chunks if chunk.choices and chunk.choices[0].delta.content]
    # how long the real model's answer is differs between CPUs (84 characters on one CI run, which
    # the monitors' holdback releases whole in the final delta); streaming in several deltas is
    # pinned by test_a_long_answer_streams_before_generation_ends, which does not depend on it
    assert "".join(contents).strip(), "the real model's benign answer must reach the client"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")  # length: 160 tokens cut it
    info = chunks[-1].ragshield
    assert info["blocked"] is False and info.get("verdicts") is None  # verdicts stay server-side by default
    line = _line(smol_server.config.audit_log, chunks[-1].id)
    assert line["action"] == "allow" and line["user_id"] == "alice"
    assert {v["guard"] for v in line["verdicts"]} >= {"rag-ct", "intent", "canary-rag"}
    assert len(line["chunk_ids"]) == 3 and "first_token" in line["timings_ms"]


class GatedLongAnswer:
    """FAKE generator: 60 words, then waits (at most 30 s) until the test has read a streamed delta,
    then 60 more. The client can only read a delta before the wait ends if the service streams."""

    name = "gated-fake"

    def __init__(self) -> None:
        self.client_read_text = threading.Event()
        self.waited_for_client: bool | None = None

    def stream(self, request: Any) -> Iterator[str]:
        for number in range(60):
            yield f"rest{number} "
        self.waited_for_client = self.client_read_text.wait(timeout=30.0)
        for number in range(60):
            yield f"water{number} "


def test_a_long_answer_streams_before_generation_ends(
    synthetic_index: Path, synthetic_retriever: Any, benign_file: Path, tmp_path: Path
) -> None:
    """The default layered defense (CanaryRAG's holdback included) releases text while the model
    is still writing: the client reads the first delta before the generator finishes."""
    generator = GatedLongAnswer()
    config = serve_config(synthetic_index, benign_file, tmp_path)
    with running(config, synthetic_retriever, generator) as (server, _):
        stream = client(server, "alice").chat.completions.create(
            model="ragshield", messages=[{"role": "user", "content": BENIGN_QUESTION}], stream=True
        )
        contents: list[str] = []
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                contents.append(chunk.choices[0].delta.content)
                generator.client_read_text.set()
    assert generator.waited_for_client is True, "no delta reached the client before the answer was finished"
    assert len(contents) >= 2
    expected = "".join(f"rest{n} " for n in range(60)) + "".join(f"water{n} " for n in range(60))
    assert "".join(contents) == expected


@pytest.mark.parametrize("stream", [False, True])
def test_extraction_query_is_refused_before_generation(smol_server: Served, stream: bool) -> None:
    openai_client = client(smol_server.server, "eve")
    messages = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": EXTRACTION}]
    if stream:
        chunks = list(openai_client.chat.completions.create(model="ragshield", messages=messages, stream=True))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        finish, info, request_id = chunks[-1].choices[0].finish_reason, chunks[-1].ragshield, chunks[-1].id
    else:
        reply = openai_client.chat.completions.create(model="ragshield", messages=messages)
        text, finish = reply.choices[0].message.content, reply.choices[0].finish_reason
        info, request_id = reply.ragshield, reply.id
    assert text == DEFAULT_REFUSAL
    assert finish == "content_filter"
    assert info["blocked"] is True and info["stage"] == "query"
    line = _line(smol_server.config.audit_log, request_id)
    assert line["action"] == "block" and "intent" in line["blocked_by"]
    assert "generate" not in line["timings_ms"], "a query blocked by a query guard must never reach the model"


def test_canary_never_reaches_the_client_in_any_streamed_chunk(echo_server: Served) -> None:
    """WORST CASE (EchoContextGenerator copies its context): the canary monitor halts the stream."""
    echo_server.sink.clear()
    received: list[str] = []
    stream = client(echo_server.server, "carol").chat.completions.create(
        model="ragshield", messages=[{"role": "user", "content": BENIGN_QUESTION}], stream=True
    )
    with pytest.raises(openai.APIError) as caught:
        for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
    assert caught.value.code == "output_blocked"
    canaries = echo_server.canaries()
    assert len(canaries) >= 3
    text = "".join(received).casefold()
    for canary in canaries:
        assert canary.casefold() not in text
        assert all(canary.casefold() not in piece.casefold() for piece in received)
    metrics = httpx.get(f"{echo_server.server.url}/metrics").text
    assert 'ragshield_blocks_total{guard="canary-rag",stage="output"}' in metrics


def test_audit_log_holds_no_canary_chunk_text_or_pii(echo_server: Served) -> None:
    """After leaking (echo) and benign traffic: ids and hashes only in every audit line."""
    openai_client = client(echo_server.server, "carol")
    for question in ("How do I treat a mild rash on my arm?", "Please send me the revised budget before Friday."):
        openai_client.chat.completions.create(model="ragshield", messages=[{"role": "user", "content": question}])
    assert echo_server.config.audit_log is not None
    raw = Path(echo_server.config.audit_log).read_text(encoding="utf-8")
    lines = audit_lines(echo_server.config.audit_log)
    assert lines and any(line["action"] == "block" for line in lines)
    corpus = make_synthetic_corpus(300, seed=0)
    retrieved = {chunk_id for line in lines for chunk_id in line["chunk_ids"]}
    texts = {doc.id: doc.text for doc in corpus.documents}
    assert retrieved
    for canary in echo_server.canaries():
        assert canary not in raw and canary.casefold() not in raw.casefold()
    for doc_id, text in texts.items():
        if not any(chunk_id.startswith(doc_id) for chunk_id in retrieved):
            continue
        for start in range(0, max(1, len(text) - 24), 12):
            assert text[start : start + 24] not in raw
    pii = [item.value for item in corpus.pii or () if any(c.startswith(item.doc_id) for c in retrieved)]
    assert pii
    for value in pii:
        assert value not in raw, f"PII value of kind found in the audit log: {value[:3]}..."
    assert "What should I do about persistent headaches?" not in raw  # queries are hashed


def _wait_ready(url: str, process: subprocess.Popen[bytes], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"ragshield serve exited with {process.returncode}: {process.stderr.read()!r}"
                if process.stderr
                else "ragshield serve exited"
            )
        try:
            if httpx.get(f"{url}/readyz", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError("ragshield serve did not become ready in time")


def test_blocked_user_stays_blocked_across_a_restart(
    synthetic_index: Path, synthetic_retriever: Any, benign_file: Path, tmp_path: Path
) -> None:
    config = serve_config(
        synthetic_index,
        benign_file,
        tmp_path,
        policy={"window": 10, "k": 2, "block_seconds": 3600, "store": f"sqlite:{tmp_path / 'policy.db'}"},
    )
    with running(config, synthetic_retriever, EchoContextGenerator()) as (server, _):
        mallory = client(server, "mallory")
        for _ in range(2):  # two extraction attempts: two violations, k = 2 blocks
            reply = mallory.chat.completions.create(
                model="ragshield", messages=[{"role": "user", "content": EXTRACTION}]
            )
            assert reply.choices[0].finish_reason == "content_filter"
        with pytest.raises(openai.PermissionDeniedError) as caught:
            mallory.chat.completions.create(model="ragshield", messages=[{"role": "user", "content": BENIGN_QUESTION}])
        assert caught.value.code == "user_blocked"

    # restart: a new `ragshield serve` process on the same config file and policy store
    config_file = tmp_path / "serve.yaml"
    config_file.write_text(yaml.safe_dump(config.model_dump(mode="json", exclude_none=True)), encoding="utf-8")
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ragshield.cli",
            "serve",
            "--config",
            str(config_file),
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_ready(url, process)
        restarted = openai.OpenAI(base_url=f"{url}/v1", api_key=KEY["mallory"], max_retries=0, timeout=60.0)
        with pytest.raises(openai.PermissionDeniedError) as caught:
            restarted.chat.completions.create(
                model="ragshield", messages=[{"role": "user", "content": BENIGN_QUESTION}]
            )
        assert caught.value.code == "user_blocked"
        other = openai.OpenAI(base_url=f"{url}/v1", api_key=KEY["alice"], max_retries=0, timeout=60.0)
        reply = other.chat.completions.create(
            model="ragshield", messages=[{"role": "user", "content": BENIGN_QUESTION}]
        )
        assert reply.ragshield["stage"] != "policy"  # alice is not blocked (the echo model's leak is, at output)
    finally:
        process.terminate()
        process.wait(timeout=20)


class FakeCutGenerator:
    """FAKE target: a benign answer that its token limit cut (ends with the StreamEnd marker)."""

    name = "fake-cut"

    def stream(self, request: Any) -> Any:
        from ragshield.generators.base import StreamEnd

        yield from ("Rest, fluids and ", "a cool compress usually ")
        yield StreamEnd("length")


def test_an_answer_cut_by_max_tokens_reports_length(
    synthetic_index: Path, synthetic_retriever: Any, benign_file: Path, tmp_path: Path
) -> None:
    """OpenAI clients read finish_reason `length` as "truncated": streamed and not."""
    config = serve_config(synthetic_index, benign_file, tmp_path, defenses=["canary-rag"], calibration=None)
    with running(config, synthetic_retriever, FakeCutGenerator()) as (server, _):
        openai_client = client(server, "alice")
        messages = [{"role": "user", "content": BENIGN_QUESTION}]
        reply = openai_client.chat.completions.create(model="ragshield", messages=messages)
        assert reply.choices[0].finish_reason == "length"
        assert reply.choices[0].message.content == "Rest, fluids and a cool compress usually "
        chunks = list(openai_client.chat.completions.create(model="ragshield", messages=messages, stream=True))
        assert chunks[-1].choices[0].finish_reason == "length"
