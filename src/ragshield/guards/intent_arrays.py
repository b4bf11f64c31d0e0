"""Array helpers of the `intent` model: its hidden layer and how its arrays are written to JSON.

Arrays are stored as base64 of little-endian bytes (float32, or float16 for a hidden layer), so a
model file is plain JSON and nothing is unpickled.
"""

from __future__ import annotations

import base64

import numpy as np


def input_width(weights: np.ndarray, hidden: np.ndarray | None) -> int:
    """The vector width a part reads: its weights' length, or its hidden layer's rows less the bias row."""
    return int(weights.shape[0] if hidden is None else hidden.shape[0] - 1)


def hidden_layer(vectors: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """ReLU units of a hidden layer `hidden` ((d + 1) x h, the last row the biases) on n x d vectors."""
    return np.maximum(vectors @ hidden[:-1] + hidden[-1], 0.0)


def part_logits(vectors: np.ndarray, weights: np.ndarray, bias: float, hidden: np.ndarray | None) -> np.ndarray:
    """An embedding part's logits (log-odds; higher = more like a request) on n x d vectors: its logistic
    weights and bias, read from its hidden layer when it has one."""
    return (vectors if hidden is None else hidden_layer(vectors, hidden)) @ weights + bias


def to_b64(array: np.ndarray) -> str:
    """`array`'s bytes, little-endian, as base64 text."""
    return base64.b64encode(np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()).decode("ascii")


def from_b64(text: str, dtype: str) -> np.ndarray:
    """The array `to_b64` wrote, as a flat writable array of `dtype` (such as "<f4").

    Raises:
        ValueError: the text is not base64 or its length does not fit `dtype`.
    """
    return np.frombuffer(base64.b64decode(text.encode("ascii"), validate=True), dtype=dtype).copy()
