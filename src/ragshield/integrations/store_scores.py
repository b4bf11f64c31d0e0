"""Vector-store scores converted to the cosine similarities ragshield's guards read.

RAG-CT and the other retrieval-distribution guards read cosine similarities (in [-1, 1],
higher = closer). Vector stores report many things instead: LangChain's FAISS returns squared
L2 distances by default, Chroma squared L2 (or 1 - cosine, or 1 - dot), a FAISS inner-product
index the dot product. Each is converted exactly for unit-length embeddings:

| metric | what the store returns | cosine |
|---|---|---|
| `cosine` | cosine similarity | s |
| `cosine_distance` | 1 - cosine | 1 - d |
| `l2_squared` | squared Euclidean distance (FAISS `IndexFlatL2`, Chroma `l2`) | 1 - d / 2 |
| `l2` | Euclidean distance | 1 - d^2 / 2 |
| `inner_product` | dot product (FAISS `IndexFlatIP`) | s |
| `inner_product_distance` | 1 - dot product (Chroma `ip`) | 1 - d |

`auto` reads the metric from the store where it says (`store_metric`) and raises otherwise,
so a wrong scale never reaches a guard silently. `check_similarities` then rejects results
that cannot be cosines of a top-k (outside [-1, 1], or growing with rank): the signs of a wrong
metric or of embeddings that are not unit length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any, Literal

from ragshield.errors import ConfigError

__all__ = ["METRICS", "Metric", "check_similarities", "resolve_metric", "store_metric", "to_cosine"]

Metric = Literal["cosine", "cosine_distance", "l2_squared", "l2", "inner_product", "inner_product_distance"]

METRICS: dict[str, Callable[[float], float]] = {
    "cosine": lambda s: s,
    "cosine_distance": lambda d: 1.0 - d,
    "l2_squared": lambda d: 1.0 - d / 2.0,
    "l2": lambda d: 1.0 - d * d / 2.0,
    "inner_product": lambda s: s,
    "inner_product_distance": lambda d: 1.0 - d,
}
# Chroma's `hnsw:space` names
_CHROMA = {"l2": "l2_squared", "cosine": "cosine_distance", "ip": "inner_product_distance"}
# rounding in float32 stores: a cosine of a unit vector with itself can read 1.0000001
_TOLERANCE = 1e-3


def to_cosine(score: float, metric: str) -> float:
    """The cosine similarity (higher = closer) that a store score under `metric` stands for.

    Raises:
        ConfigError: unknown metric.
    """
    try:
        return float(METRICS[metric](float(score)))
    except KeyError:
        raise ConfigError(f"unknown metric {metric!r}; one of {', '.join(METRICS)}") from None


def store_metric(store: Any) -> str | None:
    """The metric of a LangChain vector store when it says, else None.

    Known: langchain-core's `InMemoryVectorStore` (cosine), langchain-community's `FAISS`
    (its `distance_strategy`) and Chroma (its collection's `hnsw:space`).
    """
    kinds = {cls.__name__ for cls in type(store).__mro__}  # subclasses search the same way
    if "InMemoryVectorStore" in kinds:
        return "cosine"
    if "FAISS" in kinds and hasattr(store, "distance_strategy"):
        strategy = str(getattr(store.distance_strategy, "value", store.distance_strategy))
        # only MAX_INNER_PRODUCT builds an IndexFlatIP; every other strategy searches IndexFlatL2
        return "inner_product" if strategy == "MAX_INNER_PRODUCT" else "l2_squared"
    collection = getattr(store, "_collection", None)
    if "Chroma" in kinds and collection is not None:
        space = (getattr(collection, "metadata", None) or {}).get("hnsw:space", "l2")
        return _CHROMA.get(str(space))
    return None


def resolve_metric(metric: str, store: Any) -> str:
    """`metric`, or the store's own when `metric` is `auto`.

    Raises:
        ConfigError: `auto` and the store does not say, or an unknown metric.
    """
    if metric != "auto":
        to_cosine(0.0, metric)  # validates the name
        return metric
    found = store_metric(store)
    if found is None:
        raise ConfigError(
            f"cannot tell which metric {type(store).__name__} scores with; pass metric= one of {', '.join(METRICS)} "
            "(the guards need cosine similarities, and a distance read as a similarity inverts them)"
        )
    return found


def check_similarities(similarities: Sequence[float], metric: str) -> None:
    """Reject converted scores that cannot be the cosines of a ranked top-k.

    Args:
        similarities: converted scores in the store's rank order (best first).
        metric: the metric they were converted from (named in the error).

    Raises:
        ConfigError: a score outside [-1, 1] (embeddings not unit length, or the wrong metric),
            or scores that grow with rank (a distance read as a similarity).
    """
    for value in similarities:
        if not -1.0 - _TOLERANCE <= value <= 1.0 + _TOLERANCE:
            raise ConfigError(
                f"a retrieval score converted with metric {metric!r} is {value:.4f}, not a cosine in [-1, 1]: "
                "the metric is wrong or the embeddings are not unit length (normalise them in the store)"
            )
    for better, worse in pairwise(similarities):
        if worse > better + _TOLERANCE:
            raise ConfigError(
                f"retrieval scores converted with metric {metric!r} grow with rank ({better:.4f} then {worse:.4f}): "
                "the store probably returns a distance; pass the matching metric="
            )
