"""Shared pieces of the metrics: the input error and small numeric helpers."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ragshield.errors import RagShieldError


class MetricInputError(RagShieldError, ValueError):
    """A metric got input it cannot score (empty sets, NaN scores, mismatched lengths)."""


def as_finite_or_inf(values: Iterable[float], *, what: str) -> list[float]:
    """`values` as floats; NaN raises (a NaN score has no rank), +-inf is kept.

    Raises:
        MetricInputError: a value is NaN or not a number.
    """
    result: list[float] = []
    for value in values:
        try:
            number = float(value)
        except (TypeError, ValueError) as error:
            raise MetricInputError(f"{what} must be numbers; got {value!r}") from error
        if math.isnan(number):
            raise MetricInputError(f"{what} contain NaN; drop or fix those scores before computing the metric")
        result.append(number)
    return result


def require_same_length(first: Sequence[object], second: Sequence[object], *, names: str) -> None:
    """Raise `MetricInputError` when two aligned sequences differ in length."""
    if len(first) != len(second):
        raise MetricInputError(f"{names} must be aligned one to one; got {len(first)} and {len(second)} items")


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; 0.0 for an empty sequence (callers report `n` beside it)."""
    return float(sum(values) / len(values)) if values else 0.0
