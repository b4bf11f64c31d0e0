"""Schema-driven fuzzing (schemathesis) of `/v1/chat/completions` and `/v1/guard/*` from the
service's own OpenAPI schema: valid and invalid bodies, a bounded number of examples per
operation, against a real server on loopback with the real canary defense, a SQLite blocking
policy and a FAKE fast model. No answer may be a 5xx, and the server must be healthy after."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes import SlowWords, canary_pipeline
from service_helpers import KEY, KEYS, audit_lines

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402

from ragshield.service.app import create_app  # noqa: E402
from ragshield.service.openapi import build_schema  # noqa: E402
from ragshield.service.server import BackgroundServer  # noqa: E402
from ragshield.service.settings import ServeConfig  # noqa: E402

pytestmark = pytest.mark.service
EXAMPLES = 40  # per operation and generation mode (valid, invalid): about 250 requests, ~20 s
HEADERS = {"Authorization": f"Bearer {KEY['alice']}"}


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BackgroundServer, Path]]:
    tmp = tmp_path_factory.mktemp("fuzz")
    config = ServeConfig(api_keys=KEYS, audit_log=str(tmp / "audit.jsonl"), request_timeout_s=10.0)
    pipeline = canary_pipeline(SlowWords(8, 0.0), store=f"sqlite:{tmp / 'policy.db'}")
    app = create_app(config, pipeline=pipeline, warm_up=False)
    with BackgroundServer(app) as server:
        yield server, tmp / "audit.jsonl"


@pytest.fixture(scope="module")
def api_schema(fuzzed: tuple[BackgroundServer, Path]) -> Any:
    server, _ = fuzzed
    schema = httpx.get(f"{server.url}/openapi.json", headers=HEADERS).json()
    assert schema == build_schema(server._server.config.app)  # served schema = the one built here
    return schemathesis.openapi.from_dict(schema)


# schemathesis' own pytest plugin (`from_fixture`) does not run under pytest 9: draw its cases
# with hypothesis directly from each operation's strategy instead
@pytest.mark.parametrize("mode", ["positive", "negative"])
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/guard/query", "/v1/guard/output"])
def test_no_generated_request_gets_a_server_error(
    path: str, mode: str, api_schema: Any, fuzzed: tuple[BackgroundServer, Path]
) -> None:
    server, _ = fuzzed
    operation = api_schema[path]["POST"]
    strategy = operation.as_strategy(generation_mode=schemathesis.GenerationMode(mode))
    seen: list[int] = []

    @given(case=strategy)
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    def check(case: Any) -> None:
        response = case.call(base_url=server.url, headers=HEADERS, timeout=30)
        seen.append(response.status_code)
        assert response.status_code < 500, f"{case.method} {case.path}: {response.status_code} {response.text[:300]}"
        if response.status_code >= 400:
            error = response.json()["error"]  # every error in the OpenAI shape
            assert error["message"] and error["type"]

    check()
    assert len(seen) >= EXAMPLES // 2
    if mode == "negative":
        assert any(400 <= status < 500 for status in seen)


def test_the_server_is_healthy_after_fuzzing(fuzzed: tuple[BackgroundServer, Path]) -> None:
    server, audit = fuzzed
    assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{server.url}/readyz").status_code == 200
    reply = httpx.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "ragshield", "messages": [{"role": "user", "content": "a plain question"}]},
        headers={"Authorization": f"Bearer {KEY['carol']}"},
        timeout=30,
    )
    assert reply.status_code == 200
    metrics = httpx.get(f"{server.url}/metrics").text
    assert 'outcome="error"' not in metrics
    assert all(line["action"] != "error" for line in audit_lines(audit))
