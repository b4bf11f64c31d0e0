"""The learned extraction-intent model behind the `intent` guard (weights shipped as `.npz`).

Three linear parts, each cheap at query time:

* **embedding part**: logistic regression on the sentence embedding of the whole query, made
  with the RAG system's own embedder (all-MiniLM-L6-v2 for the shipped weights). The retriever
  already computed that vector (`RetrievalResult.query_vector`), so this part costs one dot
  product;
* **lexical part**: logistic regression on hashed word and character n-grams of a normalised
  text (lower case, accents stripped, leetspeak digits read as letters, spaced-out letters
  joined; CJK text as character 1-3-grams). It is applied to the whole query, each sentence
  and each clause, and the LARGEST logit is kept, so a command padded behind a benign
  question is still seen on its own. It is trained on whole extraction requests against
  benign questions AND their sentences and clauses, so benign fragments stay low;
* **stacker**: logistic regression on (embedding logit, largest lexical logit, whole-text
  lexical logit), fitted on out-of-fold logits, which gives calibrated probabilities.

    probability = sigmoid(stacker)       in [0, 1]; higher = more likely an extraction request

Features are hashed with CRC-32 (stable across processes and platforms), so the weights are
plain arrays: saved with `numpy.savez_compressed` and read with `allow_pickle=False`.
"""

from __future__ import annotations

import io
import json
import math
import re
import unicodedata
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import ConfigError

FORMAT = "ragshield.intent-model/1"
MODEL_RESOURCE = "intent_model.npz"
N_FEATURES = 2**18

_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
# NFKC turns full-width CJK punctuation into ASCII, which CJK text follows without a space
_SENTENCES = re.compile(rf"(?<=[.!?])\s+|(?<=[.!?。])(?=[{_CJK_CLASS}])|\n+")
_CLAUSES = re.compile(rf"\s*[,;:]\s+|[,;:、](?=[{_CJK_CLASS}])")
_TOKENS = re.compile(r"\w+")
_SPACED = re.compile(r"\b(?:\w ){2,}\w\b")
_CJK = re.compile(f"[{_CJK_CLASS}]")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_HAS_LETTER = re.compile(r"[^\W\d_]")
_MIN_TOKENS = 3


def normalise(text: str) -> str:
    """The text the lexical part reads: NFKC, lower case, accents stripped, leetspeak digits
    inside words read as letters ("r3p34t" -> "repeat"), spaced-out letters joined."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = re.sub(r"[\w@$]+", lambda m: m.group(0).translate(_LEET) if _is_leet(m.group(0)) else m.group(0), text)
    text = _SPACED.sub(lambda m: m.group(0).replace(" ", ""), text)
    return " ".join(text.split())


def _is_leet(token: str) -> bool:
    # only words that mix letters with digits or @/$: plain numbers (doses, dates) stay numbers
    return bool(_HAS_LETTER.search(token)) and any(c in "013457@$" for c in token)


def segment_texts(text: str) -> list[list[str]]:
    """The query's sentences, each as its list of clauses (normalised text)."""
    sentences = []
    for sentence in _SENTENCES.split(normalise(text)):
        clauses = [c.strip() for c in _CLAUSES.split(sentence) if c and c.strip()]
        if clauses:
            sentences.append(clauses)
    return sentences or [[""]]


def _features(clause: str) -> list[str]:
    out: list[str] = []
    tokens = _TOKENS.findall(clause)
    previous = ""
    for token in tokens:
        if _CJK.search(token):
            chars = token
            out.extend(f"c:{chars[i : i + n]}" for n in (1, 2, 3) for i in range(len(chars) - n + 1))
            previous = ""
            continue
        out.append(f"w:{token}")
        if previous:
            out.append(f"b:{previous} {token}")
        previous = token
        padded = f"<{token}>"
        out.extend(f"g:{padded[i : i + n]}" for n in (3, 4, 5) for i in range(len(padded) - n + 1))
    return out


def _hashes(clause: str) -> np.ndarray:
    return np.fromiter((zlib.crc32(f.encode("utf-8")) & (N_FEATURES - 1) for f in _features(clause)), dtype=np.int64)


def _size(clause: str) -> int:
    tokens = _TOKENS.findall(clause)
    cjk = sum(len(_CJK.findall(t)) for t in tokens)
    return len(tokens) + cjk // 2


@dataclass(frozen=True, slots=True)
class Segments:
    """Hashed feature indices of a query's scored segments: index 0 is the whole text, then
    the sentences and clauses long enough to carry a command on their own."""

    indices: tuple[np.ndarray, ...]


def segments_of(text: str, *, max_segments: int = 48) -> Segments:
    """Feature indices of the whole text, its sentences and its clauses (each hashed once)."""
    sentences = segment_texts(text)
    clause_hashes = [[_hashes(c) for c in clauses] for clauses in sentences]
    sentence_hashes = [np.concatenate(parts) if parts else np.empty(0, np.int64) for parts in clause_hashes]
    whole = np.concatenate(sentence_hashes) if sentence_hashes else np.empty(0, np.int64)
    pieces: list[np.ndarray] = [whole]
    for clauses, hashed, sentence in zip(sentences, clause_hashes, sentence_hashes, strict=True):
        if len(sentences) > 1 and _size(" ".join(clauses)) >= _MIN_TOKENS:
            pieces.append(sentence)
        if len(clauses) > 1:
            pieces.extend(h for c, h in zip(clauses, hashed, strict=True) if _size(c) >= _MIN_TOKENS)
    return Segments(tuple(pieces[:max_segments]))


