"""The examples in docs/deployment.md marked `tested` run as written: the library example in
process, the LangChain one with LangChain's own stand-ins, and the guard-only service's config and
client against a real server on loopback started from that config.

NER is switched off here (as in an install without the `ner` extra): the examples' release
containment then uses presidio's patterns only, which load in a second instead of half a minute."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
ANSWER = "Most acne improves within 6 to 8 weeks of treatment."  # what the examples' stand-in model says
BLOCK = re.compile(r"^```(\w+) tested\n(.*?)^```", re.MULTILINE | re.DOTALL)


def marked_blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(DOC.read_text(encoding="utf-8")) if lang == language]


@pytest.fixture(autouse=True)
def _no_ner(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragshield.pii.analyzer

    monkeypatch.setattr(ragshield.pii.analyzer, "ner_available", lambda: False)


def run_example(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "deployment_example"}
    exec(compile(code, str(DOC), "exec"), namespace)
    return namespace


def test_the_document_marks_an_example_for_each_way_in() -> None:
    python = marked_blocks("python")
    assert any("Shield.build" in block and "check_output" in block for block in python)  # library
    assert any("GuardedChain" in block for block in python)  # adapters
    assert any("/v1/guard" in block or "{GUARD}" in block for block in python)  # service
    assert len(marked_blocks("yaml")) == 1


def test_library_example(capsys: pytest.CaptureFixture[str]) -> None:
    (code,) = [block for block in marked_blocks("python") if "Shield.build" in block and "GuardedChain" not in block]
    namespace = run_example(code)
    assert namespace["decision"].blocked is False
    assert (
        capsys.readouterr().out.strip() == namespace["answer"] == "Most acne improves within 6 to 8 weeks of treatment."
    )


def test_langchain_example(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("langchain_core")
    (code,) = [block for block in marked_blocks("python") if "GuardedChain" in block]
    run_example(code)
    assert capsys.readouterr().out.strip() == "Gentle stretching and heat usually help."


def test_guard_only_service_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("fastapi")
    from ragshield.service.app import create_app
    from ragshield.service.server import BackgroundServer
    from ragshield.service.settings import load_serve_config

    monkeypatch.chdir(tmp_path)  # the config's relative runs/ paths land here
    (tmp_path / "runs").mkdir()
    monkeypatch.setenv("RAGSHIELD_KEY", "docs-example-key-0123456789")
    monkeypatch.delenv("POLICY_STORE", raising=False)
    (config_text,) = marked_blocks("yaml")
    (tmp_path / "guard.yaml").write_text(config_text, encoding="utf-8")
    config = load_serve_config(tmp_path / "guard.yaml")
    assert config.guard_only and config.api_keys == {"docs-example-key-0123456789": "my-app"}
    (client_code,) = [block for block in marked_blocks("python") if "{GUARD}" in block]
    with BackgroundServer(create_app(config, warm_up=False)) as server:
        run_example(client_code.replace("http://127.0.0.1:8000", server.url))
    assert capsys.readouterr().out.strip() == ANSWER
    assert (tmp_path / "runs" / "audit.jsonl").read_text(encoding="utf-8").count("\n") == 2
