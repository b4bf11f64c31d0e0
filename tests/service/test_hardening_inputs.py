"""What a hostile client controls is bounded, and every error reads the same way (issue 15,
findings 1, 6, 9 and 10). FAKE models and the FAKE hashing retriever; real servers on loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes import KeywordGuard, SlowWords, canary_pipeline, fake_pipeline
from service_helpers import KEY, KEYS, audit_lines, openai

from ragshield.guards.canary.canaries import CANARY_ALPHABET
from ragshield.service.app import create_app
from ragshield.service.server import BackgroundServer, free_port
from ragshield.service.settings import ServeConfig

pytestmark = pytest.mark.service
HERE = Path(__file__).parent
ASK = [{"role": "user", "content": "What helps with a stiff neck in the morning?"}]


def _auth(user: str = "alice") -> dict[str, str]:
    return {"Authorization": f"Bearer {KEY[user]}"}


def _metric(url: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{key}="{value}"' for key, value in labels.items())
    prefix = f"{name}{{{wanted}}}" if labels else name
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith(prefix + " ") or ((labels and line.startswith(prefix.rstrip("}"))) and wanted in line):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.fixture(scope="module")
def canary_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The canary defense served by a separate process (a crash must not take pytest with it)."""
    tmp = tmp_path_factory.mktemp("canary-process")
    spec = {"serve": {"api_keys": KEYS, "audit_log": str(tmp / "audit.jsonl")}, "canary": True}
    (tmp / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(HERE / "fakes.py"), str(tmp / "spec.json"), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the fake server did not start: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        time.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def _guard_output(url: str, markers: dict[str, list[str]]) -> httpx.Response:
    """The markers with a context whose chunk texts hold them (as /v1/guard/query returns it)."""
    context = [
        {"id": chunk_id, "text": " ".join(["some retrieved text", *canaries])[:50_000], "similarity": 0.5}
        for chunk_id, canaries in markers.items()
    ]
    body = {"query": "what is in the record?", "context": context, "markers": markers, "output": "an answer"}
    return httpx.post(f"{url}/v1/guard/output", json=body, headers=_auth(), timeout=60)


@pytest.mark.parametrize(
    ("markers", "says"),
    [
        ({"c1": ["a" * 200_000]}, "not one ragshield issued"),  # crashed the server (SIGSEGV) before
        ({"c1": ["a" * 65]}, "not one ragshield issued"),
        ({"c1": ["abc"]}, "not one ragshield issued"),  # shorter than MIN_LENGTH
        ({"c1": ["0123456789ab"]}, "not one ragshield issued"),  # 0 and 1 are not in the alphabet
        ({"c1": ["ABCDEFGHJKMN"]}, "not one ragshield issued"),  # upper case is not either
        ({f"c{i}": ["23456789abcd"] * 1000 for i in range(3)}, "at most 2048 canaries in all"),
        ({"c1": ["23456789abcd"] * 1025}, "at most 1024 canaries per chunk"),
    ],
)
def test_client_canaries_are_validated_before_the_matcher_sees_them(
    canary_process: str, markers: dict[str, list[str]], says: str
) -> None:
    reply = _guard_output(canary_process, markers)
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["code"] == "invalid_request" and says in error["message"]
    assert "a" * 20 not in error["message"]  # the canary is never echoed
    assert httpx.get(f"{canary_process}/healthz", timeout=5).json() == {"status": "ok"}


def test_canaries_ragshield_issued_still_pass(canary_process: str) -> None:
    canary = "".join(CANARY_ALPHABET[i % len(CANARY_ALPHABET)] for i in range(12))
    reply = _guard_output(canary_process, {"c1": [canary], "c2": [canary[::-1]]})
    assert reply.status_code == 200, reply.text
    assert reply.json()["action"] == "allow"


def test_a_canary_must_be_in_its_chunk(canary_process: str) -> None:
    body = {
        "query": "q",
        "context": [{"id": "c1", "text": "text without the canary", "similarity": 0.5}],
        "markers": {"c1": ["23456789abcd"]},
        "output": "an answer",
    }
    reply = httpx.post(f"{canary_process}/v1/guard/output", json=body, headers=_auth(), timeout=60)
    assert reply.status_code == 400 and "not in its chunk's text" in reply.json()["error"]["message"]


@pytest.fixture(scope="module")
def fake_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("inputs")
    config = ServeConfig(api_keys=KEYS, audit_log=str(tmp / "audit.jsonl"), body_timeout_s=1.0, header_timeout_s=1.0)
    app = create_app(config, pipeline=fake_pipeline(SlowWords(5)), warm_up=False)
    with BackgroundServer(app) as server:
        yield server.url, tmp / "audit.jsonl"


def test_deep_json_is_a_400_in_the_openai_shape_and_counted(fake_server: tuple[str, Path]) -> None:
    url, _ = fake_server
    before = _metric(url, "ragshield_requests_total", endpoint="chat", outcome="bad_request")
    for depth in (40, 1_000, 100_000):
        body = b"[" * depth + b"]" * depth
        reply = httpx.post(
            f"{url}/v1/chat/completions", content=body, headers={**_auth(), "Content-Type": "application/json"}
        )
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["code"] == "json_too_deep"
    nested: Any = "hi"
    for _ in range(50):
        nested = [nested]
    reply = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "ragshield", "messages": [{"role": "user", "content": "hi", "extra": nested}]},
        headers=_auth(),
    )
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "json_too_deep"
    assert _metric(url, "ragshield_requests_total", endpoint="chat", outcome="bad_request") == before + 4


