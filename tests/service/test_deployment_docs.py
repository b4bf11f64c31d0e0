"""The examples in docs/deployment.md marked `tested` run as written, in an install with only the
`guard` extra and LangChain (the `guard_install_run` fixture): the library example, the LangChain one with
LangChain's own stand-ins, and the guard-only service's config and client against a real server
on loopback started from that config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from docs_examples_child import marked_blocks

pytestmark = pytest.mark.service
DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
ANSWER = "Most acne improves within 6 to 8 weeks of treatment."  # what the examples' stand-in model says


def test_the_document_marks_an_example_for_each_way_in() -> None:
    python = marked_blocks(DOC, "python")
    assert any("Shield.build" in block and "check_output" in block for block in python)  # library
    assert any("GuardedChain" in block for block in python)  # adapters
    assert any("{GUARD}" in block for block in python)  # service
    assert len(marked_blocks(DOC, "yaml")) == 1


def test_the_examples_run_as_written(guard_install_run: dict[str, Any]) -> None:
    result = guard_install_run["docs"]
    assert result["library"] == ANSWER
    assert result["langchain"] == "Gentle stretching and heat usually help."
    assert result["config"] == {"guard_only": True, "api_keys": {"docs-example-key-0123456789": "my-app"}}
    assert result["service"] == ANSWER
    assert result["audit_lines"] == 2  # one per guard call
    assert result["heavy"] == []
