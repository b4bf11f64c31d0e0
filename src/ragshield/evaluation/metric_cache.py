"""Per-cell metrics of an evaluation folder, cached in `OUT/metrics.json`.

Scoring a cell (leakage with bootstrap intervals, utility with the embedder) costs far more than
reading it back, so `build_report` keeps each cell's metrics under a key made of the metric
version, the embedder and the cell's fingerprint and finish time (`metric_key`): a rebuild after
a resumed run scores only the new or rerun cells.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.evaluation.cells import TranscriptCache

METRICS_FILE = "metrics.json"
METRIC_VERSION = 2  # 2: bootstrap intervals of ULC / PII / CRR


def read_metric_cache(out_dir: Path) -> dict[str, Any]:
    """The cached metrics of `out_dir` by cell name (empty when there are none or they are unreadable)."""
    path = out_dir / METRICS_FILE
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except ValueError:
        data = {}
    return data


def cached(cache: dict[str, Any], name: str, key: str, compute: Callable[[], Any]) -> Any:
    """The metrics of cell `name` under `key`: cached, or computed now and stored in `cache`."""
    entry = cache.get(name)
    if entry is None or entry.get("key") != key:
        entry = cache[name] = {"key": key, "value": compute()}
    return entry["value"]


def metric_key(cells: TranscriptCache, name: str, embedder: str) -> str:
    """What a cell's metrics depend on: metric version, embedder, the cell's fingerprint and finish time."""
    record = cells.record(name)
    return f"{METRIC_VERSION}:{embedder}:{record.fingerprint if record else ''}:{record.finished if record else ''}"


def write_metric_cache(folder: Path, cache: dict[str, Any]) -> None:
    """Replace `folder`'s metrics.json with `cache` (atomically: written aside, then renamed)."""
    path = folder / METRICS_FILE
    temporary = path.with_suffix(f".json.{os.getpid()}.tmp")  # two processes may finish at once
    temporary.write_text(json.dumps(cache, default=json_default), encoding="utf-8")
    temporary.replace(path)


def json_default(value: Any) -> Any:
    """JSON for what `json.dumps` cannot write: numpy scalars as Python numbers, else the `str`."""
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
