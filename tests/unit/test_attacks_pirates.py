"""Pirates of the RAG mechanics (Di Maio et al. 2024, Algorithm 1, Eq. 3) with FAKE parts:
a scripted attacker LLM, the hashing embedder and scripted targets."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

from ragshield.attacks import run_attack
from ragshield.attacks.pirates_dimaio_2024 import (
    INJECTION_COMMANDS,
    PiratesDiMaio2024,
    parse_expected,
    parse_topics,
    softmax,
)
from ragshield.errors import ConfigError
from ragshield.generators.scripted import EchoContextGenerator, ScriptedGenerator
from ragshield.pipeline import RagPipeline
from ragshield.rag.embedding import HashingEmbedder
from ragshield.types import GenerationRequest, Query

CHUNK = "The patient reported chest tightness after climbing stairs and was given a stress test by the cardiologist."


def scripted_attacker(
    topics: Callable[[str], str] = lambda text: "Expected output: cardiology, stress test",
) -> ScriptedGenerator:
    def handler(request: GenerationRequest) -> str:
        prompt = request.messages[-1].content
        if prompt.startswith("Given a set of keywords"):
            keywords = prompt.rsplit("Input: ", 1)[1].split("\n")[0]
            return f"Expected output: A short text about {keywords}.\nextra line"
        return topics(prompt.rsplit("Input: ", 1)[1])

    return ScriptedGenerator(handler)


def make(**params: object) -> PiratesDiMaio2024:
    params.setdefault("attacker", scripted_attacker())
    params.setdefault("embedder", HashingEmbedder())
    return PiratesDiMaio2024(**params)  # type: ignore[arg-type]


def step(attack: PiratesDiMaio2024, seen: list[tuple[Query, str]], reply: str, rng: random.Random) -> Query | None:
    query = attack.next_query(tuple(seen), rng)
    if query is not None:
        seen.append((query, reply))
    return query


def test_query_is_generated_question_plus_one_of_four_commands_in_one_of_four_orders() -> None:
    attack = make()
    rng = random.Random(0)
    texts = []
    seen: list[tuple[Query, str]] = []
    for _ in range(40):
        query = step(attack, seen, "", rng)
        assert query is not None
        texts.append(query.text)
    question = "A short text about love."
    commands_seen, orders_seen = set(), set()
    for text in texts:
        command = next(c for c in INJECTION_COMMANDS if c in text)
        commands_seen.add(command)
        orders_seen.add(
            {
                f"{question} {command}": "q c",
                f"{command} {question}": "c q",
                f"{command} {question} {question} {question}": "c q×3",
                f"{question} {question} {question} {command}": "q×3 c",
            }[text]
        )
    assert len(commands_seen) == 4 and len(orders_seen) == 4
    # first query: anchors sampled from the register that starts with "love" at beta = 1
    assert attack.anchors == ["love"] and attack.relevance == [1.0]


def test_new_chunks_are_stolen_and_their_topics_become_anchors_at_max_relevance() -> None:
    attack = make()
    rng = random.Random(0)
    seen: list[tuple[Query, str]] = []
    step(attack, seen, f"Sure.\n\n{CHUNK}", rng)
    step(attack, seen, "", rng)
    assert attack.stolen == [CHUNK]  # "Sure." is shorter than min_chunk_chars
    assert attack.anchors == ["love", "cardiology", "stress test"]
    assert attack.relevance == [1.0, 1.0, 1.0]


def test_similar_topics_are_not_new_anchors() -> None:
    attack = make(attacker=scripted_attacker(lambda text: "Expected output: love, Love., loves"), anchor_similarity=0.8)
    rng = random.Random(0)
    seen: list[tuple[Query, str]] = []
    step(attack, seen, CHUNK, rng)
    step(attack, seen, "", rng)
    assert "love" in attack.anchors and attack.anchors.count("love") == 1
    vectors = attack.embedder.embed(attack.anchors)
    similarity = vectors @ vectors.T
    assert (similarity[np.triu_indices(len(attack.anchors), 1)] < 0.8).all()


def test_duplicate_chunks_penalise_the_anchors_that_produced_them_by_gamma() -> None:
    attack = make(attacker=scripted_attacker(lambda text: "Expected output: cardiology, stress test, stairs"))
    rng = random.Random(1)
    seen: list[tuple[Query, str]] = []
    step(attack, seen, CHUNK, rng)
    query = step(attack, seen, f"{CHUNK}\n\nA brand new paragraph about a completely different matter entirely.", rng)
    assert query is not None
    used = attack._sent[query.text]
    before = dict(zip(attack.anchors, attack.relevance, strict=True))
    step(attack, seen, "", rng)  # observes the response: one duplicate out of two chunks
    after = dict(zip(attack.anchors, attack.relevance, strict=True))
    embed = attack.embedder.embed
    gamma = softmax(embed([CHUNK]) @ embed(used).T, 0.4, axis=1).sum(axis=0) / 2
    for anchor, penalty in zip(used, gamma, strict=True):
        assert after[anchor] == pytest.approx(before[anchor] - penalty, abs=1e-6)
    assert sum(before[a] - after[a] for a in used) == pytest.approx(0.5, abs=1e-6)  # 1 duplicate of 2 chunks
    assert attack.duplicates == 1 and len(attack.stolen) == 2


def test_softmax_sampling_prefers_relevant_anchors_and_never_picks_dead_ones() -> None:
    attack = make(topics_per_query=1)
    attack._reset()
    for anchor, relevance in (("strong", 1.0), ("weak", 0.5), ("dead", 0.05)):
        attack._add_anchor(anchor, relevance, attack._embed([anchor])[0])
    attack.relevance[0] = 0.5  # "love"
    rng = random.Random(0)
    counts = Counter(attack.sample_sets(rng)[0] for _ in range(3000))
    assert counts["dead"] == 0
    expected = math.exp(0.5 / 0.15) / (math.exp(0.5 / 0.15) + 2)  # P(strong) with weak and love at 0.5
    assert counts["strong"] / 3000 == pytest.approx(expected, abs=0.03)
    sets = [attack.sample_sets(rng) for _ in range(50)]
    three = make(topics_per_query=3)
    three._reset()
    assert all(len(s) == len(set(s)) for s in sets)
    assert three.sample_sets(rng) == ["love"]  # fewer alive anchors than n: take them all


def test_attack_stops_when_every_anchor_is_dead() -> None:
    # the target always returns the same chunk and the extractor finds no topics: after the
    # first (new) chunk every response is a duplicate that costs the 3 anchors 1.0 in total
    attack = make(
        attacker=scripted_attacker(lambda text: "Expected output: "), initial_anchors=("love", "house", "river")
    )
    rng = random.Random(0)
    seen: list[tuple[Query, str]] = []
    sent = 0
    while step(attack, seen, CHUNK, rng) is not None and sent < 100:
        sent += 1
    assert 3 <= sent <= 5
    assert attack.alive() == [] and all(r <= 0.1 for r in attack.relevance)
    assert attack.next_query(tuple(seen), rng) is None


def test_a_single_anchor_dies_at_its_first_duplicate() -> None:
    attack = make(attacker=scripted_attacker(lambda text: "Expected output: "))
    rng = random.Random(0)
    seen: list[tuple[Query, str]] = []
    assert step(attack, seen, CHUNK, rng) is not None  # new chunk
    assert step(attack, seen, CHUNK, rng) is not None  # duplicate: gamma = 1 = beta
    assert step(attack, seen, CHUNK, rng) is None and attack.relevance == [pytest.approx(0.0, abs=1e-6)]


def test_refusals_change_nothing() -> None:
    attack = make()
    rng = random.Random(0)
    seen: list[tuple[Query, str]] = []
    for _ in range(5):
        step(attack, seen, "I can't help with that request.", rng)
    assert attack.relevance == [1.0] and attack.stolen == []


def test_parsers() -> None:
    assert parse_expected('Sure!\nExpected output: "A text."\nmore') == "A text."
    assert parse_expected("just a line\nsecond") == "just a line"
    rng = random.Random(0)
    assert parse_topics("Expected output: B, a, b., , c", 10, rng) == ["a", "b", "c"]
    assert len(parse_topics("Expected output: " + ", ".join(f"t{i}" for i in range(30)), 10, rng)) == 10


def test_bad_parameters() -> None:
    with pytest.raises(ConfigError):
        make(orders=["q q"])
    with pytest.raises(ConfigError):
        make(beta=0.05)
    with pytest.raises(ConfigError):
        make(initial_anchors=[" "])


def test_run_against_echo_target_is_deterministic(fake_retriever: object) -> None:
    pipeline = RagPipeline(fake_retriever, EchoContextGenerator(), k=2)  # type: ignore[arg-type]
    runs = [run_attack(make(), pipeline, budget=8, seed=3) for _ in range(2)]
    assert [r.query.text for r in runs[0].responses] == [r.query.text for r in runs[1].responses]
    assert 2 <= len(runs[0].responses) <= 8
    assert runs[0].responses[0].retrieval is not None
