"""RAG-CT: hand-computed scores, ablation modes, edge cases, calibration and persistence."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from ragshield.errors import ConfigError
from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards import RagCT
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.guards.rag_ct import InvalidSimilarityError
from ragshield.metrics.detection import auroc
from ragshield.pipeline import RagPipeline
from ragshield.types import Action, Chunk, Query, RetrievalResult, ScoredChunk

# s = (0.9, 0.5, 0.4), T = 1: p_i = e^{s_i} / Z with Z = e^0.9 + e^0.5 + e^0.4 = 5.600149,
# H = ln Z - sum p_i s_i = 1.722793 - 0.649042 = 1.073751, H^ = H / ln 3 = 0.977370,
# M^ = 0.4, A = 0.5 (1 - 0.977370) + 0.5 * 0.4 = 0.211315
HAND = (0.9, 0.5, 0.4)
HAND_ENTROPY = 0.977370
HAND_SCORE = 0.211315


def retrieval(similarities: list[float], text: str = "q") -> RetrievalResult:
    hits = tuple(
        ScoredChunk(Chunk(f"c{i}", f"d{i}", "chunk text"), s, i)
        for i, s in enumerate(sorted(similarities, reverse=True))
    )
    return RetrievalResult(Query(text), hits)


def test_components_match_hand_computed_values() -> None:
    parts = RagCT().components(list(HAND))
    assert parts["entropy"] == pytest.approx(HAND_ENTROPY, abs=1e-6)
    assert parts["margin"] == pytest.approx(0.4)
    assert parts["raw_margin"] == pytest.approx(0.4)
    assert parts["score"] == pytest.approx(HAND_SCORE, abs=1e-6)
    assert RagCT().score_similarities(list(HAND)) == pytest.approx(HAND_SCORE, abs=1e-6)


def test_temperature_enters_the_softmax() -> None:
    scores = np.array(HAND) / 0.1
    p = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    expected = float(-(p * np.log(p)).sum() / math.log(3))
    assert RagCT(temperature=0.1).components(list(HAND))["entropy"] == pytest.approx(expected, abs=1e-9)
    # a sharper softmax makes the same profile look more concentrated
    assert expected < HAND_ENTROPY


def test_order_does_not_matter_and_only_the_top_k_count() -> None:
    detector = RagCT(k=3)
    shuffled = [0.4, 0.9, 0.5]
    with_tail = [0.1, 0.9, 0.05, 0.5, 0.4, 0.2]
    assert detector.score_similarities(shuffled) == pytest.approx(HAND_SCORE, abs=1e-6)
    assert detector.score_similarities(with_tail) == pytest.approx(HAND_SCORE, abs=1e-6)


def test_ablation_modes_use_one_component_each() -> None:
    assert RagCT(mode="entropy").score_similarities(list(HAND)) == pytest.approx(1 - HAND_ENTROPY, abs=1e-6)
    assert RagCT(mode="margin").score_similarities(list(HAND)) == pytest.approx(0.4)
    weighted = RagCT(alpha=1.0, beta=0.0).score_similarities(list(HAND))
    assert weighted == pytest.approx(1 - HAND_ENTROPY, abs=1e-6)


def test_margin_is_min_max_normalised_and_clipped() -> None:
    detector = RagCT(margin_range=(0.1, 0.3), mode="margin")
    assert detector.score_similarities([0.5, 0.3, 0.2]) == pytest.approx(0.5)  # (0.2 - 0.1) / 0.2
    assert detector.score_similarities([0.9, 0.3, 0.2]) == 1.0  # above the range
    assert detector.score_similarities([0.31, 0.3, 0.2]) == 0.0  # below the range


def test_k_larger_than_the_hits_uses_the_hits_there_are() -> None:
    assert RagCT(k=5).score_similarities(list(HAND)) == pytest.approx(HAND_SCORE, abs=1e-6)
    single = RagCT().components([0.8])
    assert single["score"] == 0.0 and single["k_used"] == 1.0
    verdict = RagCT().check(RetrievalResult(Query("q"), ()))
    assert verdict.action is Action.ALLOW and verdict.score == 0.0


def test_ties_give_a_flat_profile() -> None:
    flat = RagCT().components([0.5, 0.5, 0.5])
    assert flat["entropy"] == pytest.approx(1.0)
    assert flat["margin"] == 0.0 and flat["score"] == pytest.approx(0.0, abs=1e-12)
    tied_top = RagCT().components([0.7, 0.7, 0.1])
    assert tied_top["margin"] == 0.0


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_scores_raise_a_clear_error(bad: float) -> None:
    with pytest.raises(InvalidSimilarityError, match="NaN or infinite"):
        RagCT().score_similarities([0.5, bad, 0.1])


@pytest.mark.parametrize(
    "options",
    [
        {"k": 1},
        {"mode": "both"},
        {"alpha": -1.0},
        {"alpha": 0.0, "beta": 0.0},
        {"temperature": 0.0},
        {"margin_range": (0.5, 0.5)},
    ],
)
def test_invalid_options_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        RagCT(**options)  # type: ignore[arg-type]


def test_check_blocks_at_the_threshold_with_numeric_evidence() -> None:
    exact = RagCT().score_similarities(list(HAND))
    at = RagCT(tau=exact).check(retrieval(list(HAND)))  # score == threshold blocks
    below = RagCT(tau=exact + 1e-9).check(retrieval(list(HAND)))
    assert at.action is Action.BLOCK and below.action is Action.ALLOW
    assert at.guard == "rag-ct" and at.threshold == exact
    assert set(at.evidence) >= {"entropy", "margin", "similarities"}
    assert "chunk text" not in repr(at.evidence)


def test_paper_exact_defaults() -> None:
    detector = RagCT()
    assert (detector.k, detector.alpha, detector.beta, detector.tau, detector.temperature) == (3, 0.5, 0.5, 0.5, 1.0)
    assert detector.margin_range == (0.0, 1.0) and detector.mode == "combined"
    assert not detector.fitted and detector.threshold == 0.5


def test_a_block_refuses_without_generating(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["the private record"])
    pipeline = RagPipeline(
        fake_retriever, generator, defense=build_defense("rag-ct", DefenseContext(), {"rag-ct": {"tau": 0.0}})
    )
    response = pipeline.answer("what is in the records?")
    assert response.finish_reason == "blocked" and response.blocked_by == ["rag-ct"]
    assert generator.requests == []
    assert "private record" not in response.text


def _profiles(rng: random.Random, n: int, top: float, gap: float) -> list[list[float]]:
    return [
        [top + rng.gauss(0, 0.03), top - gap + rng.gauss(0, 0.01), top - gap - 0.02 + rng.gauss(0, 0.01)]
        for _ in range(n)
    ]


def test_fit_sets_range_and_threshold_at_the_target_fpr() -> None:
    rng = random.Random(0)
    benign = _profiles(rng, 400, 0.5, 0.02)
    detector = RagCT().fit(benign, target_fpr=0.05)
    margins = [max(p) - sorted(p)[-2] for p in benign]
    assert detector.margin_range_ == pytest.approx((min(margins), max(margins)))
    flagged = np.mean([detector.score(p) >= detector.threshold_ for p in benign])
    assert flagged <= 0.05
    assert detector.threshold == detector.threshold_ and detector.temperature_ == 1.0 and detector.n_fit_ == 400


def test_fit_temperature_picks_a_better_separating_t() -> None:
    rng = random.Random(1)
    benign = _profiles(rng, 300, 0.5, 0.01)
    attacks = _profiles(rng, 100, 0.5, 0.06)
    labelled = (benign[:150] + attacks[:50], [False] * 150 + [True] * 50)
    detector = RagCT().fit(benign[150:], 0.05, fit_temperature=True, labelled=labelled)
    assert detector.temperature_ < 1.0

    def auc_at(t: float) -> float:
        probe = RagCT(temperature=t).fit(benign[150:], 0.05)
        scores = [probe.score(p) for p in labelled[0]]
        return auroc(scores[:150], scores[150:])

    assert auc_at(detector.temperature_) >= auc_at(1.0)
    with pytest.raises(ConfigError, match="labelled"):
        RagCT().fit(benign, 0.05, fit_temperature=True)


def test_fit_needs_enough_benign_traffic() -> None:
    with pytest.raises(ConfigError, match="at least 10"):
        RagCT().fit([[0.5, 0.4, 0.3]] * 3)


def test_save_load_round_trip(tmp_path: Path) -> None:
    rng = random.Random(2)
    fitted = RagCT(k=3, mode="combined", alpha=0.7, beta=0.3).fit(_profiles(rng, 200, 0.6, 0.03), 0.02)
    path = tmp_path / "rag_ct.json"
    fitted.save(path)
    loaded = RagCT.load(path)
    probe = [0.8, 0.55, 0.5]
    assert loaded.score_similarities(probe) == pytest.approx(fitted.score_similarities(probe))
    assert loaded.threshold_ == fitted.threshold_ and loaded.margin_range_ == fitted.margin_range_
    assert (loaded.alpha, loaded.beta) == (0.7, 0.3)
    RagCT().save(tmp_path / "plain.json")
    assert not RagCT.load(tmp_path / "plain.json").fitted
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(ConfigError, match="not a saved RagCT"):
        RagCT.load(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="cannot read"):
        RagCT.load(tmp_path / "missing.json")


def test_registry_factory_fits_on_calibration_or_runs_paper_exact() -> None:
    rng = random.Random(3)
    calibration = tuple(retrieval(p) for p in _profiles(rng, 100, 0.5, 0.02))
    paper = build_defense("rag-ct", DefenseContext(k=3)).query_guards[0]
    fitted = build_defense("rag-ct", DefenseContext(k=5, calibration=calibration, target_fpr=0.05)).query_guards[0]
    assert isinstance(paper, RagCT) and not paper.fitted and paper.threshold == 0.5
    assert isinstance(fitted, RagCT) and fitted.fitted and fitted.k == 5 and fitted.target_fpr_ == 0.05


@pytest.mark.parametrize("mode", ["combined", "entropy", "margin"])
def test_vectorised_scores_equal_single_scores(mode: str) -> None:
    rng = random.Random(4)
    profiles = [*_profiles(rng, 50, 0.5, 0.05), [0.2, 0.2, 0.2], [0.9, 0.1, 0.0, 0.5]]
    detector = RagCT(mode=mode, temperature=0.05, margin_range=(0.0, 0.2))  # type: ignore[arg-type]
    expected = [detector.score_similarities(p) for p in profiles]
    assert detector.score_many(profiles) == pytest.approx(expected, abs=1e-12)
    assert detector.score_many([[0.5, 0.4], *profiles]) == pytest.approx(
        [detector.score_similarities([0.5, 0.4]), *expected], abs=1e-12
    )
