"""Numeric helpers of the `intent` model: log-odds and probabilities, its hidden layer and how its arrays are
written to JSON.

Arrays are stored as base64 of little-endian bytes (float32, or float16 for a hidden layer), so a
model file is plain JSON and nothing is unpickled.
"""

from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import ConfigError


def sigmoid(value: float) -> float:
    """Log-odds to a probability in [0, 1] (clamped at +-50, so it never overflows)."""
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, value))))


def logit(p: float) -> float:
    """A probability to log-odds (`sigmoid`'s inverse; p clamped to [1e-12, 1 - 1e-12], so 0 and 1 stay finite)."""
    p = min(max(p, 1e-12), 1.0 - 1e-12)
    return math.log(p / (1.0 - p))


def normed_dot(indices: np.ndarray, weights: np.ndarray) -> float:
    """The lexical part's logit before its bias: `weights` at the hashed feature `indices`, each counted as often as it
    occurs, over the L2 norm of those counts (0 for no features)."""
    if indices.size == 0:
        return 0.0
    unique, counts = np.unique(indices, return_counts=True)
    return float(weights[unique] @ counts / math.sqrt(float(counts @ counts)))


def input_width(weights: np.ndarray, hidden: np.ndarray | None) -> int:
    """The vector width a part reads: its weights' length, or its hidden layer's rows less the bias row."""
    return int(weights.shape[0] if hidden is None else hidden.shape[0] - 1)


def hidden_layer(vectors: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """ReLU units of a hidden layer `hidden` ((d + 1) x h, the last row the biases) on n x d vectors."""
    return np.maximum(vectors @ hidden[:-1] + hidden[-1], 0.0)


def part_logits(vectors: np.ndarray, weights: np.ndarray, bias: float, hidden: np.ndarray | None) -> np.ndarray:
    """An embedding part's logits (log-odds; higher = more like a request) on n x d vectors: its output
    weights and bias read the vectors, or with a hidden layer of h units those units, or (weights of
    d + h, the mean of a logistic fit and a hidden-layer fit, session 39) the vectors followed by the units."""
    if hidden is None:
        return vectors @ weights + bias
    units = hidden_layer(vectors, hidden)
    if weights.shape[0] == hidden.shape[1]:
        return units @ weights + bias
    width = hidden.shape[0] - 1
    return vectors @ weights[:width] + units @ weights[width:] + bias


def layer_fits(hidden: np.ndarray, weights: np.ndarray | None) -> bool:
    """Whether `hidden` ((d + 1) x h, d and h at least 1, finite) is a hidden layer the output `weights` can
    read: h of them (the units) or d + h (the vector and the units)."""
    if weights is None or hidden.ndim != 2 or min(hidden.shape[0] - 1, hidden.shape[1]) < 1:
        return False
    return bool(np.isfinite(hidden).all()) and weights.shape[0] in (
        hidden.shape[1],
        hidden.shape[0] - 1 + hidden.shape[1],
    )


def to_b64(array: np.ndarray) -> str:
    """`array`'s bytes, little-endian, as base64 text."""
    return base64.b64encode(np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()).decode("ascii")


def from_b64(text: str, dtype: str) -> np.ndarray:
    """The array `to_b64` wrote, as a flat writable array of `dtype` (such as "<f4").

    Raises:
        ValueError: the text is not base64 or its length does not fit `dtype`.
    """
    return np.frombuffer(base64.b64decode(text.encode("ascii"), validate=True), dtype=dtype).copy()


def hidden_from_b64(text: str, units: object) -> np.ndarray:
    """A hidden layer `to_b64` wrote as float16, shaped (d + 1) x `units`.

    Raises:
        ValueError: `units` is not a positive whole number or does not divide the array's length.
    """
    values = from_b64(text, "<f2")
    if isinstance(units, bool) or not isinstance(units, int) or units <= 0 or values.size % units:
        raise ValueError("a hidden layer's units do not fit its array")
    return values.reshape(-1, units)


def legacy_npz_fields(raw: bytes, label: str, format_name: str) -> dict[str, Any]:
    """The `IntentModel` fields of a model ragshield wrote as `.npz` before JSON (read with `allow_pickle=False`).

    Raises:
        ConfigError: the archive is not an intent model of `format_name`.
    """
    with np.load(io.BytesIO(raw), allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        if not isinstance(meta, dict) or meta.get("format") != format_name:
            raise ConfigError(f"{label} is not a ragshield intent model")
        arrays = {name: data[name] for name in ("embed_weights", "lexical_weights", "stack_weights")}
        biases = {name: float(data[name]) for name in ("embed_bias", "lexical_bias", "stack_bias")}
    return arrays | biases | {"meta": {**meta, "feature_version": int(meta.get("feature_version", 1))}}


def read_json_file(path: str | Path, what: str) -> Any:
    """The JSON in `path`; a missing, unreadable or broken file is a `ConfigError` naming `what` and the path."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {what} file {path}: {exc}") from exc
