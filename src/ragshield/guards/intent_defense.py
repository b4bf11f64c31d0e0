"""`intent` in the defense registry: the learned `ExtractionIntent` (default) or the bank-similarity guard.

Kept apart from `intent.py` so the guard's module holds the guard alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragshield.errors import ConfigError
from ragshield.guards.base import Defense
from ragshield.guards.factory import DefenseContext
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_bank import BankIntent, build_bank_defense
from ragshield.parameters import check_parameters, forwards
from ragshield.rag.embedding import Embedder

_BANK_PARAMS = {"bank", "extra_banks", "lexical_weight", "semantic", "window", "max_segments"}


@forwards(ExtractionIntent, BankIntent)
def build_defense(
    context: DefenseContext,
    *,
    method: str = "learned",
    embedder: Embedder | None = None,
    load: str | Path | None = None,
    **params: Any,
) -> Defense:
    """Extraction intent on the query text: the shipped learned model, usable with no calibration.

    Parameters: `load` (a file from `ragshield calibrate`), `model` (other weights), `threshold` ("shipped" (default),
    "fit": fit on `context.calibration` at `context.target_fpr`, or a probability), `name`;
    `method: bank` selects the bank-similarity guard with its own parameters (`extra_banks`,
    `lexical_weight`, `semantic`, ...), which must be calibrated on `context.calibration`.
    """
    embedder = embedder or context.embedder
    if method == "bank":
        check_parameters(BankIntent, params, kind="defense", name="intent (method: bank)", skip=("embedder",))
        return build_bank_defense(context, embedder, load, params)
    if method != "learned":
        raise ConfigError(f"intent method must be 'learned' or 'bank', got {method!r}")
    bank_only = sorted(_BANK_PARAMS & set(params))
    if bank_only:
        raise ConfigError(f"intent parameters {', '.join(bank_only)} belong to the bank guard; add `method: bank`")
    if load is not None:
        if "threshold" in params:
            raise ConfigError("intent: give either `load` (a calibrated file) or `threshold`, not both")
        with_load = (
            "name",
            "second_opinion",
            "raise_near_misses",
            "raise_either",
            "raise_either_band",
            "raise_either_chars",
            "raise_either_reading",
            "routed_raise_band",
            "vector_raise",
        )
        if ignored := sorted(set(params) - set(with_load)):
            raise ConfigError(f"intent: with `load`, only {', '.join(with_load)} apply; got {', '.join(ignored)}")
        guard = ExtractionIntent.load(load, embedder=embedder, **params)
    else:
        guard = ExtractionIntent(embedder=embedder, **params)
        if guard.threshold == "fit":
            calibration = context.require_calibration("intent threshold 'fit'", "; or keep the shipped threshold")
            guard.fit(calibration, context.target_fpr)
        else:
            guard._model()  # load now so a broken install fails at start-up, not on the first query
    guard._vector_head()  # the vector raise's file too (a few KB), for the same reason
    return Defense(name=guard.name, query_guards=(guard,))
