"""The vector raise (issue 18, session 57, "forty-fifth round" of the model card): a logistic head on the
all-MiniLM-L6-v2 vector the `intent` guard's first embedding part already read, fitted on the read held-apart sets'
English rows (`benchmarks/intent_vector_raise.py`), that may raise a short English near miss the guard leaves.

It costs one dot product per query it reads (the vector is the retrieval's, or the one the guard embedded anyway),
so it can reach further under the line than the verifiers, whose every reading is a forward pass. Its line is set
so that it raises no question of the model's calibration split.

The file is JSON (`FORMAT`): the head's weights and bias in clear, its line and reach, and metadata (what it was
fitted on). Nothing is unpickled.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.guards.intent_arrays import read_json_file
from ragshield.guards.intent_model import IntentModel, IntentScore
from ragshield.guards.intent_opinion import SecondOpinion
from ragshield.guards.intent_veto_weights import band_floor

logger = logging.getLogger(__name__)
FORMAT = "ragshield.intent-vector-raise/1"
FILE_NAME = "intent_vector_raise.json"  # the packaged file, in `ragshield/data`
# what the second opinion may have said of a query the head reads: it left it under the line itself
READABLE_STATES = (SecondOpinion.NOT_ASKED, SecondOpinion.NOT_RAISED, SecondOpinion.UNAVAILABLE)
Router = Callable[[Sequence[str]], list[bool]]  # per text, whether it goes to the multilingual part


def shipped_vector_raise() -> Path:
    """The packaged file's path (shipped since session 57)."""
    return Path(__file__).resolve().parent.parent / "data" / FILE_NAME


def resolve_head(setting: bool | str | Path | None, model: IntentModel, raising: bool) -> VectorRaise | None:
    """The head a guard's `vector_raise` setting names: None (the default) is the packaged head when the guard raises
    near misses (`raising`), else none, and none (logged) for a model it was not fitted for (another embedder or
    dimension, or another `model_version`: its line was set on that model's calibration split); False is none; True
    (the packaged head) or a path must load and fit the model, or it is a `ConfigError`. A packaged file that cannot
    be read is a `ConfigError` too (a broken install), naming the way to run without it."""
    default = setting is None
    if setting is False or (default and not raising):
        return None
    path = shipped_vector_raise() if default or setting is True else Path(str(setting))
    try:
        head = VectorRaise.load(path)
    except ConfigError as exc:
        if setting is not None and setting is not True:
            raise
        raise ConfigError(f"{exc}; reinstall ragshield, or set intent: {{vector_raise: false}}") from exc
    fitted_for = head.meta.get("model_version")
    model_version = model.meta.get("model_version")
    mismatch = [
        f"{what} {theirs} (the model's {ours})"
        for what, theirs, ours in (
            ("embedder", head.embedder_name, model.embedder_name),
            ("dimension", head.dimension, model.dimension),
            ("model_version", fitted_for, model_version),
        )
        if theirs != ours and not (what == "model_version" and fitted_for is None)
    ]
    if not mismatch:
        return head
    why = f"intent vector raise {path.name} was fitted for {', '.join(mismatch)}"
    if not default:
        raise ConfigError(why)
    logger.info("%s: the guard runs without it", why)
    return None


@dataclass(frozen=True, eq=False)
class VectorRaise:
    """A raise read off the first embedding part's vector.

    `weights` (one per vector dimension) and `bias` give a logit (log-odds; higher = more like an extraction request);
    a query is raised when that logit reaches `line`. It reads only a query the guard leaves unflagged, that the
    router keeps in English, of at most `chars` characters, whose probability lies under the guard's line by at most
    `band` logits. `embedder_name` is the embedder whose vectors the head reads (the model's first part's)."""

    weights: np.ndarray
    bias: float
    line: float
    band: float
    chars: int
    embedder_name: str
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        weights = np.asarray(self.weights, dtype=np.float32)
        if weights.ndim != 1 or not weights.size or not np.all(np.isfinite(weights)):
            raise ConfigError("intent vector raise: weights must be a non-empty 1-d array of finite numbers")
        for name in ("bias", "line", "band"):
            if not np.isfinite(float(getattr(self, name))):
                raise ConfigError(f"intent vector raise: {name} must be a finite number")
        if self.band <= 0 or int(self.chars) < 1:
            raise ConfigError("intent vector raise: band must be positive logits and chars a positive count")
        object.__setattr__(self, "weights", weights)

    @property
    def dimension(self) -> int:
        return int(self.weights.size)

    def logits(self, vectors: np.ndarray) -> np.ndarray:
        """The head's logit per row of `vectors` (n x `dimension`); higher = more like a request."""
        matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if matrix.shape[1] != self.dimension:
            raise ConfigError(
                f"intent vector raise reads {self.dimension}-dimensional vectors, got {matrix.shape[1]}-dimensional"
            )
        return (matrix @ self.weights + np.float32(self.bias)).astype(np.float64)

    def reads(self, texts: Sequence[str], scores: Sequence[IntentScore], routes: Router, flag_at: float) -> list[int]:
        """The indices of the queries the head reads (see the class docstring); `routes` (the model's router) runs
        only on those within reach, so a batch of queries far from the line costs nothing more."""
        floor = band_floor(flag_at, self.band)
        near = [
            i
            for i, (text, score) in enumerate(zip(texts, scores, strict=True))
            if len(text) <= self.chars
            and floor <= score.probability < flag_at
            and score.second_opinion in READABLE_STATES
        ]
        if not near:
            return []
        routed = routes([texts[i] for i in near])
        return [i for i, other_language in zip(near, routed, strict=True) if not other_language]

    def apply(
        self,
        texts: Sequence[str],
        scores: Sequence[IntentScore],
        vectors: np.ndarray,
        routes: Router,
        flag_at: float,
    ) -> list[IntentScore]:
        """`scores` with each query the head reads and finds at or over its line set to `flag_at` (flagged, as a
        raised near miss: `SecondOpinion.VECTOR_RAISED`, its `veto_logit` the head's logit); `vectors`: the first
        embedding part's, one row per text."""
        out = list(scores)
        read = self.reads(texts, scores, routes, flag_at)
        if not read:
            return out
        for i, value in zip(read, self.logits(vectors[read]), strict=True):
            if value >= self.line:
                raised = SecondOpinion.VECTOR_RAISED
                out[i] = replace(out[i], probability=flag_at, second_opinion=raised, veto_logit=float(value))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "embedder": self.embedder_name,
            "weights": [round(float(w), 7) for w in self.weights],
            "bias": float(self.bias),
            "line": float(self.line),
            "band": float(self.band),
            "chars": int(self.chars),
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, data: Any, label: str = "data") -> VectorRaise:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(f"{label} is not an intent vector raise file (format {FORMAT!r})")
        try:
            return cls(
                weights=np.asarray(data["weights"], dtype=np.float32),
                bias=float(data["bias"]),
                line=float(data["line"]),
                band=float(data["band"]),
                chars=int(data["chars"]),
                embedder_name=str(data["embedder"]),
                meta=dict(data.get("meta") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{label}: broken intent vector raise file ({exc})") from exc

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> VectorRaise:
        """Read a file written by `save`; a missing or broken file is a `ConfigError` naming it."""
        return cls.from_dict(read_json_file(path, "intent vector raise"), str(path))
