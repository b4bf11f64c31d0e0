"""Training the learned `intent` model (`IntentModel`) from labelled texts and their embeddings.

Used by `benchmarks/train_intent.py` (which builds the shipped weights) and by the
leave-one-style-out / leave-one-language-out evaluation in `benchmarks/query_detection.py`.
Labels: 1 = extraction request, 0 = benign question.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.guards import intent_part_fit
from ragshield.guards.intent_features import FEATURE_VERSION, N_FEATURES, segments_of
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_part_fit import HIDDEN_ALPHA, EmbeddingPart, fit_embedding

MULTI_SEGMENT_CLIP = 0.0  # log-odds; see `train_intent_model`'s multi_segment_floor


def _row(indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    unique, counts = np.unique(indices, return_counts=True)
    norm = math.sqrt(float(counts @ counts)) or 1.0
    return unique, counts / norm


def _lexical_rows(
    segments: Sequence[tuple[np.ndarray, ...]], labels: np.ndarray, weights: np.ndarray | None = None
) -> tuple[Any, np.ndarray, np.ndarray | None]:
    """Sparse rows: an extraction request contributes its whole text only (which segment holds
    the command is unknown); a benign question contributes its whole text AND every segment,
    because the model's largest segment logit must stay low on all of them. Each row carries
    its text's sample weight (None: all 1)."""
    from scipy.sparse import csr_matrix

    data, cols, ptr, y, w = [], [], [0], [], []
    for i, (pieces, label) in enumerate(zip(segments, labels, strict=True)):
        for piece in pieces[:1] if label == 1 else pieces:
            unique, values = _row(piece)
            cols.append(unique)
            data.append(values)
            ptr.append(ptr[-1] + unique.size)
            y.append(int(label))
            w.append(1.0 if weights is None else float(weights[i]))
    matrix = csr_matrix(
        (np.concatenate(data) if data else np.empty(0), np.concatenate(cols) if cols else np.empty(0, np.int64), ptr),
        shape=(len(y), N_FEATURES),
    )
    return matrix, np.asarray(y), None if weights is None else np.asarray(w)


