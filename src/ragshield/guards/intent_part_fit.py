"""Fitting one embedding part of the `intent` model: logistic regression on the sentence vector, a hidden
layer of ReLU units before it (session 38), or the mean of the two fits (session 39).

Used by `intent_training` for every fit of a part (out-of-fold, seen-language and final).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragshield.guards.intent_arrays import part_logits

# a hidden layer's fit (`hidden_units` > 0, session 38): L2 penalty and at most this many Adam epochs
# (deterministic, seed 0, no validation split; Adam also stops once the training loss stops improving;
# 60 read the development sets within a few requests of 300, at about a third of the time)
HIDDEN_ALPHA = 1e-2
HIDDEN_EPOCHS = 60


@dataclass(frozen=True)
class EmbeddingPart:
    """A fitted embedding part: output `weights` and `bias` reading the vector, or with `hidden` its
    hidden layer's units, or (weights of d + h) both (`intent_arrays.part_logits`)."""

    weights: np.ndarray
    bias: float
    hidden: np.ndarray | None = None

    def logits(self, vectors: np.ndarray) -> np.ndarray:
        """Log-odds (higher = more like a request) on n x d vectors."""
        return part_logits(vectors, self.weights, self.bias, self.hidden)


def balanced_weights(labels: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Per row, the weight LogisticRegression's `class_weight="balanced"` gives its class (n / (2 n_class)),
    times the row's own weight (None: 1): what a learner without class weights is fitted with."""
    positives = float(labels.sum())
    balance = np.where(labels == 1, labels.size / (2 * positives), labels.size / (2 * (labels.size - positives)))
    return balance * (1.0 if weights is None else weights)


def _fit_logistic(vectors: np.ndarray, labels: np.ndarray, c: float, weights: np.ndarray | None) -> EmbeddingPart:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000)
    model.fit(vectors, labels, sample_weight=weights)
    return EmbeddingPart(model.coef_[0].astype(np.float32), float(model.intercept_[0]))


def _fit_hidden(
    vectors: np.ndarray, labels: np.ndarray, weights: np.ndarray | None, units: int, alpha: float
) -> EmbeddingPart:
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    net = MLPClassifier((units,), alpha=alpha, max_iter=HIDDEN_EPOCHS, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a capped number of epochs, on purpose
        net.fit(vectors, labels, sample_weight=balanced_weights(labels, weights))
    hidden = np.vstack([net.coefs_[0], net.intercepts_[0]]).astype(np.float32)
    return EmbeddingPart(net.coefs_[1][:, 0].astype(np.float32), float(net.intercepts_[1][0]), hidden)


def fit_embedding(
    vectors: np.ndarray,
    labels: np.ndarray,
    c: float,
    weights: np.ndarray | None = None,
    hidden_units: int = 0,
    alpha: float = HIDDEN_ALPHA,
    blend: bool = False,
) -> EmbeddingPart:
    """One embedding part fitted on n x d `vectors` and their 0/1 `labels`, classes balanced, rows weighted
    by `weights` (None: 1).

    Without `hidden_units`: logistic regression (inverse L2 `c`). With them: a multi-layer perceptron with
    one layer of that many ReLU units (L2 penalty `alpha`, at most `HIDDEN_EPOCHS`, seed 0; `c` unused).
    With `blend` too: both fits, the part's logit their mean, stored as output weights that read the vector
    followed by the units (each fit's weights and bias halved), so it costs one product more than the layer.
    """
    if not hidden_units:
        return _fit_logistic(vectors, labels, c, weights)
    layer = _fit_hidden(vectors, labels, weights, hidden_units, alpha)
    if not blend:
        return layer
    linear = _fit_logistic(vectors, labels, c, weights)
    averaged = np.concatenate([linear.weights, layer.weights]) / 2
    return EmbeddingPart(averaged.astype(np.float32), (linear.bias + layer.bias) / 2, layer.hidden)