def _normed_dot(indices: np.ndarray, weights: np.ndarray) -> float:
    if indices.size == 0:
        return 0.0
    unique, counts = np.unique(indices, return_counts=True)
    return float(weights[unique] @ counts / math.sqrt(float(counts @ counts)))


@dataclass(frozen=True, slots=True)
class IntentScore:
    """One query's score and its parts (logits are log-odds; higher = more suspicious)."""

    probability: float
    embedding_logit: float
    lexical_logit: float
    whole_lexical_logit: float
    segment: int
    segments: int


def _sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, value))))


class IntentModel:
    """Weights of the three parts plus metadata (embedder, sizes, operating point).

    Use `IntentModel.load()` for the shipped model; `train_intent_model` builds new ones.
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
    ) -> None:
        self.embed_weights = np.asarray(embed_weights, dtype=np.float32)
        self.embed_bias = float(embed_bias)
        self.lexical_weights = np.asarray(lexical_weights, dtype=np.float32)
        self.lexical_bias = float(lexical_bias)
        self.stack_weights = np.asarray(stack_weights, dtype=np.float64)
        self.stack_bias = float(stack_bias)
        self.meta = dict(meta)
        if self.lexical_weights.shape != (N_FEATURES,) or self.stack_weights.shape != (3,):
            raise ConfigError("intent model weights have the wrong shape; retrain or reinstall ragshield")

    @property
    def embedder_name(self) -> str:
        """The embedder whose vectors the embedding part reads."""
        return str(self.meta.get("embedder", ""))

    @property
    def dimension(self) -> int:
        return int(self.embed_weights.shape[0])

    @property
    def threshold(self) -> float:
        """The shipped operating point: block when probability >= this value."""
        return float(self.meta["operating_point"]["threshold"])

    # -- scoring ----------------------------------------------------------------------------

    def lexical_logits(self, text: str) -> tuple[float, float, int, int]:
        """(largest segment logit, whole-text logit, index of the largest, number of segments)."""
        pieces = segments_of(text).indices
        logits = [self.lexical_bias + _normed_dot(p, self.lexical_weights) for p in pieces]
        best = int(np.argmax(logits))
        return logits[best], logits[0], best, len(pieces)

    def embedding_logits(self, vectors: np.ndarray) -> np.ndarray:
        matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if matrix.shape[1] != self.dimension:
            raise ConfigError(
                f"intent model expects {self.dimension}-dimensional vectors from {self.embedder_name!r}, "
                f"got {matrix.shape[1]}"
            )
        return matrix @ self.embed_weights + self.embed_bias

    def score(self, texts: Sequence[str], vectors: np.ndarray) -> list[IntentScore]:
        """Scores of queries given their texts and their embeddings (one row per text)."""
        embedding = self.embedding_logits(vectors) if len(texts) else np.empty(0)
        out = []
        for text, e in zip(texts, embedding, strict=True):
            best, whole, segment, count = self.lexical_logits(text)
            logit = self.stack_bias + float(self.stack_weights @ np.array([float(e), best, whole]))
            out.append(IntentScore(_sigmoid(logit), float(e), best, whole, segment, count))
        return out

    # -- persistence ------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write the weights and metadata to one `.npz` file (no pickle)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as handle:
            np.savez_compressed(
                handle,
                embed_weights=self.embed_weights,
                embed_bias=np.array(self.embed_bias),
                lexical_weights=self.lexical_weights,
                lexical_bias=np.array(self.lexical_bias),
                stack_weights=self.stack_weights,
                stack_bias=np.array(self.stack_bias),
                meta=np.array(json.dumps({**self.meta, "format": FORMAT}, sort_keys=True)),
            )

    @classmethod
    def load(cls, path: str | Path | None = None) -> IntentModel:
        """The shipped model (`path=None`) or one written by `save`.

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
            with np.load(io.BytesIO(raw), allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                    raise ConfigError(f"{label} is not a ragshield intent model")
                return cls(
                    embed_weights=data["embed_weights"],
                    embed_bias=float(data["embed_bias"]),
                    lexical_weights=data["lexical_weights"],
                    lexical_bias=float(data["lexical_bias"]),
                    stack_weights=data["stack_weights"],
                    stack_bias=float(data["stack_bias"]),
                    meta=meta,
                )
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
            raise ConfigError(f"cannot read an intent model from {label}: {type(error).__name__}: {error}") from error

    def with_operating_point(self, threshold: float, **details: Any) -> IntentModel:
        """The same weights with another operating point (what `ragshield calibrate` saves)."""
        meta = {**self.meta, "operating_point": {**details, "threshold": float(threshold)}}
        return IntentModel(
            embed_weights=self.embed_weights,
            embed_bias=self.embed_bias,
            lexical_weights=self.lexical_weights,
            lexical_bias=self.lexical_bias,
            stack_weights=self.stack_weights,
            stack_bias=self.stack_bias,
            meta=meta,
        )
