"""The intent model's operating point (issue 18): where `train_intent.py` puts the line a text is flagged at.

Every real benign source is split by a stable hash of its text into train / calibration / test buckets
(`intent_sets.split_of`); `calibrate` sets the operating point on the calibration buckets (mixed public
benign set) at `TARGET_FPR` (from v5 per stacker, `PER_PATH`; from v6 also at least each public source's own
`SOURCE_FPR` threshold, `PER_SOURCE`), and `benchmarks/query_detection.py` judges the test buckets, SAGE
and the held-apart set, none of which training or calibration ever read.
"""

from __future__ import annotations

from typing import Any

from intent_scoring import Embedders, probabilities
from intent_sets import Example
from ragshield.calibration import threshold_at_fpr
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_model import IntentModel

TARGET_FPR = 0.005  # chosen before any evaluation: half the 1% goal, for transfer to unseen sets
PER_PATH = True  # an operating point per stacker (see `calibrate`), from v5
# v6: the English threshold is also at least each public source's own TARGET_FPR threshold, for
# the sources with enough calibration texts to measure it (>= 1 / TARGET_FPR): the mixed set is
# two-fifths GenMedGPT, which scores near 0, so Enron could run at twice the target unseen
PER_SOURCE = True
PUBLIC_SOURCES = ("enron", "genmedgpt", "healthcaremagic", "icliniq")
# the rate each public source's own threshold is set at (`--source-fpr`; the sixth round's candidates
# try 0.002, none of Enron's 253 calibration e-mails: candidate D ran at 1/253 there and 10/856 on the
# test e-mails)
SOURCE_FPR = TARGET_FPR


def calibrate(
    model: IntentModel,
    calib: list[Example],
    embedders: Embedders,
    *,
    per_path: bool = PER_PATH,
    per_source: bool = PER_SOURCE,
    source_fpr: float = SOURCE_FPR,
) -> IntentModel:
    """The model with its operating point at `TARGET_FPR` on the mixed public benign set.

    With `per_path` and a multilingual stacker, each path gets `TARGET_FPR` on its own
    calibration texts: the threshold is set on the texts the English stacker reads, and the
    multilingual stacker's bias is shifted so that its own texts' threshold lands on it. One
    pooled threshold let the few non-English texts (235 of 1671 for v4) fill the top of the
    pooled scores (7 of v4's 8 allowed), so the English path ran at 1 in 1436.

    With `per_source` (v6 candidates), the English threshold is raised, where needed, to each
    public source's own `source_fpr` threshold (sources with at least 1 / `TARGET_FPR` texts)."""
    import numpy as np

    texts = [e.text for e in calib]
    scores = np.asarray(probabilities(model, texts, embedders))
    routed = np.array(model.routes(texts), dtype=bool)
    sources = sorted({e.source for e in calib})
    own_points = source_thresholds(calib, scores, routed, source_fpr) if per_source else {}
    paths: dict[str, Any] = {}
    if per_path and model.multi_stack_weights is not None and routed.any() and not routed.all():
        threshold = english_line(scores[~routed], own_points)
        own = threshold_at_fpr(scores[routed], TARGET_FPR)
        model = model.with_multilingual_shift(logit(threshold) - logit(own))
        paths = {
            "per_path": True,
            "n_calibration_multilingual": int(routed.sum()),
            "multilingual_shift": logit(threshold) - logit(own),
        }
    else:
        threshold = threshold_at_fpr(scores, TARGET_FPR)
    if per_source:
        paths["per_source"] = {k: round(v, 6) for k, v in own_points.items()}
        paths |= {"source_fpr": source_fpr} if source_fpr != TARGET_FPR else {}
    return model.with_operating_point(
        threshold,
        target_fpr=TARGET_FPR,
        n_calibration=len(calib),
        calibration_sources=sources,
        **paths,
        note="mixed public benign set: calibration buckets of GenMedGPT-5k, iCliniq, HealthcareMagic, "
        "Enron openings as written and requests, and the project's own benign phrasings and chat turns",
    )


def english_line(english_scores: Any, source_points: dict[str, float]) -> float:
    """The English path's operating point (a probability; a text at or above it is flagged): `TARGET_FPR` on
    its calibration texts' `english_scores`, raised to each public source's own threshold in `source_points`
    (`source_thresholds`). Since v6 Enron's has decided it (the model card, "And per public source")."""
    return max([threshold_at_fpr(english_scores, TARGET_FPR), *source_points.values()])


def source_thresholds(
    calib: list[Example], scores: Any, routed: Any, source_fpr: float = SOURCE_FPR
) -> dict[str, float]:
    """Each public source's own `source_fpr` threshold on its English-path calibration texts, for the
    sources with at least 1 / `TARGET_FPR` of them (at 0.002, Enron's 253 e-mails allow none)."""
    import numpy as np

    out = {}
    for source in PUBLIC_SOURCES:
        rows = np.array([e.source == source for e in calib]) & ~routed
        if rows.sum() * TARGET_FPR >= 1.0:
            out[source] = threshold_at_fpr(scores[rows], source_fpr)
    return out
