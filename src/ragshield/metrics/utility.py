"""Utility of benign answers: how close each answer is to its reference.

The reference is a gold answer (KE-bench: ROUGE-L F1 and embedding cosine against gold
answers) or the undefended system's answer to the same query (CanaryRAG: quality change
caused by the defense). All scores are similarities in [0, 1] (cosine in [-1, 1]);
higher = closer = more useful.

BERTScore is reported only when the `bert-score` package *and* its model are already on
this machine: nothing is ever downloaded. Otherwise the key is absent (not zero).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragshield.metrics.base import MetricInputError, mean, require_same_length
from ragshield.metrics.text import rouge_l

if TYPE_CHECKING:
    from ragshield.rag.embedding import Embedder

log = logging.getLogger(__name__)

DEFAULT_BERTSCORE_MODEL = "roberta-large"  # bert-score's default for lang="en"


def bertscore_available(model: str = DEFAULT_BERTSCORE_MODEL) -> bool:
    """Whether BERTScore can run offline: `bert-score` is installed and `model` is in the local HF cache."""
    if importlib.util.find_spec("bert_score") is None:
        return False
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - huggingface_hub comes with sentence-transformers
        return False
    return isinstance(try_to_load_from_cache(model, "config.json"), str)


def _bertscore_f1(answers: Sequence[str], references: Sequence[str], model: str) -> float | None:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is cached; never reach the network
    try:
        from bert_score import score

        _, _, f1 = score(list(answers), list(references), model_type=model, lang="en", verbose=False)
    except Exception as error:  # a broken local model must not sink the other metrics
        log.warning("BERTScore skipped (%s)", type(error).__name__)
        return None
    return float(f1.mean().item())


def utility_metrics(
    answers: Sequence[str],
    references: Sequence[str],
    embedder: Embedder | None,
    *,
    bertscore_model: str = DEFAULT_BERTSCORE_MODEL,
) -> dict[str, float | int]:
    """Mean similarity of each answer to its reference.

    Pairs whose reference is empty are skipped (benign sets without a gold answer).

    Returns:
        `n` (pairs scored), `skipped`, `rouge_l` (mean ROUGE-L F1, stemmed, as rouge-score),
        `cosine` (mean embedding cosine; only with an embedder), `bertscore_f1` (only when
        BERTScore runs offline, see `bertscore_available`).

    Raises:
        MetricInputError: the two sequences differ in length, or no pair has a reference.
    """
    require_same_length(answers, references, names="answers and references")
    pairs = [(answer, reference) for answer, reference in zip(answers, references, strict=True) if reference.strip()]
    if not pairs:
        raise MetricInputError("no answer has a non-empty reference; give reference answers to measure utility")
    kept_answers = [answer for answer, _ in pairs]
    kept_references = [reference for _, reference in pairs]
    result: dict[str, float | int] = {
        "n": len(pairs),
        "skipped": len(answers) - len(pairs),
        "rouge_l": mean([rouge_l(reference, answer).f1 for answer, reference in pairs]),
    }
    if embedder is not None:
        vectors = embedder.embed(kept_answers + kept_references)
        first, second = vectors[: len(pairs)], vectors[len(pairs) :]
        result["cosine"] = float(np.mean(np.einsum("ij,ij->i", first, second)))
    if bertscore_available(bertscore_model):
        f1 = _bertscore_f1(kept_answers, kept_references, bertscore_model)
        if f1 is not None:
            result["bertscore_f1"] = f1
    return result
