"""RetrievalAnomaly (`rag-ct-2s`): a two-sided, benign-fitted detector on the top-k score profile.

RAG-CT (`ragshield.guards.rag_ct`) flags only *concentrated* retrievals (low entropy, large
margin). On real data that premise holds for one attack family (queries that quote a record,
RAG-Thief style) and fails for others: TGTB and PIDE queries mostly retrieve *flatter* and
*lower* profiles than benign questions, because their text (a command plus bait) matches no
record well. This detector therefore models what benign retrieval profiles look like and
flags queries whose profile is unlikely under that model, in either direction.

Features of the sorted top-k cosine scores s(1) >= ... >= s(k):

    top-1 s(1), k-th score s(k), margin s(1) - s(2), spread std(s),
    normalised entropy H^ of softmax(s / T) at the fitted temperature T

(for k = 2: top-1 and margin only, the rest being functions of them). The features are
standardised on benign traffic and modelled by a Gaussian mixture (components chosen by BIC)
or an isolation forest. `score` is the negative log-density under the mixture (or the
isolation forest's anomaly score): higher = more anomalous = more suspicious.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ragshield.calibration import threshold_at_fpr
from ragshield.errors import ConfigError
from ragshield.guards.base import Defense, threshold_verdict
from ragshield.guards.detector import Detector
from ragshield.guards.factory import DefenseContext
from ragshield.guards.rag_ct import ProfileLike, normalised_entropy, similarities_of, sorted_top_k
from ragshield.parameters import forwards
from ragshield.types import RetrievalResult, Verdict

Model = Literal["gmm", "iforest"]
FORMAT = "ragshield.rag-ct-2s/2"  # /1 held a pickle; it is no longer read
_GMM_STATE = ("weights_", "means_", "covariances_", "precisions_cholesky_", "precisions_")


def profile_feature_names(k: int) -> tuple[str, ...]:
    """Names of the features `profile_features` returns for top-k profiles."""
    if k == 2:
        return ("top1", "margin")
    return ("top1", "kth", "margin", "spread", "entropy")


def profile_features(similarities: Sequence[float] | np.ndarray, k: int, temperature: float) -> np.ndarray:
    """The feature vector of one retrieval's top-k scores (see the module docstring).

    Raises:
        InvalidSimilarityError: a score is NaN or infinite.
        ConfigError: fewer than k scores (the index holds fewer chunks than k).
    """
    top = sorted_top_k(similarities, k)
    if top.size < k:
        raise ConfigError(
            f"RetrievalAnomaly was fitted on top-{k} profiles but the retrieval has {top.size} hits; "
            "retrieve k chunks (and index at least k)"
        )
    margin = float(top[0] - top[1])
    if k == 2:
        return np.array([top[0], margin])
    return np.array([top[0], top[-1], margin, float(top.std()), normalised_entropy(top, temperature)])


class RetrievalAnomaly(Detector):
    """Two-sided retrieval-profile anomaly guard; `score` is higher = more anomalous.

    Args:
        k: profile length (the retrievals it checks must have at least k hits; k >= 2).
        model: `gmm` (Gaussian mixture, components 1..`max_components` by BIC; default) or
            `iforest` (scikit-learn IsolationForest).
        max_components: the largest mixture size BIC may choose.
        seed: random state of the model fit.
        name: the guard name in verdicts.

    Fitted attributes: `temperature_` (the median benign spread s(1) - s(k), so a typical
    benign profile spans about one logit), `mean_`, `scale_` (feature standardisation),
    `model_` (the fitted scikit-learn estimator), `threshold_`, `n_fit_`, `target_fpr_`.
    It has no threshold before `fit` (NotFittedError). `save` writes JSON (the mixture as its
    weights, means and covariances); an `iforest` model cannot be saved.
    """

    FORMAT = FORMAT
    FITTED = ("temperature_", "mean_", "scale_", "threshold_", "n_fit_", "target_fpr_")

    def __init__(
        self,
        *,
        k: int = 3,
        model: Model = "gmm",
        max_components: int = 4,
        seed: int = 0,
        name: str = "rag-ct-2s",
    ) -> None:
        if not isinstance(k, int) or k < 2:
            raise ConfigError(f"RetrievalAnomaly needs k >= 2, got {k!r}")
        if model not in ("gmm", "iforest"):
            raise ConfigError(f"model must be 'gmm' or 'iforest', got {model!r}")
        if max_components < 1:
            raise ConfigError("max_components must be >= 1")
        self.k = k
        self.model: Model = model
        self.max_components = max_components
        self.seed = seed
        self.name = name

    def _require_fitted(self) -> None:
        self.require_fitted("fit(benign_retrievals)")

    # -- features and scores ---------------------------------------------------------------

    def features(self, retrieval: ProfileLike) -> np.ndarray:
        """The raw (unstandardised) features of a retrieval at the fitted temperature."""
        self._require_fitted()
        return profile_features(similarities_of(retrieval), self.k, self.temperature_)

    def _score_rows(self, rows: np.ndarray) -> np.ndarray:
        standardised = (rows - self.mean_) / self.scale_
        # both estimators' score_samples are higher = more normal (log-density / -anomaly depth)
        return -np.asarray(self.model_.score_samples(standardised), dtype=np.float64)

    def score(self, retrieval: ProfileLike) -> float:
        """Anomaly score of one retrieval (negative log-density for `gmm`); higher = more suspicious."""
        return float(self._score_rows(self.features(retrieval)[None, :])[0])

    def score_many(self, retrievals: Sequence[ProfileLike]) -> np.ndarray:
        """Scores of many retrievals in one vectorised call."""
        self._require_fitted()
        rows = np.stack([profile_features(similarities_of(item), self.k, self.temperature_) for item in retrievals])
        return self._score_rows(rows)

    def check(self, retrieval: RetrievalResult) -> Verdict:
        """BLOCK when the profile's anomaly score >= `threshold_` (too peaked OR too flat/low)."""
        self._require_fitted()
        raw = self.features(retrieval)
        value = float(self._score_rows(raw[None, :])[0])
        names = profile_feature_names(self.k)
        # which way the profile deviates, so an operator can tell "too peaked" from "too flat"
        z = (raw - self.mean_) / self.scale_
        strongest = int(np.argmax(np.abs(z)))
        evidence: dict[str, Any] = {
            "features": {name: round(float(v), 6) for name, v in zip(names, raw, strict=True)},
            "z": {name: round(float(v), 3) for name, v in zip(names, z, strict=True)},
            "similarities": [round(v, 6) for v in retrieval.similarities[: self.k]],
            "model": self.model,
        }
        direction = "above" if z[strongest] > 0 else "below"
        return threshold_verdict(
            self.name,
            value,
            self.threshold_,
            flagged_reason=(
                f"retrieval profile unlike benign traffic ({names[strongest]} {direction} the benign range; "
                f"score {value:.2f} >= {self.threshold_:.2f})"
            ),
            passed_reason=f"retrieval profile typical of benign traffic (score {value:.2f} < {self.threshold_:.2f})",
            evidence=evidence,
        )

    # -- calibration -----------------------------------------------------------------------

    def fit(self, benign_retrievals: Sequence[ProfileLike], target_fpr: float = 0.01) -> RetrievalAnomaly:
        """Fit the one-class model on benign retrievals and set `threshold_` at `target_fpr`.

        Raises:
            ConfigError: fewer than 20 benign retrievals, or retrievals with fewer than k hits.
        """
        profiles = [sorted_top_k(similarities_of(item), self.k) for item in benign_retrievals]
        if len(profiles) < 20:
            raise ConfigError(f"RetrievalAnomaly.fit needs at least 20 benign retrievals, got {len(profiles)}")
        spreads = np.array([profile[0] - profile[-1] for profile in profiles])
        self.temperature_ = float(max(np.median(spreads), 1e-3))
        rows = np.stack([profile_features(profile, self.k, self.temperature_) for profile in profiles])
        self.mean_ = rows.mean(axis=0)
        scale = rows.std(axis=0)
        self.scale_ = np.where(scale > 1e-9, scale, 1.0)
        standardised = (rows - self.mean_) / self.scale_
        self.model_ = self._fit_model(standardised)
        self.n_fit_ = len(profiles)
        self.target_fpr_ = float(target_fpr)
        self.threshold_ = threshold_at_fpr(self._score_rows(rows), target_fpr)
        return self

    def _fit_model(self, standardised: np.ndarray) -> Any:
        from threadpoolctl import threadpool_limits

        # a few thousand 5-d rows: BLAS threads only add contention (measured 10x slower when cores are shared)
        with threadpool_limits(limits=1):
            return self._fit_estimator(standardised)

    def _fit_estimator(self, standardised: np.ndarray) -> Any:
        if self.model == "iforest":
            from sklearn.ensemble import IsolationForest

            return IsolationForest(n_estimators=200, random_state=self.seed).fit(standardised)
        from sklearn.mixture import GaussianMixture

        best: Any = None
        best_bic = math.inf
        # a full-covariance component over 5 features has ~20 parameters: ask for >= 100 points
        # per component so small calibration sets get one robust Gaussian, not an overfit mixture
        for components in range(1, min(self.max_components, max(1, len(standardised) // 100)) + 1):
            mixture = GaussianMixture(
                n_components=components, covariance_type="full", reg_covar=1e-4, random_state=self.seed, n_init=2
            ).fit(standardised)
            bic = float(mixture.bic(standardised))
            if bic < best_bic:
                best, best_bic = mixture, bic
        return best

    # -- persistence: JSON, the mixture as its arrays (never a pickle) ------------------------

    def _fitted_state(self) -> dict[str, Any]:
        if self.model != "gmm":
            raise ConfigError(
                "a RetrievalAnomaly with model='iforest' cannot be saved (a forest has no safe JSON form); "
                "use model='gmm' or fit it at start-up"
            )
        state = super()._fitted_state()
        mixture = self.model_
        state["model_"] = {name: getattr(mixture, name) for name in _GMM_STATE}
        return state

    def _restore_fitted(self, state: dict[str, Any]) -> None:
        from sklearn.mixture import GaussianMixture

        arrays = dict(state.pop("model_"))
        mixture = GaussianMixture(n_components=len(arrays["weights_"]), covariance_type="full", random_state=self.seed)
        for name in _GMM_STATE:
            setattr(mixture, name, np.asarray(arrays[name], dtype=np.float64))
        mixture.n_features_in_ = mixture.means_.shape[1]
        mixture.converged_ = True
        super()._restore_fitted(state)
        self.model_ = mixture


@forwards(RetrievalAnomaly)
def build_defense(context: DefenseContext, *, load: str | Path | None = None, **params: Any) -> Defense:
    """RAG-CT two-sided: a benign-fitted density model of the top-k retrieval-score profile.

    Needs benign `context.calibration` (fitted at `context.target_fpr`) or `load=PATH`.
    Other parameters are RetrievalAnomaly's options; `k` defaults to the system's k.
    """
    if load is not None:
        guard = RetrievalAnomaly.load(load)
    else:
        params.setdefault("k", max(2, context.k))
        guard = RetrievalAnomaly(**params)
        guard.fit(context.require_calibration("defense 'rag-ct-2s'"), context.target_fpr)
    return Defense(name=guard.name, query_guards=(guard,))
