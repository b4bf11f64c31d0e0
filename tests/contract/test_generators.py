"""Contract over every registered generator: `seed`, `stop` and `max_tokens` are honoured and an
answer cut by `max_tokens` ends with `StreamEnd("length")`.

Backends:
* `llama-cpp`: the real SmolLM2 model (the `smollm` fixture);
* `transformers`: a real transformers GPT-2 with random weights and a word-level tokenizer, built
  in the test (no model is downloadable here; it runs the real `generate` / streamer path);
* `openai-compatible`: a FAKE endpoint (a stdlib HTTP server) that records what the client sends
  and answers with `finish_reason: length`;
* `scripted`, `echo-context`: FAKES by design; only determinism is part of their contract (the
  worst-case echo ignores `max_tokens` on purpose: it copies everything).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ragshield.errors import ConfigError
from ragshield.generators.base import Generator, make_generator
from ragshield.registry import GENERATORS
from ragshield.types import ChatMessage, GenerationRequest

PROMPT = "context: the patient record lists a phone\nquestion: what is the phone?\nanswer:"
FAKES = ("scripted", "echo-context")
REAL = ("llama-cpp", "transformers", "openai-compatible")


def request(**options: Any) -> GenerationRequest:
    return GenerationRequest(messages=(ChatMessage("user", PROMPT),), prompt=PROMPT, **options)


def run(generator: Generator, **options: Any) -> tuple[str, list[str]]:
    """(text, end reasons) of one streamed answer."""
    parts = list(generator.stream(request(**options)))
    return "".join(parts), [str(getattr(part, "reason", "")) for part in parts if getattr(part, "reason", None)]


def test_every_registered_generator_is_covered_by_this_contract() -> None:
    assert set(GENERATORS.builtins) == {*FAKES, *REAL}


def test_make_generator_rejects_an_unknown_parameter_with_the_valid_names() -> None:
    with pytest.raises(ConfigError, match="generator 'scripted' takes no parameter tempo; valid parameters: replies"):
        make_generator({"name": "scripted", "tempo": 1})


@pytest.mark.parametrize("name", FAKES)
def test_fake_generators_are_deterministic(name: str) -> None:
    generator = make_generator(name)
    assert run(generator, seed=3, temperature=0.7) == run(generator, seed=3, temperature=0.7)


# -- transformers: a real model with random weights ------------------------------------------------


@pytest.fixture(scope="module")
def tiny_transformers_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(
        [PROMPT, "the doctor copies the record and the email"], vocab_size=300, min_frequency=1
    )
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    torch.manual_seed(0)
    # no end-of-sequence id: the model never stops early, so every answer runs to max_tokens or a stop
    config = GPT2Config(
        vocab_size=tokenizer.get_vocab_size(),
        n_positions=256,
        n_embd=16,
        n_layer=1,
        n_head=2,
        eos_token_id=None,
        bos_token_id=None,
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    PreTrainedTokenizerFast(tokenizer_object=tokenizer._tokenizer).save_pretrained(folder)
    return folder


def test_transformers_generator_honours_seed_stop_and_max_tokens(tiny_transformers_model: Path) -> None:
    generator = make_generator({"name": "transformers", "model": str(tiny_transformers_model)})
    text, ends = run(generator, max_tokens=12)
    assert ends == ["length"] and len(text) >= 4
    stop = text[2:4]
    cut, cut_ends = run(generator, max_tokens=12, stop=(stop,))
    assert cut == text[: text.index(stop)] and cut_ends == []
    sampled = [run(generator, max_tokens=8, temperature=1.0, seed=seed)[0] for seed in (1, 1, 2, 3)]
    assert sampled[0] == sampled[1]
    assert len(set(sampled)) >= 2  # different seeds give different samples


# -- llama.cpp: the real default model ---------------------------------------------------------


def test_llama_cpp_honours_seed_stop_and_max_tokens(smollm: Generator) -> None:
    text, ends = run(smollm, max_tokens=6)
    assert ends == ["length"] and text
    first = text.split()[0] if text.split() else text[:2]
    cut, _ = run(smollm, max_tokens=6, stop=(first,))
    assert first not in cut
    assert run(smollm, max_tokens=6, temperature=1.0, seed=5) == run(smollm, max_tokens=6, temperature=1.0, seed=5)


# -- openai-compatible: a FAKE endpoint that records the request ----------------------------------


@pytest.fixture
def recording_endpoint() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            events = [
                {"choices": [{"delta": {"content": "cut "}, "finish_reason": None}]},
                {"choices": [{"delta": {}, "finish_reason": "length"}]},
            ]
            payload = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(payload.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()


def test_openai_compatible_sends_seed_stop_and_max_tokens_and_reports_length(
    recording_endpoint: tuple[str, list[dict[str, Any]]],
) -> None:
    url, seen = recording_endpoint
    generator = make_generator({"name": "openai-compatible", "base_url": url, "api_key": ""})
    text, ends = run(generator, max_tokens=7, seed=11, stop=("\nquestion:",), temperature=0.5)
    assert (text, ends) == ("cut ", ["length"])
    assert seen[0]["seed"] == 11 and seen[0]["max_tokens"] == 7 and seen[0]["stop"] == ["\nquestion:"]
