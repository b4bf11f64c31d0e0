"""What the `intent` guard's second opinion (`intent_veto`) did for a query, which queries it reads beyond the flags,
and the check of its opt-in settings in logits.

Apart from `intent_veto` so the guard, the layered default and the verdicts can name these without loading the
verifiers' code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ragshield.errors import ConfigError
from ragshield.guards.intent_model import IntentScore
from ragshield.guards.intent_veto_weights import READINGS, VetoWeights, band_floor, is_reading, whole_number


class SecondOpinion:
    """What the second opinion did for one query (`IntentScore.second_opinion`)."""

    NOT_ASKED = "not asked"  # not flagged nor a near miss, or the guard runs without one
    UPHELD = "upheld"  # read; the flag stands
    LET_THROUGH = "let through"  # read; the probability is the verifier's, below the operating point
    RAISED = "raised"  # a near miss read; the probability is the operating point itself: flagged
    NOT_RAISED = "not raised"  # a near miss read; the model's probability stands
    UNAVAILABLE = "unavailable"  # could not be read (not installed, failed, too long): the model's verdict stands
    VECTOR_RAISED = "raised by the vector head"  # a near miss the vector raise (`intent_vector_raise`) flagged
    RAISED_STATES = (RAISED, VECTOR_RAISED)  # a near miss lifted to the operating point

    @staticmethod
    def reason_suffix(state: str) -> str:
        """What a verdict's reason adds for this state ("" when there is nothing to say)."""
        return {
            SecondOpinion.LET_THROUGH: "; a second opinion let it through",
            SecondOpinion.RAISED: "; a second opinion raised it to the operating point",
            SecondOpinion.VECTOR_RAISED: "; the vector raise lifted it to the operating point",
            SecondOpinion.UNAVAILABLE: "; no second opinion read it",
        }.get(state, "")


def near_misses(
    scores: Sequence[IntentScore],
    lane: Sequence[int],
    flag_at: float,
    weights: VetoWeights | None,
    reach: float | None = None,
) -> list[int]:
    """The indices of `lane` whose score is under `flag_at` by at most the file's `raise_band` logits (or `reach`,
    the other lane's reading for its either raise, when that is wider) and that no verifier has read; none when the
    file does not raise (or did not load)."""
    if weights is None or weights.raise_band is None:
        return []
    floor = band_floor(flag_at, max(weights.raise_band, reach or 0.0))
    return [
        i
        for i in lane
        if floor <= scores[i].probability < flag_at and scores[i].second_opinion == SecondOpinion.NOT_ASKED
    ]


def either_options(
    line: Any, band: Any, chars: Any, reading: Any, raising: bool
) -> tuple[float | None, float | None, int | None, str | None]:
    """The guard's either raise options (`raise_either`, `raise_either_band`, `raise_either_chars`,
    `raise_either_reading`), each checked and then checked together: a band needs a line, and a length of 0 (the
    raise off) takes no line or reading."""
    line = logit_option("raise_either", line, raising, "a logit line, e.g. 4.0")
    band = logit_option("raise_either_band", band, raising, "logits, e.g. 8.0", 0.0)
    chars = count_option("raise_either_chars", chars, raising, "e.g. 120, 0: off")
    reading = reading_option("raise_either_reading", reading, raising)
    if band is not None and line is None:
        raise ConfigError("intent raise_either_band needs raise_either (the line e5 reads that band at)")
    if chars == 0 and (line, reading) != (None, None):
        raise ConfigError("intent raise_either_chars 0 turns the either raise off: give it without the others")
    return line, band, chars, reading


def count_option(name: str, value: Any, raising: bool, example: str) -> int | None:
    """A setting in characters (`raise_either_chars`), checked: None (the file's), or a whole number, 0 or more, while
    the second opinion raises near misses (`raising`)."""
    if value is None:
        return None
    if not whole_number(value, least=0):
        raise ConfigError(f"intent {name} must be a whole number, 0 or more ({example}), got {value!r}")
    if not raising:
        raise ConfigError(f"intent {name} needs second_opinion and raise_near_misses on")
    return int(value)


def reading_option(name: str, value: Any, raising: bool) -> str | None:
    """A run-time reading (`raise_either_reading`), checked: None (the file's), or "pieces" or "whole" while the
    second opinion raises near misses (`raising`)."""
    if value is None:
        return None
    if not is_reading(value):
        raise ConfigError(f"intent {name} must be one of {', '.join(READINGS)}, got {value!r}")
    if not raising:
        raise ConfigError(f"intent {name} needs second_opinion and raise_near_misses on")
    return str(value)


def logit_option(name: str, value: Any, raising: bool, example: str, least: float = -math.inf) -> float | None:
    """A run-time setting in logits (`raise_either`, `routed_raise_band`), checked: None (unset: the packaged file's
    setting stands), or a finite number over `least` while the second opinion raises near misses (`raising`)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= least:
        raise ConfigError(f"intent {name} must be a finite number ({example}), got {value!r}")
    if not raising:
        raise ConfigError(f"intent {name} needs second_opinion and raise_near_misses on")
    return float(value)