def _fit_lexical(
    segments: Sequence[tuple[np.ndarray, ...]], labels: np.ndarray, c: float, weights: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    matrix, y, row_weights = _lexical_rows(segments, labels, weights)
    model = LogisticRegression(C=c, class_weight="balanced", solver="liblinear", max_iter=2000)
    model.fit(matrix, y, sample_weight=row_weights)
    return model.coef_[0].astype(np.float32), float(model.intercept_[0])


def _lexical_logits(pieces: tuple[np.ndarray, ...], weights: np.ndarray, bias: float) -> tuple[float, float]:
    logits = []
    for piece in pieces:
        unique, values = _row(piece)
        logits.append(bias + float(weights[unique] @ values) if unique.size else bias)
    return max(logits), logits[0]


def _fit_stacker(x: np.ndarray, y: np.ndarray, segment_floor: float | None) -> tuple[np.ndarray, float]:
    """Logistic regression (C=1) on (embedding logit, largest segment logit, whole-text logit);
    with `segment_floor`, a fit that puts less than that weight on the largest segment logit
    is redone with the weight held at the floor (the other two and the bias refitted), so a
    command in one sentence of a long benign text keeps the weight it had in the v3 stacker."""
    from scipy.optimize import minimize
    from sklearn.linear_model import LogisticRegression

    fitted = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
    weights, bias = fitted.coef_[0], float(fitted.intercept_[0])
    if segment_floor is None or weights[1] >= segment_floor:
        return weights, bias
    free = x[:, [0, 2]]
    offset = segment_floor * x[:, 1]
    sign = 2.0 * y - 1.0

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        # the same objective as sklearn's lbfgs: 0.5 |w|^2 + sum of log-losses, bias unpenalised
        margin = sign * (free @ theta[:2] + theta[2] + offset)
        slope = -sign * np.exp(-np.logaddexp(0.0, margin))
        gradient = np.append(free.T @ slope + theta[:2], slope.sum())
        return float(np.logaddexp(0.0, -margin).sum() + 0.5 * theta[:2] @ theta[:2]), gradient

    start = np.array([weights[0], weights[2], bias])
    theta = minimize(loss, start, jac=True, method="L-BFGS-B").x
    return np.array([theta[0], segment_floor, theta[1]]), float(theta[2])


def _take(weights: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if weights is None else weights[rows]


def fold_ids(labels: np.ndarray, groups: Sequence[str | None] | None, folds: int, seed: int) -> np.ndarray:
    """A fold per row: rows without a group stratified by label at random, rows that share a
    group (a language other than English) all in one fold, groups dealt round-robin in a
    seeded order. The out-of-fold logits of a grouped row then come from parts that never saw
    its language, which is what a query in an unseen language gets."""
    from sklearn.model_selection import StratifiedKFold

    out = np.full(labels.size, -1, dtype=np.int64)
    named = np.array([g is not None for g in groups]) if groups is not None else np.zeros(labels.size, dtype=bool)
    free = np.flatnonzero(~named)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (_, test) in enumerate(splitter.split(free, labels[free])):
        out[free[test]] = fold
    if groups is not None:
        names = sorted({g for g in groups if g is not None})
        np.random.default_rng(seed).shuffle(names)
        where = {name: i % folds for i, name in enumerate(names)}
        for i, group in enumerate(groups):
            if group is not None:
                out[i] = where[group]
    return out


@dataclass(frozen=True)
class _PartsData:
    """What the out-of-fold fits of the embedding and lexical parts read."""

    matrix: np.ndarray
    y: np.ndarray
    segments: list[tuple[np.ndarray, ...]]
    multi: np.ndarray | None
    has: np.ndarray
    routed: np.ndarray
    weights: np.ndarray | None
    c_embedding: float
    c_lexical: float
    c_multilingual: float | None = None
    hidden_units: int = 0
    multi_hidden_units: int = 0
    hidden_alpha: float = HIDDEN_ALPHA
    hidden_blend: bool = False

    @property
    def c_multi(self) -> float:
        return self.c_embedding if self.c_multilingual is None else self.c_multilingual

    def fit_part(self, rows: np.ndarray, *, multilingual: bool = False) -> EmbeddingPart:
        """The embedding part (with `multilingual`, the multilingual one) fitted on the texts `rows`."""
        if multilingual and self.multi is not None:
            vectors, c, units = self.multi, self.c_multi, self.multi_hidden_units
        else:
            vectors, c, units = self.matrix, self.c_embedding, self.hidden_units
        return fit_embedding(
            vectors[rows], self.y[rows], c, _take(self.weights, rows), units, self.hidden_alpha, self.hidden_blend
        )


def _out_of_fold(parts: _PartsData, fold: np.ndarray, folds: int) -> np.ndarray:
    """Per text, (embedding logit, largest segment logit, whole-text logit) from parts fitted
    without its fold; routed texts get the multilingual embedding part's logit."""
    stack_x = np.zeros((parts.y.size, 3))
    for k in range(folds):
        train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        embedding = parts.fit_part(train)
        lw, lb = _fit_lexical(
            [parts.segments[i] for i in train], parts.y[train], parts.c_lexical, _take(parts.weights, train)
        )
        stack_x[test, 0] = embedding.logits(parts.matrix[test])
        if parts.multi is not None:
            multi = parts.fit_part(train[parts.has[train]], multilingual=True)
            here = test[parts.routed[test]]
            stack_x[here, 0] = multi.logits(parts.multi[here])
        for i in test:
            stack_x[i, 1:] = _lexical_logits(parts.segments[i], lw, lb)
    return stack_x


def train_intent_model(
    texts: Sequence[str],
    labels: Sequence[int],
    vectors: np.ndarray,
    *,
    embedder: str,
    c_embedding: float = 1.0,
    c_lexical: float = 4.0,
    folds: int = 5,
    seed: int = 0,
    meta: dict[str, Any] | None = None,
    multilingual_vectors: np.ndarray | None = None,
    multilingual_embedder: str | None = None,
    groups: Sequence[str | None] | None = None,
    segment_floor: float | None = None,
    sample_weights: Sequence[float] | None = None,
    seen_language_rows: bool = False,
    multi_segment_floor: float | None = None,
    c_multilingual: float | None = None,
    hidden_units: int = 0,
    multi_hidden_units: int | None = None,
    hidden_alpha: float = HIDDEN_ALPHA,
    hidden_blend: bool = False,
) -> IntentModel:
    """Fit the embedding and lexical parts, and the stacker on their out-of-fold logits.

    Args:
        texts: training texts.
        labels: 1 for an extraction request, 0 for a benign question.
        vectors: the texts' embeddings by `embedder` (n x d, L2-normalised).
        embedder: the embedder's name, recorded so the guard reuses only matching vectors.
        c_embedding, c_lexical: inverse L2 regularisation of the two parts.
        c_multilingual: that of the multilingual embedding part (None: `c_embedding`).
        hidden_units: when > 0, the embedding part reads a hidden layer of that many ReLU units
            (`intent_part_fit.fit_embedding`, L2 penalty `hidden_alpha`; its c value then does not apply).
        multi_hidden_units: the same for the multilingual embedding part (None: `hidden_units`).
        hidden_blend: a part with a hidden layer reads the mean of its logit and that of the logistic
            fit (c value) on the same rows (session 39).
        folds: folds for the out-of-fold logits the stacker is fitted on.
        meta: extra metadata to record (sources, sizes).
        multilingual_vectors, multilingual_embedder: the texts' embeddings by a multilingual
            embedder (n x d'); when given, a second embedding part is fitted on them and the
            stacker reads its logit for the texts the router sends to it. A row of NaN leaves
            that text out of the multilingual part (routed texts must have a vector).
        groups: per text, its language when not English, else None (see `fold_ids`); with a
            multilingual part, the texts the router sends there get their own stacker.
        segment_floor: least weight of the (English) stacker on the largest segment logit
            (see `_fit_stacker`); None leaves the fit alone. The multilingual stacker has none.
        sample_weights: per text, its weight (> 0) in the embedding and lexical parts (a
            benign text's segments share it); None weighs every text 1. The stackers are
            fitted unweighted, so their calibration stays that of the training mixture.
        seen_language_rows: also fit the multilingual stacker on out-of-fold logits from folds
            that split every language (parts that saw the text's language), beside those from
            folds that held it out whole (with `groups`; model v7 on). Without them the stacker
            learns that the lexical part knows nothing of a routed text, and a command in a
            trained language padded behind a benign question is read by the diluted embedding
            alone. Costs a second round of out-of-fold fits.
        multi_segment_floor: when given, the multilingual stacker reads the largest segment
            logit clipped from below at `MULTI_SEGMENT_CLIP` (0: a segment the lexical part
            finds command-like raises suspicion; below 0 it says nothing, since for a language
            the lexical part never saw it is about its intercept for any text) and puts at
            least this weight on it (as `segment_floor` does for the English stacker).

    Returns:
        An `IntentModel` with a placeholder operating point of 0.5 (set the real one with
        `with_operating_point`).

    Raises:
        ConfigError: mismatched lengths or a single class.
    """
    from sklearn.linear_model import LogisticRegression

    y = np.asarray(labels, dtype=np.int64)
    matrix = np.asarray(vectors, dtype=np.float32)
    if not len(texts) == y.size == matrix.shape[0]:
        raise ConfigError("texts, labels and vectors must have the same length")
    if set(np.unique(y).tolist()) != {0, 1}:
        raise ConfigError("training needs both extraction requests (1) and benign questions (0)")
    multi = None if multilingual_vectors is None else np.asarray(multilingual_vectors, dtype=np.float32)
    if multi is not None and multi.shape[0] != y.size:
        raise ConfigError("multilingual vectors must have one row per text")
    if groups is not None and len(groups) != y.size:
        raise ConfigError("groups must have one entry per text")
    whole = (hidden_units, *([] if multi_hidden_units is None else [multi_hidden_units]))
    if not all(isinstance(units, int) and not isinstance(units, bool) and units >= 0 for units in whole):
        raise ConfigError("hidden_units and multi_hidden_units must be whole numbers >= 0 (0: no hidden layer)")
    if not hidden_alpha > 0:
        raise ConfigError("hidden_alpha (the hidden layer's L2 penalty) must be positive")
    multi_units = hidden_units if multi_hidden_units is None else multi_hidden_units
    has_layer = bool(hidden_units or (multi is not None and multi_units))
    if hidden_blend and not has_layer:
        raise ConfigError("hidden_blend averages a hidden layer with the logistic fit: give a part hidden units too")
    sw = None if sample_weights is None else np.asarray(sample_weights, dtype=np.float64)
    if sw is not None and (sw.shape != (y.size,) or not (sw > 0).all()):
        raise ConfigError("sample_weights must have one positive weight per text")
    routed = np.zeros(y.size, dtype=bool)
    has = np.zeros(y.size, dtype=bool)
    if multi is not None:
        from ragshield.guards.intent_languages import needs_multilingual

        routed = np.array([needs_multilingual(t) for t in texts], dtype=bool)
        # rows without a multilingual vector (NaN) are left out of that part
        has = np.asarray(~np.isnan(multi).any(axis=1), dtype=bool)
        if not has[routed].all():
            raise ConfigError("every text the router sends to the multilingual part needs a multilingual vector")
    segments = [segments_of(text, version=FEATURE_VERSION).indices for text in texts]
    parts = _PartsData(
        matrix,
        y,
        segments,
        multi,
        has,
        routed,
        sw,
        c_embedding,
        c_lexical,
        c_multilingual,
        hidden_units,
        multi_units,
        hidden_alpha,
        hidden_blend,
    )
    stack_x = _out_of_fold(parts, fold_ids(y, groups, folds, seed), folds)
    # each stacker is fitted on the rows it will read: the multilingual one on routed texts
    own_stacker = multi is not None and len(set(y[routed].tolist())) == 2
    rest = ~routed if own_stacker and len(set(y[~routed].tolist())) == 2 else np.ones(y.size, dtype=bool)
    stack_w, stack_b = _fit_stacker(stack_x[rest], y[rest], segment_floor)
    multi_x, multi_y = stack_x[routed], y[routed]
    if own_stacker and seen_language_rows and groups is not None:
        # the grouped folds give each routed text the logits of parts that never saw its language
        # (a query in an unseen language); a query in a trained language gets parts that saw it,
        # whose segment logit is informative: ungrouped folds give those rows too
        seen = _out_of_fold(parts, fold_ids(y, None, folds, seed), folds)
        multi_x, multi_y = np.vstack([multi_x, seen[routed]]), np.concatenate([multi_y, y[routed]])
    multi_w: np.ndarray | None = None
    multi_b = 0.0
    if own_stacker and multi_segment_floor is not None:
        multi_x = np.column_stack([multi_x[:, 0], np.maximum(multi_x[:, 1], MULTI_SEGMENT_CLIP), multi_x[:, 2]])
        multi_w, multi_b = _fit_stacker(multi_x, multi_y, multi_segment_floor)
    elif own_stacker:
        fitted = LogisticRegression(C=1.0, max_iter=2000).fit(multi_x, multi_y)
        multi_w, multi_b = fitted.coef_[0], float(fitted.intercept_[0])
    embedding = parts.fit_part(np.arange(y.size))
    lw, lb = _fit_lexical(segments, y, c_lexical, sw)
    multi_part = None if multi is None else parts.fit_part(np.flatnonzero(has), multilingual=True)
    info = {
        "embedder": embedder,
        "feature_version": FEATURE_VERSION,
        **({"multilingual_embedder": multilingual_embedder} if multi is not None else {}),
        "n_train": int(y.size),
        "n_extraction": int(y.sum()),
        "n_benign": int(y.size - y.sum()),
        "c_embedding": c_embedding,
        "c_lexical": c_lexical,
        **({"c_multilingual": c_multilingual} if c_multilingual is not None else {}),
        **({"hidden_units": hidden_units} if hidden_units else {}),
        **({"multi_hidden_units": multi_units} if multi is not None and multi_units != hidden_units else {}),
        **(
            {"hidden_alpha": hidden_alpha, "hidden_epochs": intent_part_fit.HIDDEN_EPOCHS}
            | ({"hidden_blend": True} if hidden_blend else {})
            if has_layer
            else {}
        ),
        **({"segment_floor": segment_floor} if segment_floor is not None else {}),
        **({"seen_language_rows": True} if seen_language_rows else {}),
        **(
            {"multi_segment_floor": multi_segment_floor, "multi_segment_clip": MULTI_SEGMENT_CLIP}
            if multi_w is not None and multi_segment_floor is not None
            else {}
        ),
        "operating_point": {"threshold": 0.5, "note": "placeholder; not calibrated"},
        **(meta or {}),
    }
    return IntentModel(
        embed_weights=embedding.weights,
        embed_bias=embedding.bias,
        lexical_weights=lw,
        lexical_bias=lb,
        stack_weights=stack_w,
        stack_bias=stack_b,
        meta=info,
        multi_weights=None if multi_part is None else multi_part.weights,
        multi_bias=0.0 if multi_part is None else multi_part.bias,
        multi_stack_weights=multi_w,
        multi_stack_bias=multi_b,
        embed_hidden=embedding.hidden,
        multi_hidden=None if multi_part is None else multi_part.hidden,
    )
