"""Bad input gets a clear 4xx (OpenAI error shape) and the server keeps serving; a client that
disconnects mid-stream stops the generation and frees the model."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_helpers import KEY, KEYS, Served, audit_lines, client, openai

from ragshield.config import validate
from ragshield.errors import ConfigError
from ragshield.pipeline import RagPipeline
from ragshield.service.app import create_app
from ragshield.service.server import BackgroundServer
from ragshield.service.settings import ServeConfig, check_bind, load_serve_config
from ragshield.types import GenerationRequest

pytestmark = pytest.mark.service
CHAT = "/v1/chat/completions"


def _post(served: Served, body: bytes, user: str = "alice") -> httpx.Response:
    headers = {"Authorization": f"Bearer {KEY[user]}", "Content-Type": "application/json"}
    return httpx.post(f"{served.server.url}{CHAT}", content=body, headers=headers, timeout=30.0)


def _error(reply: httpx.Response, status: int) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    error: dict[str, Any] = reply.json()["error"]
    assert error["message"] and error["type"]
    return error


def _still_serving(served: Served) -> None:
    assert httpx.get(f"{served.server.url}/healthz").json() == {"status": "ok"}
    reply = client(served.server, "alice").chat.completions.create(
        model="ragshield", messages=[{"role": "user", "content": "How do I treat a minor burn at home?"}]
    )
    assert reply.choices[0].finish_reason in {"stop", "content_filter"}


@pytest.mark.parametrize(
    ("body", "status", "code", "says"),
    [
        (b'{"model": "ragshield", "messages": [', 400, "invalid_json", "malformed JSON"),
        (b"", 400, "invalid_json", "empty"),
        (b"[1, 2]", 400, "invalid_json", "JSON object"),
        (b'{"model": "ragshield"}', 400, "invalid_request", "messages"),
        (b'{"messages": [{"role": "user", "content": "hi"}]}', 400, "invalid_request", "model"),
        (b'{"model": "ragshield", "messages": []}', 400, "invalid_request", "messages"),
        (b'{"model": "ragshield", "messages": [{"role": "wizard", "content": "hi"}]}', 400, "invalid_request", "role"),
        (b'{"model": "ragshield", "messages": [{"role": "system", "content": "hi"}]}', 400, None, "user"),
        (
            b'{"model": "ragshield", "messages": [{"role": "user", "content": "\xff\xfe caf\xe9"}]}',
            400,
            "invalid_utf8",
            "UTF-8",
        ),
        (
            b'{"model": "ragshield", "messages": [{"role": "user", "content": "bad \\ud800 escape"}]}',
            400,
            "invalid_unicode",
            "Unicode",
        ),
        (
            b'{"model": "ragshield", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}',
            400,
            None,
            "image_url",
        ),
        (b'{"model": "ragshield", "messages": [{"role": "user", "content": "   "}]}', 400, "invalid_query", "empty"),
        (
            json.dumps({"model": "ragshield", "messages": [{"role": "user", "content": "x" * 9000}]}).encode(),
            400,
            "invalid_query",
            "8000",
        ),
    ],
)
def test_malformed_requests_get_a_clear_400(
    echo_server: Served, body: bytes, status: int, code: str | None, says: str
) -> None:
    error = _error(_post(echo_server, body), status)
    assert error["code"] == code or code is None
    assert says in error["message"]


def test_one_megabyte_prompt_gets_413_through_the_openai_client(echo_server: Served) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        client(echo_server.server).chat.completions.create(
            model="ragshield", messages=[{"role": "user", "content": "a" * 1_000_000}]
        )
    assert caught.value.status_code == 413 and caught.value.code == "body_too_large"
    _still_serving(echo_server)


def test_unknown_model_is_a_404_naming_the_served_model(echo_server: Served) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client(echo_server.server).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hello"}]
        )
    assert caught.value.code == "model_not_found" and "'ragshield'" in caught.value.message
    models = client(echo_server.server).models.list()
    assert [model.id for model in models.data] == ["ragshield"]


def test_missing_or_wrong_api_key_is_401(echo_server: Served) -> None:
    wrong = openai.OpenAI(base_url=f"{echo_server.server.url}/v1", api_key="not-a-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(model="ragshield", messages=[{"role": "user", "content": "hello"}])
    reply = httpx.post(f"{echo_server.server.url}{CHAT}", json={"model": "ragshield", "messages": []})
    assert _error(reply, 401)["code"] == "missing_api_key"
    _still_serving(echo_server)


def test_unknown_route_and_method_use_the_error_shape(echo_server: Served) -> None:
    assert _error(httpx.get(f"{echo_server.server.url}/v1/nothing"), 404)["code"] == "http_404"
    assert _error(httpx.get(f"{echo_server.server.url}{CHAT}"), 405)["code"] == "http_405"


class SlowGenerator:
    """FAKE model for the disconnect test: one word every 20 ms for up to 20 s; records when its
    stream is closed (the pipeline closes it when the client goes away)."""

    name = "slow-fake"

    def __init__(self) -> None:
        self.closed = threading.Event()
        self.words = 0
        self.max_words = 1000

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        try:
            for _ in range(self.max_words):
                time.sleep(0.02)
                self.words += 1
                yield "word "
        finally:
            self.closed.set()


def _in_flight(url: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith("ragshield_in_flight "):
            return float(line.split()[1])
    raise AssertionError("ragshield_in_flight missing from /metrics")


def test_client_disconnecting_mid_stream_stops_generation_and_server_keeps_serving(
    fake_retriever: Any, tmp_path: Path
) -> None:
    generator = SlowGenerator()
    config = ServeConfig(api_keys=KEYS, audit_log=str(tmp_path / "audit.jsonl"))
    app = create_app(config, pipeline=RagPipeline(fake_retriever, generator), warm_up=False)
    with BackgroundServer(app) as server:
        body = {"model": "ragshield", "stream": True, "messages": [{"role": "user", "content": "tell me a story"}]}
        headers = {"Authorization": f"Bearer {KEY['alice']}"}
        with httpx.stream("POST", f"{server.url}{CHAT}", json=body, headers=headers, timeout=30) as reply:
            lines = reply.iter_lines()
            seen = [next(lines) for _ in range(6)]
        assert any("word" in line for line in seen)
        assert generator.closed.wait(5.0), "the model's stream must be closed after the client leaves"
        words = generator.words
        assert words < 500
        deadline = time.monotonic() + 5
        while _in_flight(server.url) != 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _in_flight(server.url) == 0
        assert [line["action"] for line in audit_lines(tmp_path / "audit.jsonl")] == ["disconnected"]
        # the server keeps serving, and the model is free again
        generator.max_words = 5
        reply = httpx.post(f"{server.url}{CHAT}", json={**body, "stream": False}, headers=headers, timeout=60)
        assert reply.status_code == 200 and reply.json()["choices"][0]["finish_reason"] == "stop"


def test_unauthenticated_server_refuses_a_public_bind(tmp_path: Path) -> None:
    open_config = ServeConfig()
    check_bind(open_config, "127.0.0.1")
    check_bind(open_config, "localhost")
    with pytest.raises(ConfigError, match="api_keys"):
        check_bind(open_config, "0.0.0.0")
    check_bind(ServeConfig(api_keys=KEYS), "0.0.0.0")
    with pytest.raises(ConfigError, match="16 characters"):
        validate(ServeConfig, {"api_keys": {"short": "bob"}})
    bad = tmp_path / "serve.yaml"
    bad.write_text("index: x\napi_key: {abc: bob}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="api_key"):
        load_serve_config(bad)


def test_serve_command_refuses_public_bind_before_loading_models(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragshield.cli import app

    config = tmp_path / "serve.yaml"
    config.write_text(f"index: {tmp_path / 'missing-index'}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["serve", "--config", str(config), "--host", "0.0.0.0"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError) and "api_keys" in str(result.exception)
