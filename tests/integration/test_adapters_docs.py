"""The copy-paste examples of docs/adapters.md run as written (real MiniLM, real SmolLM2, real
LangChain / LlamaIndex stores), and end where the page says they do. The examples construct the
bundled models; the test hands them the session's already loaded instances of the same models."""

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


@pytest.fixture
def loaded_models(monkeypatch: pytest.MonkeyPatch, minilm: Any, smollm: Any) -> None:
    monkeypatch.setattr("ragshield.rag.embedding.SentenceTransformerEmbedder", lambda *_, **__: minilm)
    monkeypatch.setattr("ragshield.generators.llama_cpp.LlamaCppGenerator", lambda *_, **__: smollm)


def _run(name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"docs_example_{name.replace('-', '_')}"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community's sunset notice
        exec(compile(_examples()[name], f"{PAGE}:{name}", "exec"), namespace)
    return namespace


def test_the_page_names_its_examples() -> None:
    assert set(_examples()) == {"adapters-langchain", "adapters-langchain-faiss", "adapters-llamaindex"}


@pytest.mark.usefixtures("loaded_models")
def test_langchain_example() -> None:
    pytest.importorskip("langchain_core")
    done = _run("adapters-langchain")
    assert isinstance(done["answer"], str) and isinstance(done["async_answer"], str)
    assert done["refused"] is True


@pytest.mark.usefixtures("loaded_models")
def test_langchain_faiss_example() -> None:
    pytest.importorskip("langchain_community")
    similarities = _run("adapters-langchain-faiss")["similarities"]
    assert len(similarities) == 2 and all(-1.0 <= s <= 1.0 for s in similarities)
    assert similarities == sorted(similarities, reverse=True)


@pytest.mark.usefixtures("loaded_models")
def test_llama_index_example() -> None:
    pytest.importorskip("llama_index.core")
    done = _run("adapters-llamaindex")
    assert done["status"]["blocked"] is False and isinstance(done["answer"], str)
    assert done["streamed_status"]["blocked"] in {True, False}  # settled once the stream was read
    assert done["refused"] is True
