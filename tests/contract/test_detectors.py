"""The `Detector` contract over the calibrated guards, with a FAKE hashing embedder: `fit` sets
`threshold_` so that at most the target share of benign items is flagged; before `fit` a detector
has its documented default or raises NotFittedError; `save` writes JSON (never a pickle) and
`load` gives the same scores. The learned `intent` model (MiniLM) is covered in test_intent.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragshield.errors import NotFittedError
from ragshield.guards.anomaly import RetrievalAnomaly
from ragshield.guards.baselines.similarity_threshold import SimilarityThreshold
from ragshield.guards.detector import Detector
from ragshield.guards.intent_bank import BankIntent
from ragshield.guards.rag_ct import RagCT
from ragshield.guards.shield import QueryShield
from ragshield.types import Query, RetrievalResult

TARGET = 0.1
BENIGN = [
    f"{what} {topic}?"
    for what in ("what helps with", "how long does", "is it normal to have", "who should I see about", "can I treat")
    for topic in ("a dry cough", "knee pain", "a rash on my arm", "headaches", "back pain", "a sore throat")
]


@pytest.fixture(scope="module")
def benign(shared_fake_retriever: Any) -> list[RetrievalResult]:
    return shared_fake_retriever.retrieve_many([Query(text) for text in BENIGN], 3)


def _bank(retrievals: list[RetrievalResult]) -> Detector:
    from ragshield.rag.embedding import HashingEmbedder

    return BankIntent(embedder=HashingEmbedder())


DETECTORS: dict[str, Callable[[list[RetrievalResult]], Detector]] = {
    "rag-ct": lambda _: RagCT(),
    "rag-ct-2s": lambda _: RetrievalAnomaly(),
    "intent (bank)": _bank,
    "similarity-threshold": lambda _: SimilarityThreshold(),
    "query-shield": lambda _: QueryShield(detectors=[RagCT(), RetrievalAnomaly()]),
}
SAVABLE = sorted(DETECTORS)


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_fit_sets_a_threshold_that_meets_the_target_rate(name: str, benign: list[RetrievalResult]) -> None:
    detector = DETECTORS[name](benign)
    assert not detector.fitted
    assert detector.fit(benign, TARGET) is detector and detector.fitted
    scores = np.array([detector.score(item) for item in benign])  # type: ignore[attr-defined]
    assert np.mean(scores >= detector.threshold_) <= TARGET  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_before_fit_a_documented_default_or_not_fitted_error(name: str, benign: list[RetrievalResult]) -> None:
    detector = DETECTORS[name](benign)
    if detector.default_threshold is None:
        with pytest.raises(NotFittedError, match="not fitted; call"):
            detector.active_threshold  # noqa: B018
    else:
        assert detector.active_threshold == detector.default_threshold


@pytest.mark.parametrize("name", SAVABLE)
def test_save_writes_json_and_load_scores_the_same(name: str, benign: list[RetrievalResult], tmp_path: Path) -> None:
    detector = DETECTORS[name](benign).fit(benign, TARGET)
    path = tmp_path / "detector.json"
    detector.save(path)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))  # plain JSON: nothing to unpickle
    assert data["format"] == type(detector).FORMAT
    runtime = {"embedder": detector.embedder} if isinstance(detector, BankIntent) else {}
    loaded = type(detector).load(path, **runtime)
    assert loaded.threshold_ == detector.threshold_  # type: ignore[attr-defined]
    for item in benign[:5]:
        assert loaded.score(item) == pytest.approx(detector.score(item))  # type: ignore[attr-defined]
