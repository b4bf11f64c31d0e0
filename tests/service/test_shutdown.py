"""SIGTERM drains (issue 15, finding 8): streams still running when the grace period ends get an
error event, every request gets exactly one audit line, and the process exits. The server is a
separate process (`fakes.py`, run like `ragshield serve`) with a FAKE slow model."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from service_helpers import KEY, KEYS, audit_lines

from ragshield.service.server import free_port

pytestmark = pytest.mark.service
HERE = Path(__file__).parent


def _start(tmp_path: Path, words: int = 400, **serve: object) -> tuple[subprocess.Popen[bytes], str]:
    spec = {
        "serve": {"api_keys": KEYS, "audit_log": str(tmp_path / "audit.jsonl"), **serve},
        "words": words,
        "delay_s": 0.05,  # 400 words: 20 s per answer, far longer than a 1 s grace period
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(HERE / "fakes.py"), str(tmp_path / "spec.json"), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail("the fake server did not start")
        time.sleep(0.1)


def _stream(url: str, lines: list[str], started: threading.Event) -> None:
    body = {"model": "ragshield", "stream": True, "messages": [{"role": "user", "content": "tell me a story"}]}
    headers = {"Authorization": f"Bearer {KEY['alice']}"}
    try:
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, headers=headers, timeout=60) as reply:
            for line in reply.iter_lines():
                if line:
                    lines.append(line)
                if "word" in line:
                    started.set()
    except httpx.HTTPError as error:
        lines.append(f"transport error: {type(error).__name__}")


def test_sigterm_ends_streams_with_an_error_event_and_an_audit_line(tmp_path: Path) -> None:
    process, url = _start(tmp_path, shutdown_grace_s=1.0)
    try:
        streams: list[list[str]] = [[] for _ in range(3)]
        flags = [threading.Event() for _ in streams]
        readers = [threading.Thread(target=_stream, args=(url, s, f)) for s, f in zip(streams, flags, strict=True)]
        for reader in readers:
            reader.start()
        assert all(flag.wait(30) for flag in flags), "the streams did not start"
        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        for reader in readers:
            reader.join(timeout=30)
        ended = time.monotonic() - signalled
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert ended < 8, f"the streams took {ended:.1f}s to end after SIGTERM (grace 1 s)"
    for lines in streams:
        last = json.loads(lines[-1].removeprefix("data: "))
        assert last["error"]["code"] == "server_shutting_down", lines[-3:]
    records = audit_lines(tmp_path / "audit.jsonl")
    assert sorted(record["action"] for record in records) == ["shutdown"] * 3
    assert len({record["request_id"] for record in records}) == 3


def test_a_request_that_finishes_within_the_grace_period_is_answered(tmp_path: Path) -> None:
    process, url = _start(tmp_path, words=60, shutdown_grace_s=30.0)
    try:
        lines: list[str] = []
        flag = threading.Event()
        reader = threading.Thread(target=_stream, args=(url, lines, flag))
        reader.start()
        assert flag.wait(30)
        process.send_signal(signal.SIGTERM)
        reader.join(timeout=60)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert lines[-1] == "data: [DONE]"
    assert [record["action"] for record in audit_lines(tmp_path / "audit.jsonl")] == ["allow"]
