"""The real RAG system: MiniLM embeddings, a FAISS index on disk, SmolLM2 through llama.cpp,
the CLI end to end, and the OpenAI-compatible generator against a real llama.cpp server."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest

from ragshield.cli import main
from ragshield.generators.llama_cpp import LlamaCppGenerator, default_gguf_path
from ragshield.generators.openai_compat import OpenAICompatibleGenerator
from ragshield.pipeline import RagPipeline
from ragshield.rag.prompting import PromptBuilder
from ragshield.types import ChatMessage, GenerationRequest, Query

pytestmark = pytest.mark.integration


def test_real_retrieval_finds_the_matching_record(synthetic_retriever) -> None:  # type: ignore[no-untyped-def]
    corpus_chunk = synthetic_retriever.index.chunks[10]
    result = synthetic_retriever.retrieve(Query(corpus_chunk.text[:300]), 3)
    assert result.hits[0].chunk.id == corpus_chunk.id
    assert 0.5 < result.hits[0].similarity <= 1.0001
    assert result.hits[0].similarity >= result.hits[1].similarity >= result.hits[2].similarity


def test_real_pipeline_streams_an_answer(synthetic_retriever, smollm) -> None:  # type: ignore[no-untyped-def]
    pipeline = RagPipeline(synthetic_retriever, smollm, prompt_builder=PromptBuilder(max_tokens=24))
    items = list(pipeline.stream(Query("What should I do about persistent headaches?")))
    deltas = [item for item in items if isinstance(item, str)]
    response = items[-1]
    assert len(deltas) > 1 and "".join(deltas) == response.text  # type: ignore[union-attr]
    assert response.text.strip()  # type: ignore[union-attr]


def test_an_answer_cut_by_max_tokens_finishes_with_length(synthetic_retriever, smollm) -> None:  # type: ignore[no-untyped-def]
    """OpenAI clients read `length` as "truncated": the real model's cut must say so."""
    pipeline = RagPipeline(synthetic_retriever, smollm, prompt_builder=PromptBuilder(max_tokens=3))
    response = pipeline.answer(Query("Describe in detail how to treat persistent headaches."))
    assert response.text.strip() and response.finish_reason == "length"


def test_llama_cpp_is_deterministic_for_a_seed_and_handles_overflow(smollm) -> None:  # type: ignore[no-untyped-def]
    request = GenerationRequest(
        messages=(), prompt="context: The sky is blue.\nquestion: What colour is the sky?\nanswer:", max_tokens=12
    )
    assert "".join(smollm.stream(request)) == "".join(smollm.stream(request))
    small = LlamaCppGenerator(n_ctx=256)
    long_prompt = "context: " + "filler words here. " * 400 + "\nquestion: say hi\nanswer:"
    text = "".join(small.stream(GenerationRequest(messages=(), prompt=long_prompt, max_tokens=16)))
    assert isinstance(text, str)  # an overflowing prompt is cut, not an error
    chat = GenerationRequest(messages=(ChatMessage("user", "Say hello. " * 300),), max_tokens=8)
    assert isinstance("".join(small.stream(chat)), str)


