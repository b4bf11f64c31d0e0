"""Similarity-threshold baseline (`similarity-threshold`): drop weakly similar retrieved chunks.

TGTB's retrieval-stage defense (Zeng et al. 2024, `threshold` on the retrieval distance):
a chunk enters the prompt only when its cosine similarity to the query is at least
`min_similarity`. Untargeted extraction queries (random text plus a command) retrieve
chunks that are only loosely related, which this removes; when every hit is dropped the
prompt has no context at all and the model can leak nothing from the knowledge base.

`min_similarity="auto"` fits the threshold on the benign calibration retrievals
(`DefenseContext.calibration`) with `ragshield.calibration`, like every calibrated guard: at most
`target_fpr` of them lose their best chunk.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ragshield.calibration import threshold_at_fpr
from ragshield.errors import ConfigError
from ragshield.guards.base import Defense
from ragshield.guards.detector import Detector
from ragshield.types import RetrievalResult

if TYPE_CHECKING:
    from ragshield.guards.factory import DefenseContext

NAME = "similarity-threshold"
DEFAULT_MIN_SIMILARITY = 0.3


class SimilarityThreshold(Detector):
    """ContextDecorator: keeps the hits whose cosine similarity is `>= min_similarity` (in [-1, 1]).

    Hits keep their similarity and rank; dropped chunks are simply absent from the prompt. As a
    `Detector` its `score` is the negated top-1 similarity (higher = weaker retrieval = more
    suspicious), and `fit(benign, target_fpr)` sets `threshold_` with `ragshield.calibration`,
    so at most `target_fpr` of the benign retrievals lose their best chunk; the cut becomes
    `min_similarity_`. Before `fit` the given `min_similarity` applies.
    """

    FORMAT = "ragshield.similarity-threshold/1"
    FITTED = ("threshold_", "min_similarity_", "n_fit_", "target_fpr_")

    def __init__(self, min_similarity: float = DEFAULT_MIN_SIMILARITY, *, name: str = NAME) -> None:
        if not -1.0 <= min_similarity <= 1.0:
            raise ConfigError(f"min_similarity is a cosine in [-1, 1], got {min_similarity}")
        self.name = name
        self.min_similarity = float(min_similarity)

    @property
    def cut(self) -> float:
        """The similarity a hit needs to be kept: fitted when fitted, else `min_similarity`."""
        return float(getattr(self, "min_similarity_", self.min_similarity))

    @property
    def default_threshold(self) -> float:
        return -self.min_similarity

    def score(self, retrieval: RetrievalResult) -> float:
        """Minus the top-1 similarity (1.0 for a retrieval with no hit); higher = more suspicious."""
        return -retrieval.hits[0].similarity if retrieval.hits else 1.0

    def fit(self, benign: Sequence[RetrievalResult], target_fpr: float = 0.01) -> SimilarityThreshold:
        """Set the cut so that at most `target_fpr` of `benign` retrievals lose their best chunk.

        Raises:
            ConfigError: no benign retrieval has a hit, or a rate outside (0, 1).
        """
        scores = [self.score(retrieval) for retrieval in benign if retrieval.hits]
        if not scores:
            raise ConfigError(
                "similarity-threshold min_similarity='auto' needs benign calibration queries "
                "(`calibration: {path: ...}` in the config); or give a number"
            )
        self.threshold_ = threshold_at_fpr(scores, target_fpr)
        # flagged when -s >= threshold_, i.e. s <= -threshold_: keep only hits strictly above that
        self.min_similarity_ = float(np.nextafter(-self.threshold_, math.inf))
        self.n_fit_ = len(scores)
        self.target_fpr_ = float(target_fpr)
        return self

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        cut = self.cut
        kept = tuple(hit for hit in retrieval.hits if hit.similarity >= cut)
        if len(kept) == len(retrieval.hits):
            return retrieval
        kept_ids = {hit.chunk.id for hit in kept}
        markers = {key: value for key, value in retrieval.markers.items() if key in kept_ids}
        return replace(retrieval, hits=kept, markers=markers)


def build_defense(context: DefenseContext, *, min_similarity: float | str = DEFAULT_MIN_SIMILARITY) -> Defense:
    """Similarity threshold (TGTB's retrieval-distance threshold) on the retrieved chunks.

    Args:
        context: the system; its `calibration` and `target_fpr` are used when `min_similarity="auto"`.
        min_similarity: a cosine in [-1, 1], or `auto`.

    Raises:
        ConfigError: invalid threshold, `auto` without calibration.
    """
    if min_similarity == "auto":
        decorator = SimilarityThreshold().fit(context.calibration, context.target_fpr)
    elif isinstance(min_similarity, int | float):
        decorator = SimilarityThreshold(float(min_similarity))
    else:
        raise ConfigError(f"min_similarity must be a number or 'auto', got {min_similarity!r}")
    return Defense(name=NAME, decorators=(decorator,), fail_closed=context.fail_closed)
