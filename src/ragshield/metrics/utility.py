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
import re
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


# -- degenerate (looping) answers -------------------------------------------------------------

_ANSWER_WORD = re.compile(r"\w+")
LOOP_NGRAM = 4  # word n-gram length of the repeated-n-gram rule
LOOP_REPEATS = 3  # occurrences of one n-gram that make a loop
ECHO_MIN_WORDS = 8  # the shortest repeated span the half-repeat rule counts


def _longest_common_run(first: Sequence[str], second: Sequence[str]) -> int:
    """Length of the longest run of consecutive words that both sequences contain (O(len x len))."""
    best = 0
    previous = [0] * (len(second) + 1)
    for word in first:
        current = [0] * (len(second) + 1)
        for j, other in enumerate(second, start=1):
            if word == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def degenerate(text: str) -> bool:
    """Whether an answer is a degenerate loop rather than an answer a person would accept.

    The text is cut into lower-cased words (`\\w+` runs; punctuation and spacing ignored), and it
    is degenerate when either rule holds:

    1. **repeated n-gram:** some word 4-gram (`LOOP_NGRAM`) occurs 3 (`LOOP_REPEATS`) or more
       times, overlapping occurrences included ("a b c d a b c d a b c d", or one word 6 times);
    2. **half repeat:** the text has at least 16 words and its second half (the last
       `len(words) // 2` words) contains a run of consecutive words that also occurs in the first
       half, at least 8 words (`ECHO_MIN_WORDS`) long and at least half as long as the second half
       ("A B" where B restarts A and covers at least a third of it, as a loop cut by the token
       limit ends).

    Rule 1 catches short loops ("The answer is: The answer is: ..."), rule 2 long ones repeated
    only twice before the token limit. An empty answer is not degenerate (refusals are counted
    elsewhere). Cost: O(w) for rule 1 and O(w^2) for rule 2 in the number of words w.
    """
    words = [word.lower() for word in _ANSWER_WORD.findall(text)]
    counts: dict[tuple[str, ...], int] = {}
    for start in range(len(words) - LOOP_NGRAM + 1):
        gram = tuple(words[start : start + LOOP_NGRAM])
        counts[gram] = counts.get(gram, 0) + 1
        if counts[gram] >= LOOP_REPEATS:
            return True
    if len(words) < 2 * ECHO_MIN_WORDS:
        return False
    middle = len(words) - len(words) // 2
    second = words[middle:]
    run = _longest_common_run(words[:middle], second)
    return run >= max(ECHO_MIN_WORDS, len(second) / 2)


def degenerate_share(answers: Sequence[str]) -> dict[str, float | int]:
    """The share of `answers` that `degenerate` flags (a rate in [0, 1]; lower = better).

    Returns:
        `n` (answers), `degenerate` (how many loop), `share` (their share; nan when n is 0).
    """
    flagged = sum(degenerate(answer) for answer in answers)
    return {"n": len(answers), "degenerate": flagged, "share": flagged / len(answers) if answers else float("nan")}