def test_chat_messages_are_fitted_in_tokens_with_room_for_the_template_and_the_answer() -> None:
    """Messages cut by a character count could still overflow n_ctx once re-tokenised and wrapped
    in the chat template, and llama.cpp then refused the prompt ("Requested tokens (2065) exceed
    context window"): Enron contexts in the chat layout hit this on 2 of 24 questions. Whatever
    the text, the fitted messages, the template's reserve and the answer's budget fit the window."""
    from ragshield.generators.llama_cpp import CHAT_TEMPLATE_TOKENS, CHAT_TOKENS_PER_MESSAGE, MIN_NEW_TOKENS

    small = LlamaCppGenerator(n_ctx=256)
    llama = small._load()
    dense = "=20=09\u00e9\u00df 0x7f3a9c " * 60  # quoted-printable, accents, hex: many tokens per character
    sparse = "Forwarded by Jeff Skilling on 05/12/2001 regarding the gas transportation contract. " * 30
    for context in (dense + sparse, sparse + dense, dense, sparse, "Say hello. " * 300):
        messages = [{"role": "system", "content": "Answer from the context."}, {"role": "user", "content": context}]
        budget = small._fit_messages(messages, 64)
        used = sum(len(llama.tokenize(m["content"].encode(), add_bos=False, special=True)) for m in messages)
        reserve = CHAT_TOKENS_PER_MESSAGE * len(messages) + CHAT_TEMPLATE_TOKENS
        assert MIN_NEW_TOKENS <= budget <= 64 and used + reserve + budget <= small.n_ctx
    request = GenerationRequest(
        messages=(ChatMessage("system", "Answer from the context."), ChatMessage("user", dense + sparse)), max_tokens=64
    )
    assert isinstance("".join(p for p in small.stream(request) if isinstance(p, str)), str)


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def _run(args: list[str]) -> CliResult:
    """Run the real `ragshield` entry point in-process (models stay loaded between calls)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with mock.patch.object(sys, "argv", ["ragshield", *args]), redirect_stdout(out), redirect_stderr(err):
        try:
            main()
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    return CliResult(code, out.getvalue(), err.getvalue())


def test_cli_index_then_ask_json(tmp_path: Path) -> None:
    index = tmp_path / "idx"
    built = _run(["index", "--corpus", "synthetic:60", "--out", str(index)])
    assert built.returncode == 0, built.stderr
    assert "index built: 60 chunks" in built.stderr
    again = _run(["index", "--corpus", "synthetic:60", "--out", str(index)])
    assert "reused" in again.stderr
    asked = _run(["ask", "--index", str(index), "--json", "--max-tokens", "16", "Who has a rash on the forearm?"])
    assert asked.returncode == 0, asked.stderr
    payload = json.loads(asked.stdout)
    assert len(payload["chunks"]) == 3 and payload["chunks"][0]["id"].startswith("syn-")
    assert payload["chunks"][0]["similarity"] >= payload["chunks"][1]["similarity"]
    assert isinstance(payload["answer"], str)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "--index", "/nonexistent/idx", "hello"], "ragshield index"),
        (["index", "--corpus", "mystery:x", "--out", "/tmp/never"], "valid names"),
        (["ask", "--index", "/nonexistent/idx", "--defense", "nope", "hi"], "ragshield index"),
    ],
)
def test_cli_errors_are_one_clear_line_and_nonzero(args: list[str], message: str) -> None:
    result = _run(args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_cli_rejects_empty_query(synthetic_index: Path) -> None:
    result = _run(["ask", "--index", str(synthetic_index), "   "])
    assert result.returncode == 2 and "empty" in result.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """A real OpenAI-compatible server (llama_cpp.server) on loopback, serving the same GGUF."""
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(default_gguf_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--model_alias",
            "smollm2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 90
    import httpx

    while time.time() < deadline:
        try:
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("llama_cpp.server did not start within 90 s")
    yield base
    process.terminate()
    process.wait(timeout=20)


@pytest.mark.parametrize("stream", [True, False])
def test_openai_compatible_generator_against_real_server(llama_server: str, stream: bool) -> None:
    generator = OpenAICompatibleGenerator(llama_server, "smollm2", stream=stream)
    request = GenerationRequest(
        messages=(ChatMessage("user", "Count from 1 to 20, separated by commas."),), max_tokens=12
    )
    deltas = list(generator.stream(request))
    assert "".join(deltas).strip()
    if stream:
        assert len(deltas) > 1


def test_openai_compatible_generator_unreachable_endpoint_is_a_clear_error() -> None:
    from ragshield.errors import GenerationError

    generator = OpenAICompatibleGenerator(f"http://127.0.0.1:{_free_port()}/v1", "m", timeout=2)
    with pytest.raises(GenerationError, match="failed"):
        list(generator.stream(GenerationRequest(messages=(ChatMessage("user", "hi"),))))
