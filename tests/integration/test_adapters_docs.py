"""The copy-paste examples of docs/adapters.md run as written (real MiniLM, real SmolLM2, real
LangChain / LlamaIndex stores), and end where the page says they do."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration
PAGE = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"
EXAMPLE = re.compile(r"<!-- example: (?P<name>[\w-]+) -->\n```python\n(?P<code>.*?)\n```", re.DOTALL)


def _examples() -> dict[str, str]:
    return {match["name"]: match["code"] for match in EXAMPLE.finditer(PAGE.read_text(encoding="utf-8"))}


def _run(name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"docs_example_{name.replace('-', '_')}"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community's sunset notice
        exec(compile(_examples()[name], f"{PAGE}:{name}", "exec"), namespace)
    return namespace


def test_the_page_names_its_examples() -> None:
    assert set(_examples()) == {"adapters-langchain", "adapters-langchain-faiss", "adapters-llamaindex"}


def test_langchain_example() -> None:
    pytest.importorskip("langchain_core")
    done = _run("adapters-langchain")
    assert isinstance(done["answer"], str) and isinstance(done["async_answer"], str)
    assert done["refused"] is True


def test_langchain_faiss_example() -> None:
    pytest.importorskip("langchain_community")
    similarities = _run("adapters-langchain-faiss")["similarities"]
    assert len(similarities) == 2 and all(-1.0 <= s <= 1.0 for s in similarities)
    assert similarities == sorted(similarities, reverse=True)


def test_llama_index_example() -> None:
    pytest.importorskip("llama_index.core")
    done = _run("adapters-llamaindex")
    assert done["status"]["blocked"] is False and isinstance(done["answer"], str)
    assert done["streamed_status"]["blocked"] in {True, False}  # settled once the stream was read
    assert done["refused"] is True
