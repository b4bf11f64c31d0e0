"""Latency cost of a defense, from the per-stage timings every `Response` carries.

`Response.timings_ms["total"]` is the wall-clock time of one answer in milliseconds, from
the pipeline receiving the query to the final response (refusals included: a blocked
query is answered fast, which is part of the defense's real latency profile).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ragshield.metrics.base import MetricInputError
from ragshield.types import Response


def percentile(values: Sequence[float], q: float) -> float:
    """The `q` quantile (`q` in [0, 1]) of `values`, interpolated linearly between the two nearest
    ranks (numpy's default); NaN for no values (shown as missing, never as 0)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_summary(responses: Sequence[Response]) -> dict[str, float | int]:
    """Percentiles of total latency in milliseconds (numpy's linear interpolation).

    Responses without a `total` timing (recorded by another system) are skipped and counted.

    Returns:
        `{"n", "missing", "p50_ms", "p95_ms", "mean_ms", "max_ms"}`.

    Raises:
        MetricInputError: no response has a `total` timing.
    """
    totals = [response.timings_ms["total"] for response in responses if "total" in response.timings_ms]
    if not totals:
        raise MetricInputError("no response has timings_ms['total']; record transcripts with RagPipeline")
    values = np.asarray(totals, dtype=np.float64)
    return {
        "n": int(values.size),
        "missing": len(responses) - int(values.size),
        "p50_ms": float(np.percentile(values, 50)),
        "p95_ms": float(np.percentile(values, 95)),
        "mean_ms": float(values.mean()),
        "max_ms": float(values.max()),
    }


def added_latency(defended: Sequence[Response], undefended: Sequence[Response]) -> dict[str, float | int]:
    """Latency a defense adds: defended minus undefended percentiles, in milliseconds.

    The two runs should answer the same benign queries on the same machine. Differences of
    percentiles, not percentiles of per-query differences, so the runs need not be aligned.

    Returns:
        `{"added_p50_ms", "added_p95_ms", "ratio_p50", "ratio_p95", "p50_ms", "p95_ms",
        "baseline_p50_ms", "baseline_p95_ms"}`; a ratio is defended / undefended.
    """
    mine = latency_summary(defended)
    base = latency_summary(undefended)

    def ratio(key: str) -> float:
        return float(mine[key]) / float(base[key]) if base[key] else float("inf")

    return {
        "added_p50_ms": float(mine["p50_ms"]) - float(base["p50_ms"]),
        "added_p95_ms": float(mine["p95_ms"]) - float(base["p95_ms"]),
        "ratio_p50": ratio("p50_ms"),
        "ratio_p95": ratio("p95_ms"),
        "p50_ms": mine["p50_ms"],
        "p95_ms": mine["p95_ms"],
        "baseline_p50_ms": base["p50_ms"],
        "baseline_p95_ms": base["p95_ms"],
    }