def test_unknown_paths_are_counted_too(fake_server: tuple[str, Path]) -> None:
    url, _ = fake_server
    before = _metric(url, "ragshield_requests_total", endpoint="other", outcome="bad_request")
    assert httpx.get(f"{url}/nothing/here").json()["error"]["code"] == "http_404"
    assert _metric(url, "ragshield_requests_total", endpoint="other", outcome="bad_request") == before + 1


def test_docs_and_schema_need_the_key(fake_server: tuple[str, Path]) -> None:
    url, _ = fake_server
    for path in ("/openapi.json", "/docs"):
        reply = httpx.get(f"{url}{path}")
        assert reply.status_code == 401 and reply.json()["error"]["code"] == "missing_api_key"
        assert httpx.get(f"{url}{path}", headers=_auth()).status_code == 200
    schema = httpx.get(f"{url}/openapi.json", headers=_auth()).json()
    assert "requestBody" in schema["paths"]["/v1/guard/output"]["post"]
    assert httpx.get(f"{url}/redoc").status_code == 404


def test_open_docs_serves_them_without_a_key(tmp_path: Path) -> None:
    config = ServeConfig(api_keys=KEYS, open_docs=True)
    with BackgroundServer(create_app(config, pipeline=fake_pipeline(SlowWords(1)), warm_up=False)) as server:
        assert httpx.get(f"{server.url}/openapi.json").status_code == 200


def test_a_body_that_trickles_in_gets_a_408(fake_server: tuple[str, Path]) -> None:
    url, _ = fake_server
    host, port = url.removeprefix("http://").split(":")

    with socket.create_connection((host, int(port)), timeout=10) as conn:
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {KEY['alice']}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        conn.sendall(head.encode())
        started = time.monotonic()
        reply = ""
        while "}}" not in reply:
            piece = conn.recv(65536).decode()
            if not piece:
                break
            reply += piece
        assert time.monotonic() - started < 5
    assert reply.startswith("HTTP/1.1 408") and "body_timeout" in reply


def test_headers_that_never_finish_get_the_connection_closed(fake_server: tuple[str, Path]) -> None:
    url, _ = fake_server
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        started = time.monotonic()
        assert conn.recv(1024) == b""  # closed by the server, no response
        assert time.monotonic() - started < 5
    assert httpx.get(f"{url}/healthz").status_code == 200


def test_include_usage_sends_a_usage_chunk(fake_server: tuple[str, Path]) -> None:
    url, _ = fake_server
    api = openai.OpenAI(base_url=f"{url}/v1", api_key=KEY["alice"], max_retries=0)
    chunks = list(
        api.chat.completions.create(
            model="ragshield", messages=ASK, stream=True, stream_options={"include_usage": True}
        )
    )
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert last.usage.completion_tokens == 5 and last.usage.prompt_tokens == len(ASK[0]["content"].split())
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens
    assert all(chunk.usage is None for chunk in chunks[:-1])
    plain = list(api.chat.completions.create(model="ragshield", messages=ASK, stream=True))
    assert all(chunk.usage is None for chunk in plain)
    whole = api.chat.completions.create(model="ragshield", messages=ASK)
    assert whole.usage is not None and whole.usage.completion_tokens == 5


# -- finding 9: policy identity --------------------------------------------------------------


def test_an_app_user_cannot_block_another_keys_user(tmp_path: Path) -> None:
    keys = {"app-key-0123456789abcdefgh": "app", "victim-key-0123456789abcdef": "app/victim"}
    config = ServeConfig(api_keys=keys, audit_log=str(tmp_path / "audit.jsonl"))
    pipeline = fake_pipeline(SlowWords(3), query_guards=(KeywordGuard(),), store=f"sqlite:{tmp_path / 'p.db'}", k=1)
    with BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)) as server:
        chunk = {"id": "c1", "text": "a record", "similarity": 0.4}
        body = {"query": "EXTRACT everything", "chunks": [chunk], "user": "victim"}
        headers = {"Authorization": "Bearer app-key-0123456789abcdefgh"}
        reply = httpx.post(f"{server.url}/v1/guard/query", json=body, headers=headers)
        assert reply.json()["action"] == "block"
        blocked = httpx.post(f"{server.url}/v1/guard/query", json={**body, "query": "hello"}, headers=headers)
        assert blocked.json()["action"] == "block" and "violation-policy" in blocked.json()["blocked_by"]
        victim = openai.OpenAI(base_url=f"{server.url}/v1", api_key="victim-key-0123456789abcdef", max_retries=0)
        answer = victim.chat.completions.create(model="ragshield", messages=ASK)
        assert answer.choices[0].finish_reason == "stop"
    users = {line["user_id"] for line in audit_lines(tmp_path / "audit.jsonl")}
    assert users == {"app/victim", "app%2Fvictim"}


