"""How a verifier of the `intent` guard's second opinion (`intent_veto`) reads one query: what pieces of it, in
which order, and when it stops.

A verifier's logit for a query (log-odds; higher = more like an extraction request) is the largest over the pieces
it reads (`pieces_of`). The client controls a query's length and each piece is a forward pass, so a query longer than
`MAX_CHARACTERS` or with more than `MAX_PIECES` pieces is not read at all: a flag then stands, and a near miss is
not raised (marked unavailable).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragshield.guards.intent_features import segment_texts

MAX_CHARACTERS = 4000  # longer flagged queries are not read: their flag stands
MAX_PIECES = 48  # texts, sentences and clauses read per query; more: the flag stands
BATCH = 4  # pieces per forward pass after the whole text; by length, 4 cost least (benchmarks/intent_veto_batching.py)
logger = logging.getLogger("ragshield.guards.intent_veto")  # the second opinion's one logger


def read_or_nothing(
    verifier: Any,
    texts: dict[int, str],
    second_reading: Callable[[str], str | None],
    feature_version: int,
    stop_at: float | None = None,
    near_miss: bool = False,
    reading: str | None = None,
) -> dict[int, float]:
    """`verifier_logits` of a loaded verifier (stopping at `stop_at`, default the veto's tau; reading as `reading`
    says, or when None a near miss or a flag as its file says, `VetoWeights.reading_for`), or {} when the verifier
    fails (the model's verdicts stand)."""
    try:
        return verifier_logits(
            verifier.logits,
            texts,
            second_reading,
            feature_version,
            stop_at=verifier.weights.tau if stop_at is None else stop_at,
            reading=reading if reading is not None else verifier.weights.reading_for(near_miss),
        )
    except Exception as error:  # a verifier that fails leaves its flags standing (fail closed)
        reason = type(error).__name__
        logger.warning("intent: the %s second opinion failed (%s); its flags stand", verifier.encoder_name, reason)
        return {}


def pieces_of(text: str, second_reading: str | None, feature_version: int, reading: str = "pieces") -> list[str]:
    """The texts a verifier reads for one query: the whole text, its sentences (their clauses
    joined) and clauses, and the same of its second reading; with `reading` "whole", the whole
    text and its second reading only."""
    readings = [text, *([second_reading] if second_reading else [])]
    if reading == "whole":
        return readings
    out: list[str] = []
    for form in readings:
        sentences = segment_texts(form, feature_version)
        out += [form, *(", ".join(c) for c in sentences if len(sentences) > 1)]
        out += [c for clauses in sentences if len(clauses) > 1 for c in clauses]
    return out


def verifier_logits(
    logits: Callable[[list[str]], Sequence[float]],
    texts: Mapping[int, str],
    second_reading: Callable[[str], str | None],
    feature_version: int,
    *,
    stop_at: float = math.inf,
    reading: str = "pieces",
    batch: int = BATCH,
    by_length: bool = True,
) -> dict[int, float]:
    """Per text it can read cheaply (at most `MAX_CHARACTERS`, `MAX_PIECES` pieces), the largest of
    `logits` over its pieces (`pieces_of`); a text left out is not read (its flag stands).

    The whole text is read first, then the other pieces, each once, shortest first, `batch` at a time
    (`by_length` False: in `pieces_of`'s order, as before session 41); reading stops once a logit reaches
    `stop_at` (the veto's tau: the flag stands whatever the rest say), so a request that reads as one on
    its face costs one forward pass. A batch pads each piece to its longest: pieces of like length share
    one, rather than every clause being padded to the query's second reading or longest sentence. The
    order decides only where reading may stop, never on which side of `stop_at` a text falls: a text read
    to its end gets the same largest logit either way (up to float rounding from the padding, within 4e-6
    as measured), and one that stops has reached `stop_at` either way, though the logit it stops at (the
    verdict's `veto_logit`) is the first at or over `stop_at`, which depends on the order.
    """
    out: dict[int, float] = {}
    for i, text in texts.items():
        if len(text) > MAX_CHARACTERS:
            continue
        pieces = pieces_of(text, second_reading(text), feature_version, reading)
        if len(pieces) > MAX_PIECES:
            continue
        best = _finite(logits(pieces[:1]))[0]
        rest = [piece for piece in dict.fromkeys(pieces[1:]) if piece != pieces[0]] if by_length else pieces[1:]
        if by_length:
            rest.sort(key=len)
        for start in range(0, len(rest), batch):
            if best >= stop_at:
                break
            best = max(best, *_finite(logits(rest[start : start + batch])))
        out[i] = best
    return out


def _finite(values: Sequence[float]) -> list[float]:
    """The logits as floats; a NaN or infinite one is a failing verifier (ValueError), since `max` would skip a NaN
    piece and a flag could be let through on the pieces it did not hide."""
    out = [float(v) for v in values]
    if not all(math.isfinite(v) for v in out):
        raise ValueError("the verifier returned a non-finite logit")
    return out
