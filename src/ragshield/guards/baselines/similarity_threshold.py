"""Similarity-threshold baseline (`similarity-threshold`): drop weakly similar retrieved chunks.

TGTB's retrieval-stage defense (Zeng et al. 2024, `threshold` on the retrieval distance):
a chunk enters the prompt only when its cosine similarity to the query is at least
`min_similarity`. Untargeted extraction queries (random text plus a command) retrieve
chunks that are only loosely related, which this removes; when every hit is dropped the
prompt has no context at all and the model can leak nothing from the knowledge base.

`min_similarity="auto"` sets the threshold from the benign calibration retrievals
(`DefenseContext.calibration`): the `target_fpr` quantile of their top-1 similarities, so
about that share of benign queries lose their best chunk.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.guards.base import Defense
from ragshield.types import RetrievalResult

if TYPE_CHECKING:
    from ragshield.guards.factory import DefenseContext

NAME = "similarity-threshold"
DEFAULT_MIN_SIMILARITY = 0.3


class SimilarityThreshold:
    """ContextDecorator: keeps the hits whose cosine similarity is `>= min_similarity` (in [-1, 1]).

    Hits keep their similarity and rank; dropped chunks are simply absent from the prompt.
    """

    def __init__(self, min_similarity: float = DEFAULT_MIN_SIMILARITY, *, name: str = NAME) -> None:
        if not -1.0 <= min_similarity <= 1.0:
            raise ConfigError(f"min_similarity is a cosine in [-1, 1], got {min_similarity}")
        self.name = name
        self.min_similarity = float(min_similarity)

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        kept = tuple(hit for hit in retrieval.hits if hit.similarity >= self.min_similarity)
        if len(kept) == len(retrieval.hits):
            return retrieval
        kept_ids = {hit.chunk.id for hit in kept}
        markers = {key: value for key, value in retrieval.markers.items() if key in kept_ids}
        return replace(retrieval, hits=kept, markers=markers)


def threshold_from_calibration(retrievals: Any, target_fpr: float) -> float:
    """The `target_fpr` quantile of the benign retrievals' top-1 similarities.

    Raises:
        ConfigError: no calibration retrieval has a hit.
    """
    tops = [retrieval.hits[0].similarity for retrieval in retrievals if retrieval.hits]
    if not tops:
        raise ConfigError(
            "similarity-threshold min_similarity='auto' needs benign calibration queries "
            "(`calibration: {path: ...}` in the config); or give a number"
        )
    return float(np.quantile(np.asarray(tops, dtype=np.float64), target_fpr))


def build_defense(context: DefenseContext, *, min_similarity: float | str = DEFAULT_MIN_SIMILARITY) -> Defense:
    """Similarity threshold (TGTB's retrieval-distance threshold) on the retrieved chunks.

    Args:
        context: the system; its `calibration` and `target_fpr` are used when `min_similarity="auto"`.
        min_similarity: a cosine in [-1, 1], or `auto`.

    Raises:
        ConfigError: invalid threshold, `auto` without calibration.
    """
    if min_similarity == "auto":
        value = threshold_from_calibration(context.calibration, context.target_fpr)
    elif isinstance(min_similarity, int | float):
        value = float(min_similarity)
    else:
        raise ConfigError(f"min_similarity must be a number or 'auto', got {min_similarity!r}")
    return Defense(name=NAME, decorators=(SimilarityThreshold(value),), fail_closed=context.fail_closed)
