"""CLI behaviour of the red-team options on FAKE parts (hashing-embedder index, no PII pass):
`ask` exits non-zero naming an unreachable generator, target options are validated, and a
campaign without a knowledge-base export says what it could not measure."""

from __future__ import annotations

import csv
import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragshield.cli import app
from ragshield.config import generator_settings
from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.errors import ConfigError
from ragshield.rag.build import build_index
from ragshield.rag.embedding import HashingEmbedder
from ragshield.targets.options import target_spec
from ragshield.targets.rest import compile_path, fill


@pytest.fixture
def index(tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    build_index(make_synthetic_corpus(20, seed=2), HashingEmbedder(), folder, corpus_spec="synthetic:20", pii=False)
    return folder


def closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def test_ask_exits_nonzero_naming_an_unreachable_generator(index: Path) -> None:
    url = closed_url()
    args = ["ask", "a question", "--index", str(index), "--defense", "none", "--generator-url", url]
    result = CliRunner().invoke(app, [*args, "--generator-model", "m"])
    assert result.exit_code == 1
    assert url in result.output and "ConnectError" in result.output


def test_generator_settings_and_target_options() -> None:
    assert generator_settings("llama-cpp") == ("llama-cpp", {})
    assert generator_settings("llama-cpp", url="http://h/v1", model="m") == (
        "openai-compatible",
        {"base_url": "http://h/v1", "model": "m"},
    )
    with pytest.raises(ConfigError):
        generator_settings("echo-context", url="http://h/v1")
    spec = target_spec("openai-chat", url="http://h/v1", model="m", headers=["X-Tenant=a"], body=["max_tokens=64"])
    assert spec.options == {
        "base_url": "http://h/v1",
        "model": "m",
        "headers": {"X-Tenant": "a"},
        "body": {"max_tokens": 64},
    }
    with pytest.raises(ConfigError, match="unknown target"):
        target_spec("grpc")
    with pytest.raises(ConfigError, match="local target"):
        target_spec("local", url="http://h")


def test_rest_template_and_paths() -> None:
    history = [{"role": "user", "content": "hi"}]
    body = {"q": "say {query}", "turns": "{history}", "n": 1}
    assert fill(body, 'x"y', history) == {"q": 'say x"y', "turns": history, "n": 1}
    reply = {"data": {"items": [{"text": "a"}]}, "key with space": "b"}
    assert compile_path("$.data.items[0].text").search(reply) == "a"
    assert compile_path("$['key with space']").search(reply) == "b"
    assert compile_path("data.items[0].text").search(reply) == "a"
    with pytest.raises(ConfigError, match="JMESPath"):
        compile_path("$..text")


def test_campaign_without_export_reports_only_what_a_client_sees(tmp_path: Path) -> None:
    """A langchain target (a plain RunnableLambda, FAKE app) without --kb."""
    pytest.importorskip("langchain_core")
    out = tmp_path / "t.jsonl"
    args = ["attack", "--attack", "tgtb", "--budget", "3", "--out", str(out), "--target", "langchain"]
    result = CliRunner().invoke(app, [*args, "--runnable", "test_campaign_cli:fake_app", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert "leakage" not in summary and summary["measured_against"] is None
    assert "cannot be measured" in summary["note"]
    view = summary["client_view"]
    assert view["queries"] == 3 and view["refused"] == 0 and view["canary_shaped_answers"] == 3


def fake_app() -> object:
    """FAKE app: answers with a canary-shaped token."""
    from langchain_core.runnables import RunnableLambda

    return RunnableLambda(lambda question: "I cannot share that. ref 7kq2x9mz4tbw")


def test_openai_chat_target_honours_env_and_sends_earlier_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragshield.targets.openai_chat import OpenAIChatTarget
    from ragshield.types import ChatMessage

    monkeypatch.setenv("OPENAI_BASE_URL", "http://app.internal:9000/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    target = OpenAIChatTarget("m", body={"max_tokens": 32}, system_prompt="be brief")
    assert target.url == "http://app.internal:9000/v1/chat/completions"
    assert target._client.headers["Authorization"] == "Bearer sk-test-0123456789"
    turns = (ChatMessage("user", "q1"), ChatMessage("assistant", "a1"))
    payload = target._payload("q2", turns)
    assert payload["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
    ]
    assert payload["max_tokens"] == 32 and payload["model"] == "m" and payload["stream"] is False
    with pytest.raises(ConfigError, match="set by the target"):
        OpenAIChatTarget("m", body={"messages": []})


def test_export_formats_read_the_same_documents(tmp_path: Path) -> None:
    from ragshield.campaign.measure import read_export

    texts = {"a": "first record, with a comma", "b": "second record\nover two lines"}
    (tmp_path / "kb.jsonl").write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in texts.items()))
    with (tmp_path / "kb.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "body"])
        writer.writerows(texts.items())
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text(texts["a"])
    (folder / "sub" / "b.txt").write_text(texts["b"])
    (folder / "ignored.pdf").write_bytes(b"%PDF")
    expected = sorted(texts.values())
    assert sorted(d.text for d in read_export(tmp_path / "kb.jsonl")) == expected
    assert sorted(d.text for d in read_export(tmp_path / "kb.csv", text_field="body")) == expected
    assert sorted(d.text for d in read_export(folder)) == expected
    with pytest.raises(ConfigError, match="no column 'text'"):
        read_export(tmp_path / "kb.csv")
    with pytest.raises(ConfigError, match="not found"):
        read_export(tmp_path / "missing.jsonl")
