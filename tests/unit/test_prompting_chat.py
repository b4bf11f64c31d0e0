"""The user-facing answer settings: chat layout with stop sequences, repetition penalty, and the
wiring of both into every generator backend. FAKE parts only (scripted generator, a fake llama.cpp
object, the hashing retriever); what a real model says is never asserted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragshield.config import USER_REPEAT_PENALTY, SystemConfig, cli_system_config
from ragshield.errors import ConfigError
from ragshield.evaluation.config import load_eval_config
from ragshield.generators.llama_cpp import LlamaCppGenerator
from ragshield.generators.openai_compat import OpenAICompatibleGenerator
from ragshield.generators.scripted import EchoContextGenerator, ScriptedGenerator
from ragshield.generators.transformers_gen import TransformersGenerator, cut_at_stop
from ragshield.pipeline import RagPipeline
from ragshield.rag.prompting import CHAT_STOP, PromptBuilder
from ragshield.system import build_system
from ragshield.types import ChatMessage, GenerationRequest

REPO = Path(__file__).resolve().parents[2]

# -- layouts and stops -----------------------------------------------------------------------


def test_chat_requests_carry_the_stop_sequences_and_tgtb_requests_none(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["ok"])
    RagPipeline(fake_retriever, generator, prompt_builder=PromptBuilder(layout="chat")).answer("q")
    RagPipeline(fake_retriever, generator, prompt_builder=PromptBuilder(layout="tgtb")).answer("q")
    chat, tgtb = generator.requests
    assert chat.prompt is None and chat.stop == CHAT_STOP
    assert {"<|im_end|>", "<|im_start|>", "\nQuestion:", "\nUser:"} <= set(chat.stop)
    assert tgtb.prompt is not None and tgtb.stop == ()  # the paper's layout runs as the paper ran it


def test_chat_system_prompt_asks_for_a_brief_answer_from_the_context(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["ok"])
    RagPipeline(fake_retriever, generator, prompt_builder=PromptBuilder(layout="chat")).answer("my question")
    system, user = generator.requests[0].messages
    assert system.role == "system" and "context" in system.content.lower()
    assert "brief" in system.content.lower() and "do not copy" in system.content.lower()
    assert user.content.startswith("Context:\n") and user.content.endswith("\n\nQuestion: my question")


def test_explicit_stops_replace_the_layouts_own(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["ok"])
    for stop in (("\nEND",), ()):
        RagPipeline(fake_retriever, generator, prompt_builder=PromptBuilder(layout="chat", stop=stop)).answer("q")
    assert [request.stop for request in generator.requests] == [("\nEND",), ()]


@pytest.mark.parametrize("stop", [("",), ("ok", "")])
def test_empty_stop_sequence_is_a_config_error(stop: tuple[str, ...]) -> None:
    with pytest.raises(ConfigError, match="stop sequences"):
        PromptBuilder(layout="chat", stop=stop)


def test_echo_worst_case_still_finds_the_chat_context(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    pipeline = RagPipeline(fake_retriever, EchoContextGenerator(), prompt_builder=PromptBuilder(layout="chat"))
    response = pipeline.answer("q")
    assert response.retrieval is not None
    assert response.retrieval.hits[0].chunk.text[:80] in response.text and "Question:" not in response.text


# -- defaults of the user-facing commands ----------------------------------------------------


def test_system_config_defaults_are_the_user_facing_settings(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    config = SystemConfig(index="unused", defenses=[])  # no defense: the fake retriever has no index folder
    assert config.prompt_layout == "chat"
    assert config.generator == {"name": "llama-cpp", "repeat_penalty": USER_REPEAT_PENALTY}
    assert USER_REPEAT_PENALTY > 1.0
    generator = ScriptedGenerator(["ok"])
    build_system(config, retriever=fake_retriever, generator=generator).answer("q")
    assert generator.requests[0].prompt is None and generator.requests[0].stop == CHAT_STOP


def test_ask_uses_the_chat_layout_and_the_penalty_by_default(monkeypatch, fake_retriever, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import ragshield.commands.core as core
    from ragshield.cli import app

    seen: list[SystemConfig] = []
    generator = ScriptedGenerator(["an answer"])

    def fake_build(config: SystemConfig) -> RagPipeline:
        seen.append(config)
        return build_system(config, retriever=fake_retriever, generator=generator)

    monkeypatch.setattr(core, "build_system", fake_build)
    ask = ["ask", "--index", str(tmp_path), "--defense", "none", "--json"]
    result = CliRunner().invoke(app, [*ask, "what helps a rash?"])
    assert result.exit_code == 0, result.output
    assert seen[0].prompt_layout == "chat"
    assert seen[0].generator == {"name": "llama-cpp", "repeat_penalty": USER_REPEAT_PENALTY}
    assert generator.requests[0].stop == CHAT_STOP
    result = CliRunner().invoke(app, [*ask, "--layout", "tgtb", "--repeat-penalty", "1.0", "q"])
    assert result.exit_code == 0, result.output
    assert seen[1].prompt_layout == "tgtb" and seen[1].generator == {"name": "llama-cpp"}


def test_fake_generators_get_no_penalty_parameter() -> None:
    config = cli_system_config(
        index="x", defense="none", generator="scripted", k=3, layout="chat", max_tokens=8, repeat_penalty=1.2
    )
    assert config.generator == {"name": "scripted"}
    # the one-shot attack / scan commands keep their defaults (no penalty unless asked)
    plain = cli_system_config(index="x", defense="none", generator="llama-cpp", k=3, layout="tgtb", max_tokens=8)
    assert plain.generator == {"name": "llama-cpp"}


def test_paper_replication_configs_keep_tgtb_without_penalty() -> None:
    for name in ("healthcaremagic", "enron", "demo"):
        config = load_eval_config(REPO / "configs" / f"{name}.yaml")
        cell = config.system_config("none")
        assert cell.prompt_layout == "tgtb", name
        assert "repeat_penalty" not in cell.generator, name


# -- backends --------------------------------------------------------------------------------


class FakeLlama:
    """FAKE llama_cpp.Llama: records the keyword arguments of every call, streams 'hi'."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        return list(range(len(data.split())))

    def reset(self) -> None:
        self.calls.append(("reset", {}))

    def create_chat_completion(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        self.calls.append(("chat", kwargs))
        yield {"choices": [{"delta": {"content": "hi"}, "finish_reason": "stop"}]}

    def create_completion(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        self.calls.append(("completion", kwargs))
        yield {"choices": [{"text": "hi", "finish_reason": "stop"}]}


@pytest.mark.parametrize(("penalty", "layout"), [(1.15, "chat"), (1.0, "tgtb")])
def test_llama_cpp_sends_penalty_and_stops(fake_retriever, penalty: float, layout: str) -> None:  # type: ignore[no-untyped-def]
    generator = LlamaCppGenerator(repeat_penalty=penalty)
    generator._llama = FakeLlama()
    RagPipeline(fake_retriever, generator, prompt_builder=PromptBuilder(layout=layout)).answer("q")
    (reset, _), (kind, kwargs) = generator._llama.calls
    assert reset == "reset"  # the prompt cache is dropped first, so the same prompt gets the same answer
    assert kind == ("chat" if layout == "chat" else "completion")
    assert kwargs["repeat_penalty"] == penalty
    assert kwargs["stop"] == (list(CHAT_STOP) if layout == "chat" else None)


def test_a_penalty_is_part_of_the_default_name_so_caches_keep_settings_apart() -> None:
    assert LlamaCppGenerator().name == "smollm2-135m-instruct"
    assert LlamaCppGenerator(repeat_penalty=1.15).name != LlamaCppGenerator().name
    assert LlamaCppGenerator(repeat_penalty=1.15, name="mine").name == "mine"
    assert OpenAICompatibleGenerator(repeat_penalty=1.2).name != OpenAICompatibleGenerator().name


@pytest.mark.parametrize(
    "make", [LlamaCppGenerator, OpenAICompatibleGenerator, lambda **kw: TransformersGenerator("m", **kw)]
)
@pytest.mark.parametrize("penalty", [0.0, -1.0])
def test_non_positive_penalty_is_a_config_error(make, penalty: float) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="repeat_penalty"):
        make(repeat_penalty=penalty)


def test_openai_compatible_maps_the_penalty_to_frequency_penalty() -> None:
    request = GenerationRequest(messages=(ChatMessage("user", "q"),), stop=CHAT_STOP)
    payload = OpenAICompatibleGenerator(repeat_penalty=1.15)._payload(request, True)
    assert payload["frequency_penalty"] == pytest.approx(0.15)
    assert payload["stop"] == list(CHAT_STOP[:4])  # the OpenAI API takes at most 4
    assert "frequency_penalty" not in OpenAICompatibleGenerator()._payload(request, True)
    assert OpenAICompatibleGenerator(max_stop=None)._payload(request, True)["stop"] == list(CHAT_STOP)
    assert OpenAICompatibleGenerator(repeat_penalty=9.0)._payload(request, True)["frequency_penalty"] == 2.0


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        (["Take rest.", "\nQues", "tion: more"], "Take rest."),  # a stop split across deltas
        (["Take", " rest.\nQ", "uite so."], "Take rest.\nQuite so."),  # a prefix that is no stop
        (["<|im_end|>after"], ""),  # a stop at the very start
        (["no stop here"], "no stop here"),
        (["ends with a prefix \nUs"], "ends with a prefix \nUs"),  # held back, released at the end
    ],
)
def test_cut_at_stop(deltas: list[str], expected: str) -> None:
    assert "".join(cut_at_stop(iter(deltas), CHAT_STOP)) == expected


def test_cut_at_stop_stops_reading_at_the_stop() -> None:
    read: list[str] = []

    def deltas() -> Iterator[str]:
        for piece in ("a", "\nUser:", "never"):
            read.append(piece)
            yield piece

    assert "".join(cut_at_stop(deltas(), CHAT_STOP)) == "a"
    assert read == ["a", "\nUser:"]


def test_serve_config_defaults_are_the_user_facing_settings(tmp_path: Path) -> None:
    from ragshield.evaluation.demo import demo_config
    from ragshield.service.settings import ServeConfig

    served = ServeConfig()
    assert served.prompt_layout == "chat" and served.generator["repeat_penalty"] == USER_REPEAT_PENALTY
    assert demo_config(tmp_path).prompt_layout == "tgtb"  # the demo's grid replicates the papers
