"""ROUGE-L and LCS primitives: exact agreement with rouge-score, window matching."""

from __future__ import annotations

import random

import pytest
from rouge_score import rouge_scorer

from ragshield.metrics.text import LcsReference, best_window, lcs_length, rouge_l, rouge_tokens, word_tokens

WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "mat",
    "running",
    "runs",
    "ran",
    "dog",
    "doctor",
    "patients",
    "headache",
    "123",
    "4567",
    "Ünïcode",
]


@pytest.mark.parametrize("use_stemmer", [True, False])
def test_rouge_l_equals_rouge_score(use_stemmer: bool) -> None:
    # stemmed for the leakage metrics, unstemmed for the attacks' deduplication (as the papers' code)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)
    rng = random.Random(7)
    for _ in range(200):
        reference = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 40)))
        prediction = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 40)))
        expected = scorer.score(reference, prediction)["rougeL"]
        got = rouge_l(reference, prediction, use_stemmer=use_stemmer)
        assert got.precision == pytest.approx(expected.precision, abs=1e-12)
        assert got.recall == pytest.approx(expected.recall, abs=1e-12)
        assert got.f1 == pytest.approx(expected.fmeasure, abs=1e-12)


def test_lcs_hand_cases() -> None:
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4
    assert lcs_length([], ["a"]) == 0
    assert LcsReference(["a", "b", "c"]).lcs(["x", "a", "y", "c"]) == 2


def test_tokenisers() -> None:
    assert rouge_tokens("Running, RUNS!") == ["run", "run"]
    assert rouge_tokens("Running, RUNS!", use_stemmer=False) == ["running", "runs"]
    assert word_tokens("Hi, Bob-2 ok") == ["Hi", "Bob", "2", "ok"]  # TGTB's \w+ keeps case


def test_best_window_finds_a_copied_chunk_inside_a_longer_response() -> None:
    chunk = "patient reports persistent headaches for three weeks and asks about magnesium dosage at night"
    filler = "unrelated words about budgets contracts pipelines and meetings " * 4
    tokens = rouge_tokens(filler + chunk + " " + filler)
    match = best_window(LcsReference(rouge_tokens(chunk)), tokens)
    assert match.f1 > 0.85
    # the same chunk diluted by the rest of the response would not pass 0.5 as a whole
    assert rouge_l(chunk, filler + chunk + " " + filler).f1 < 0.5


def test_best_window_prunes_when_no_window_can_pass() -> None:
    reference = LcsReference(rouge_tokens("alpha beta gamma delta"))
    match = best_window(reference, rouge_tokens("one two three four five six seven eight nine"), min_f1=0.5)
    assert match.f1 == 0.0
