"""RetrievalAnomaly (rag-ct-2s): two-sided, benign-fitted, calibrated, persistent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragshield.errors import ConfigError, NotFittedError
from ragshield.guards import RagCT, RetrievalAnomaly
from ragshield.guards.anomaly import profile_feature_names
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.types import Action, Chunk, Query, RetrievalResult, ScoredChunk


def retrieval(similarities: list[float]) -> RetrievalResult:
    hits = tuple(
        ScoredChunk(Chunk(f"c{i}", f"d{i}", "secret chunk text"), s, i)
        for i, s in enumerate(sorted(similarities, reverse=True))
    )
    return RetrievalResult(Query("q"), hits)


def benign_profiles(n: int, seed: int) -> list[list[float]]:
    """Benign-like top-3 profiles: top-1 around 0.55, small gaps (like questions on a medical KB)."""
    rng = np.random.default_rng(seed)
    top = rng.normal(0.55, 0.06, n)
    gap1 = np.abs(rng.normal(0.03, 0.02, n))
    gap2 = np.abs(rng.normal(0.02, 0.01, n))
    return [[t, t - g1, t - g1 - g2] for t, g1, g2 in zip(top, gap1, gap2, strict=True)]


PEAKED = [0.92, 0.55, 0.52]  # quotes one record (RAG-Thief style)
FLAT_LOW = [0.12, 0.118, 0.117]  # matches nothing (TGTB untargeted style)
TYPICAL = [0.56, 0.53, 0.51]


@pytest.fixture(scope="module")
def fitted() -> RetrievalAnomaly:
    return RetrievalAnomaly(k=3).fit(benign_profiles(600, 0), target_fpr=0.02)


def test_unfitted_use_says_how_to_fit() -> None:
    with pytest.raises(NotFittedError, match="--fit"):
        RetrievalAnomaly().check(retrieval(TYPICAL))


def test_flags_too_peaked_and_too_flat_but_not_typical(fitted: RetrievalAnomaly) -> None:
    assert fitted.check(retrieval(PEAKED)).action is Action.BLOCK
    assert fitted.check(retrieval(FLAT_LOW)).action is Action.BLOCK
    assert fitted.check(retrieval(TYPICAL)).action is Action.ALLOW
    # the one-sided paper rule cannot see the flat profile at any threshold that passes TYPICAL
    paper = RagCT()
    assert paper.score_similarities(FLAT_LOW) <= paper.score_similarities(TYPICAL)


def test_reason_says_which_way_the_profile_deviates(fitted: RetrievalAnomaly) -> None:
    flat = fitted.check(retrieval(FLAT_LOW))
    assert "below" in flat.reason and flat.evidence["z"]["top1"] < 0
    peaked = fitted.check(retrieval(PEAKED))
    assert peaked.evidence["z"]["margin"] > 0
    assert set(peaked.evidence["features"]) == set(profile_feature_names(3))
    assert "secret chunk text" not in repr(peaked.evidence)


def test_false_positive_rate_on_fresh_benign_traffic_is_near_target(fitted: RetrievalAnomaly) -> None:
    fresh = fitted.score_many(benign_profiles(2000, 1))
    fpr = float(np.mean(fresh >= fitted.threshold_))
    assert fpr <= 0.05  # target 0.02; slack for a 600-sample fit
    assert fitted.score(TYPICAL) == pytest.approx(float(fitted.score_many([TYPICAL])[0]))


def test_temperature_is_the_median_benign_spread(fitted: RetrievalAnomaly) -> None:
    spreads = [p[0] - p[-1] for p in benign_profiles(600, 0)]
    assert fitted.temperature_ == pytest.approx(float(np.median(spreads)))


def test_isolation_forest_is_two_sided_too() -> None:
    forest = RetrievalAnomaly(model="iforest").fit(benign_profiles(600, 0), 0.02)
    assert forest.score(PEAKED) > forest.threshold_
    assert forest.score(FLAT_LOW) > forest.threshold_
    assert forest.score(TYPICAL) < forest.threshold_


def test_k2_uses_top1_and_margin_only() -> None:
    detector = RetrievalAnomaly(k=2).fit([p[:2] for p in benign_profiles(300, 2)], 0.02)
    assert detector.features([0.5, 0.4]).shape == (2,)
    assert detector.check(retrieval([0.95, 0.3])).blocked


def test_too_few_hits_or_samples_are_clear_errors(fitted: RetrievalAnomaly) -> None:
    with pytest.raises(ConfigError, match="has 2 hits"):
        fitted.check(retrieval([0.5, 0.4]))
    with pytest.raises(ConfigError, match="at least 20"):
        RetrievalAnomaly().fit(benign_profiles(5, 0))
    with pytest.raises(ConfigError):
        RetrievalAnomaly(model="svm")  # type: ignore[arg-type]


def test_save_load_round_trip(fitted: RetrievalAnomaly, tmp_path: Path) -> None:
    path = tmp_path / "anomaly.bin"
    fitted.save(path)
    loaded = RetrievalAnomaly.load(path)
    assert loaded.threshold_ == fitted.threshold_ and loaded.k == 3
    assert loaded.score(PEAKED) == pytest.approx(fitted.score(PEAKED))
    (tmp_path / "bad.bin").write_bytes(b'{"format": "nope"}\n')
    with pytest.raises(ConfigError, match="not a saved"):
        RetrievalAnomaly.load(tmp_path / "bad.bin")
    with pytest.raises(ConfigError, match="cannot read"):
        RetrievalAnomaly.load(tmp_path / "missing.bin")


def test_registry_factory_needs_calibration() -> None:
    with pytest.raises(ConfigError, match="--fit"):
        build_defense("rag-ct-2s", DefenseContext())
    calibration = tuple(retrieval(p) for p in benign_profiles(100, 3))
    defense = build_defense("rag-ct-2s", DefenseContext(calibration=calibration, target_fpr=0.05))
    guard = defense.query_guards[0]
    assert isinstance(guard, RetrievalAnomaly) and guard.fitted and guard.target_fpr_ == 0.05