# -- finding 6: key-less mode -------------------------------------------------------------------


def test_keyless_server_refuses_what_a_web_page_can_send(tmp_path: Path) -> None:
    config = ServeConfig(audit_log=str(tmp_path / "audit.jsonl"))
    pipeline = fake_pipeline(SlowWords(3), query_guards=(KeywordGuard(),), store=f"sqlite:{tmp_path / 'p.db'}", k=1)
    with BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)) as server:
        chat = f"{server.url}/v1/chat/completions"
        body = json.dumps({"model": "ragshield", "messages": [{"role": "user", "content": "EXTRACT all"}]})
        simple = httpx.post(chat, content=body, headers={"Content-Type": "text/plain"})
        assert simple.status_code == 415 and simple.json()["error"]["code"] == "unsupported_media_type"
        for origin in ("http://evil.example", "null", "http://127.0.0.1:1"):
            foreign = httpx.post(chat, content=body, headers={"Content-Type": "application/json", "Origin": origin})
            assert foreign.status_code == 403 and foreign.json()["error"]["code"] == "cross_origin_forbidden"
        site = httpx.post(
            chat, content=body, headers={"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}
        )
        assert site.status_code == 403
        rebound = httpx.post(chat, content=body, headers={"Content-Type": "application/json", "Host": "evil.example"})
        assert rebound.status_code == 421
        assert audit_lines(tmp_path / "audit.jsonl") == []  # none of them reached the pipeline or the policy
        own = httpx.post(chat, content=body, headers={"Content-Type": "application/json", "Origin": server.url})
        assert own.status_code == 200 and own.json()["choices"][0]["finish_reason"] == "content_filter"
        assert httpx.get(f"{server.url}/v1/models").status_code == 200


# -- finding 10: config errors ---------------------------------------------------------------


def test_config_errors_are_config_errors_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ragshield serve` turns a ConfigError into one line and exit status 2 (ragshield.cli.main)."""
    from functools import partial

    from fakes import fake_retriever

    from ragshield.errors import ConfigError
    from ragshield.guards.policy import make_store
    from ragshield.system import build_system

    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot open the policy store") as caught:
        make_store(f"sqlite:{tmp_path / 'a-file' / 'policy.db'}")
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="invalid Redis policy store URL"):
        pytest.importorskip("redis")
        make_store("redis://:notaport/0")
    monkeypatch.setattr(
        "ragshield.service.app.build_system", partial(build_system, retriever=fake_retriever(), generator=SlowWords())
    )
    missing = tmp_path / "benign.jsonl"
    config = ServeConfig.model_validate(
        {"index": str(tmp_path), "defenses": ["rag-ct"], "calibration": {"path": str(missing)}}
    )
    with pytest.raises(ConfigError, match="cannot start the service") as caught:
        create_app(config)
    assert str(missing) in str(caught.value)
    with pytest.raises(ConfigError, match="cannot open the audit log"):
        create_app(ServeConfig(audit_log=str(tmp_path / "a-file" / "audit.jsonl")), pipeline=fake_pipeline(SlowWords()))


def test_default_canary_mode_streams_no_canary(tmp_path: Path) -> None:
    """WORST CASE (EchoContextGenerator copies its context) under the default `on_violation:
    redact`: the answer goes on, and no streamed chunk holds a canary."""
    from ragshield.generators.scripted import EchoContextGenerator
    from ragshield.integrations.shield import recording_defense
    from ragshield.types import RetrievalResult

    sink: list[RetrievalResult] = []
    pipeline = canary_pipeline(EchoContextGenerator())
    pipeline = pipeline.with_defense(recording_defense(pipeline.defense, sink))
    config = ServeConfig(api_keys=KEYS, audit_log=str(tmp_path / "audit.jsonl"))
    with BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)) as server:
        api = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY["alice"], max_retries=0)
        pieces = [
            chunk.choices[0].delta.content or ""
            for chunk in api.chat.completions.create(model="ragshield", messages=ASK, stream=True)
            if chunk.choices
        ]
    canaries = {canary for result in sink for values in result.markers.values() for canary in values}
    assert canaries and "".join(pieces)
    text = "".join(pieces).casefold()
    assert all(canary.casefold() not in text for canary in canaries)
    assert [line["action"] for line in audit_lines(tmp_path / "audit.jsonl")] in (["allow"], ["block"])
