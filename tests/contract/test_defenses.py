"""Contract over every registered defense, with FAKE parts (hashing-embedder retriever, scripted
model) and the real pipeline: it builds from the registry, rejects an unknown parameter with the
valid names, answers and streams a benign query, and fails closed when any of its parts raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ragshield.errors import ConfigError
from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import Defense
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.pipeline import RagPipeline
from ragshield.registry import DEFENSES
from ragshield.types import Query, Response

BENIGN = [
    f"{what} {topic}?"
    for what in ("what helps with", "how long does", "is it normal to have", "who should I see about", "can I treat")
    for topic in ("a dry cough", "knee pain", "a rash on my arm", "headaches", "back pain", "a sore throat")
]
ANSWER = "Rest, drink water and see a doctor if it lasts."
# speed only: the intent guard's learned model uses MiniLM (the bank method runs on the fake hashing
# embedder); PII scanning at answer time loads presidio and spaCy (their own tests cover them)
PARAMS: dict[str, dict[str, Any]] = {
    "intent": {"method": "bank"},
    "query-shield": {"components": ["rag-ct", "rag-ct-2s"]},
    "canary-rag": {"oracle": "off"},
    "context-echo": {"pii": False},
    "pii-redact": {"ner": False},
    "shield": {"intent": {"method": "bank"}, "context-echo": {"pii": False}},
}
PARTS = ("rewriters", "query_guards", "decorators", "output_guards")
METHODS = {"rewriters": "rewrite", "query_guards": "check", "decorators": "decorate", "output_guards": "open"}


@pytest.fixture(scope="module")
def retriever(shared_fake_retriever: Any) -> Any:
    return shared_fake_retriever


@pytest.fixture(scope="module")
def context(retriever: Any) -> DefenseContext:
    calibration = tuple(retriever.retrieve(Query(text), 3) for text in BENIGN)
    return DefenseContext(
        retriever=retriever,
        embedder=retriever.embedder,
        generator=ScriptedGenerator([ANSWER]),
        calibration=calibration,
        target_fpr=0.05,
    )


@pytest.fixture(scope="module")
def built(context: DefenseContext) -> Iterator[dict[str, Defense]]:
    yield {name: build_defense(name, context, {name: PARAMS.get(name, {})}) for name in DEFENSES}


class Raising:
    """FAKE part whose every call raises (an injected error)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _fail(self, *args: Any) -> Any:
        raise RuntimeError("injected failure")

    rewrite = check = decorate = open = _fail


@pytest.mark.parametrize("name", sorted(DEFENSES))
def test_builds_and_rejects_an_unknown_parameter(name: str, context: DefenseContext) -> None:
    with pytest.raises(ConfigError, match=f"defense '{name}' takes no parameter no_such_option; valid parameters"):
        build_defense(name, context, {name: {**PARAMS.get(name, {}), "no_such_option": 1}})


# pii-redact's answer path loads presidio (about a minute on a loaded 2-core machine); test_pii_redact.py covers it
@pytest.mark.parametrize("name", sorted(set(DEFENSES) - {"pii-redact"}))
def test_answers_and_streams_a_benign_query(name: str, retriever: Any, built: dict[str, Defense]) -> None:
    pipeline = RagPipeline(retriever, ScriptedGenerator([ANSWER]), defense=built[name])
    response = pipeline.answer("what helps with a dry cough?")
    assert isinstance(response, Response) and response.verdicts is not None
    items = list(pipeline.stream("what helps with knee pain?"))
    final = items[-1]
    assert isinstance(final, Response)
    assert "".join(item for item in items[:-1] if isinstance(item, str)) == final.text


@pytest.mark.parametrize("name", sorted(set(DEFENSES) - {"none"}))
def test_fails_closed_when_any_part_raises(name: str, retriever: Any, built: dict[str, Defense]) -> None:
    defense = built[name]
    kinds = [kind for kind in PARTS if getattr(defense, kind)]
    assert kinds, f"defense {name!r} has no parts"
    for kind in kinds:
        for position, part in enumerate(getattr(defense, kind)):
            parts = list(getattr(defense, kind))
            parts[position] = Raising(part.name)
            broken = Defense(**{**{k: getattr(defense, k) for k in PARTS}, kind: tuple(parts)}, name=defense.name)
            response = RagPipeline(retriever, ScriptedGenerator([ANSWER]), defense=broken).answer(
                "what helps with a rash?"
            )
            assert ANSWER not in response.text, f"{name}: a raising {METHODS[kind]} let the answer through"
            assert response.finish_reason in ("blocked", "refused", "error"), (name, kind, response.finish_reason)
