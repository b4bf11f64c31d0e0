"""Shared pieces of the metrics: the input error and small numeric helpers."""

from __future__ import annotations

from collections.abc import Sequence

# defined beneath the metrics so that guards can validate scores too; re-exported here
from ragshield.scores import MetricInputError, as_finite_or_inf

__all__ = ["MetricInputError", "as_finite_or_inf", "mean", "require_same_length"]


def require_same_length(first: Sequence[object], second: Sequence[object], *, names: str) -> None:
    """Raise `MetricInputError` when two aligned sequences differ in length."""
    if len(first) != len(second):
        raise MetricInputError(f"{names} must be aligned one to one; got {len(first)} and {len(second)} items")


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; 0.0 for an empty sequence (callers report `n` beside it)."""
    return float(sum(values) / len(values)) if values else 0.0
