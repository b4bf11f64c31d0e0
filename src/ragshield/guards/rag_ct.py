"""RAG-CT: flag a query from the spread of its top-k retrieval scores, before any generation.

Lyu et al., "RAG-CT: Mitigating Privacy Risks on Retrieval-Augmented Generation Systems via
Scanning Prompt Distribution" (arXiv 2609.16095), section 3.2. For the top-k cosine scores
s(1) >= ... >= s(k) of a query's retrieval:

    p = softmax(s / T)                 (the paper: T = 1)
    H^ = H(p) / log k                  in [0, 1]; low = concentrated retrieval
    M = s(1) - s(2),  M^ = clip((M - lo) / (hi - lo), 0, 1)   (min-max normalised margin)
    A = alpha (1 - H^) + beta M^       higher = more suspicious
    flag when A >= tau

Unfitted, `RagCT()` is the paper-exact detector: k = 3, tau = 0.5, T = 1 and a margin range of
[0, 1] (cosine margins already lie there); alpha = beta = 0.5 is our documented choice, the
paper gives none. `fit(benign)` calibrates it on benign traffic: the margin range from the
benign margins, optionally the softmax temperature (cosine scores in [-1, 1] make the T = 1
softmax nearly uniform, so H^ barely moves), and the threshold at a target false-positive rate.

The premise (malicious queries concentrate on one record) holds only for some attack
families; `ragshield.guards.anomaly.RetrievalAnomaly` is the two-sided detector for the rest.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ragshield.calibration import threshold_at_fpr
from ragshield.errors import ConfigError, RagShieldError
from ragshield.guards.base import Defense, threshold_verdict
from ragshield.guards.detector import Detector
from ragshield.guards.factory import DefenseContext
from ragshield.parameters import forwards
from ragshield.scores import auroc
from ragshield.types import RetrievalResult, Verdict

Mode = Literal["combined", "entropy", "margin"]
MODES: tuple[str, ...] = ("combined", "entropy", "margin")
FORMAT = "ragshield.rag-ct/1"
#: temperatures `fit(..., fit_temperature=True)` tries (log-spaced, plus the paper's T = 1)
TEMPERATURE_GRID: tuple[float, ...] = tuple(float(t) for t in np.geomspace(0.002, 1.0, 28))

ProfileLike = RetrievalResult | Sequence[float] | np.ndarray


class InvalidSimilarityError(RagShieldError, ValueError):
    """A similarity score is NaN or infinite (check the embedder and index for corrupt vectors)."""


def sorted_top_k(similarities: Sequence[float] | np.ndarray, k: int) -> np.ndarray:
    """The `k` largest scores, best first (fewer when fewer are given).

    Raises:
        InvalidSimilarityError: a score is NaN or infinite.
    """
    scores = np.asarray(similarities, dtype=np.float64).ravel()
    if not np.all(np.isfinite(scores)):
        raise InvalidSimilarityError(
            "a similarity score is NaN or infinite; rebuild the index (ragshield index) or check the embedder"
        )
    return -np.sort(-scores)[:k]


def normalised_entropy(top: np.ndarray, temperature: float) -> float:
    """H(softmax(top / T)) / log m for m = len(top) >= 2 scores; 1 = uniform, 0 = one record."""
    logits = top / temperature
    logits = logits - logits.max()  # stable softmax
    weights = np.exp(logits)
    p = weights / weights.sum()
    nonzero = p[p > 0]
    return float(-(nonzero * np.log(nonzero)).sum() / math.log(top.size))


def similarities_of(item: ProfileLike) -> Sequence[float] | np.ndarray:
    """The similarity scores of a retrieval, or the sequence itself."""
    return item.similarities if isinstance(item, RetrievalResult) else item


class RagCT(Detector):
    """The RAG-CT query guard; `score` is A in [0, 1] (combined), higher = more suspicious.

    Args:
        k: top-k scores the profile uses (k >= 2). Retrievals with fewer hits use the hits they
            have (normalising the entropy by log of that count).
        alpha, beta: weights of concentration (1 - H^) and margin M^ (>= 0, not both 0).
        tau: the paper's threshold on A, used until `fit` sets `threshold_`.
        temperature: softmax temperature T (> 0); the paper uses 1.
        margin_range: (lo, hi) for the min-max normalisation of the raw margin s(1) - s(2).
        mode: `combined` (A), `entropy` (1 - H^ alone) or `margin` (M^ alone): the paper's
            Fig. 5(d) ablation; the weights apply only to `combined`.
        name: the guard name in verdicts.

    Fitted attributes (set by `fit`): `threshold_`, `margin_range_`, `temperature_`, `n_fit_`,
    `target_fpr_`. Before `fit` it runs paper-exact: threshold `tau`, temperature and margin range
    as given. Saved as JSON (`save` / `load`, format `ragshield.rag-ct/1`).
    """

    FORMAT = FORMAT
    FITTED = ("threshold_", "margin_range_", "temperature_", "n_fit_", "target_fpr_")

    def __init__(
        self,
        *,
        k: int = 3,
        alpha: float = 0.5,
        beta: float = 0.5,
        tau: float = 0.5,
        temperature: float = 1.0,
        margin_range: tuple[float, float] = (0.0, 1.0),
        mode: Mode = "combined",
        name: str = "rag-ct",
    ) -> None:
        if not isinstance(k, int) or k < 2:
            raise ConfigError(f"RagCT needs k >= 2 (entropy over one score is undefined), got k={k!r}")
        if alpha < 0 or beta < 0 or alpha + beta == 0:
            raise ConfigError(f"alpha and beta must be >= 0 and not both 0, got alpha={alpha}, beta={beta}")
        if not temperature > 0:
            raise ConfigError(f"temperature must be > 0, got {temperature}")
        low, high = margin_range
        if not high > low:
            raise ConfigError(f"margin_range must be (lo, hi) with hi > lo, got {margin_range}")
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.k = k
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.tau = float(tau)
        self.temperature = float(temperature)
        self.margin_range = (float(low), float(high))
        self.mode: Mode = mode
        self.name = name

    # -- effective parameters: fitted values when fitted, else the constructor's -------------

    @property
    def default_threshold(self) -> float:
        """The paper's tau, used until `fit` sets `threshold_`."""
        return self.tau

    @property
    def threshold(self) -> float:
        """The active threshold on `score`: `threshold_` when fitted, else `tau`."""
        return self.active_threshold

    def _temperature(self) -> float:
        return float(getattr(self, "temperature_", self.temperature))

    def _margin_range(self) -> tuple[float, float]:
        low, high = getattr(self, "margin_range_", self.margin_range)
        return float(low), float(high)

    # -- scoring ---------------------------------------------------------------------------

    def components(self, similarities: Sequence[float] | np.ndarray) -> dict[str, float]:
        """H^ (`entropy`), M^ (`margin`), the raw margin, A (`score`) and `k_used` for raw scores.

        Scores may come in any order; the top `k` are used. With fewer than two scores there is
        no spread to measure: entropy 1, margin 0 and score 0 (nothing is flagged).

        Raises:
            InvalidSimilarityError: a score is NaN or infinite.
        """
        top = sorted_top_k(similarities, self.k)
        if top.size < 2:
            return {"entropy": 1.0, "margin": 0.0, "raw_margin": 0.0, "score": 0.0, "k_used": float(top.size)}
        entropy = normalised_entropy(top, self._temperature())
        raw_margin = float(top[0] - top[1])
        low, high = self._margin_range()
        margin = float(np.clip((raw_margin - low) / (high - low), 0.0, 1.0))
        return {
            "entropy": entropy,
            "margin": margin,
            "raw_margin": raw_margin,
            "score": self._combine(entropy, margin),
            "k_used": float(top.size),
        }

    def _combine(self, entropy: float, margin: float) -> float:
        if self.mode == "entropy":
            return 1.0 - entropy
        if self.mode == "margin":
            return margin
        return self.alpha * (1.0 - entropy) + self.beta * margin

    def score_similarities(self, similarities: Sequence[float] | np.ndarray) -> float:
        """A for raw similarity scores (any order; the top k are kept). Higher = more suspicious."""
        return self.components(similarities)["score"]

    def score(self, retrieval: ProfileLike) -> float:
        """A for a retrieval (or a list of its similarity scores)."""
        return self.score_similarities(similarities_of(retrieval))

    def score_many(self, retrievals: Sequence[ProfileLike]) -> np.ndarray:
        """A for many retrievals; vectorised when every profile has at least k scores."""
        tops = [sorted_top_k(similarities_of(item), self.k) for item in retrievals]
        if not tops or any(top.size < self.k for top in tops):
            return np.array([self.score_similarities(top) for top in tops], dtype=np.float64)
        matrix = np.stack(tops)
        logits = matrix / self._temperature()
        logits -= logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        p = weights / weights.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            plogp = np.where(p > 0, p * np.log(p), 0.0)
        entropy = -plogp.sum(axis=1) / math.log(self.k)
        low, high = self._margin_range()
        margin = np.clip((matrix[:, 0] - matrix[:, 1] - low) / (high - low), 0.0, 1.0)
        if self.mode == "entropy":
            return 1.0 - entropy
        if self.mode == "margin":
            return margin
        return self.alpha * (1.0 - entropy) + self.beta * margin

    def check(self, retrieval: RetrievalResult) -> Verdict:
        """BLOCK when A >= the active threshold; evidence holds the numbers, never chunk text."""
        parts = self.components(retrieval.similarities)
        threshold = self.threshold
        evidence: dict[str, Any] = {
            "entropy": round(parts["entropy"], 6),
            "margin": round(parts["margin"], 6),
            "raw_margin": round(parts["raw_margin"], 6),
            "similarities": [round(value, 6) for value in retrieval.similarities[: self.k]],
            "mode": self.mode,
            "temperature": self._temperature(),
            "calibrated": self.fitted,
        }
        return threshold_verdict(
            self.name,
            parts["score"],
            threshold,
            flagged_reason=f"retrieval concentrated on one record (A={parts['score']:.3f} >= {threshold:.3f})",
            passed_reason=f"retrieval spread looks benign (A={parts['score']:.3f} < {threshold:.3f})",
            evidence=evidence,
        )

    # -- calibration -----------------------------------------------------------------------

    def fit(
        self,
        benign_retrievals: Sequence[ProfileLike],
        target_fpr: float = 0.01,
        *,
        fit_temperature: bool = False,
        labelled: tuple[Sequence[ProfileLike], Sequence[bool]] | None = None,
    ) -> RagCT:
        """Calibrate on benign traffic.

        Sets `margin_range_` to the (min, max) of the benign raw margins, `temperature_` (the
        constructor's T, or with `fit_temperature=True` the grid value with the best AUROC on
        `labelled`), and `threshold_` at `target_fpr` on the benign scores.

        Args:
            benign_retrievals: retrievals (or similarity lists) of benign queries.
            target_fpr: the false-positive rate the threshold aims for on benign traffic.
            fit_temperature: choose T on `labelled` (required then).
            labelled: (retrievals, is_attack labels) used only to choose T; keep it disjoint
                from any set you report results on.

        Raises:
            ConfigError: too few benign retrievals, or `fit_temperature` without `labelled`.
        """
        profiles = [np.asarray(similarities_of(item), dtype=np.float64) for item in benign_retrievals]
        profiles = [sorted_top_k(profile, self.k) for profile in profiles]
        usable = [profile for profile in profiles if profile.size >= 2]
        if len(usable) < 10:
            raise ConfigError(
                f"RagCT.fit needs at least 10 benign retrievals with >= 2 hits, got {len(usable)}; "
                "give more benign calibration queries"
            )
        margins = np.array([profile[0] - profile[1] for profile in usable])
        low, high = float(margins.min()), float(margins.max())
        self.margin_range_ = (low, high if high > low else low + 1e-6)
        self.temperature_ = self.temperature
        if fit_temperature:
            if labelled is None:
                raise ConfigError("fit_temperature=True needs labelled=(retrievals, is_attack) to choose T")
            self.temperature_ = self._best_temperature(*labelled)
        self.threshold_ = threshold_at_fpr(self.score_many(usable), target_fpr)
        self.n_fit_ = len(usable)
        self.target_fpr_ = float(target_fpr)
        return self

    def _best_temperature(self, retrievals: Sequence[ProfileLike], labels: Sequence[bool]) -> float:
        flags = np.asarray(labels, dtype=bool)
        if len(retrievals) != flags.size or flags.all() or not flags.any():
            raise ConfigError("labelled needs one label per retrieval and both attack and benign examples")
        best_t, best_auc = self.temperature, -1.0
        for temperature in (*TEMPERATURE_GRID, self.temperature):
            self.temperature_ = temperature
            scores = self.score_many(retrievals)
            value = auroc(scores[~flags], scores[flags])
            # ties keep the larger (closer to the paper's T = 1) temperature
            if value > best_auc + 1e-12 or (abs(value - best_auc) <= 1e-12 and temperature > best_t):
                best_t, best_auc = temperature, value
        return float(best_t)

    def _restore_fitted(self, state: dict[str, Any]) -> None:
        super()._restore_fitted(state)
        if hasattr(self, "margin_range_"):
            self.margin_range_ = (float(self.margin_range_[0]), float(self.margin_range_[1]))


@forwards(RagCT)
def build_defense(
    context: DefenseContext,
    *,
    load: str | Path | None = None,
    calibrate: bool = True,
    fit_temperature: bool = False,
    **params: Any,
) -> Defense:
    """RAG-CT (Lyu et al. 2026): entropy + margin of the top-k retrieval scores, before generation.

    Parameters are RagCT's keyword options plus `load` (a saved detector's path),
    `calibrate` (default True) and `fit_temperature` (needs
    `context.extras["labelled_calibration"] = (retrievals, is_attack)`). `k` defaults to the
    system's retrieval k. With benign `context.calibration` (and `calibrate`), the detector is
    fitted at `context.target_fpr`; otherwise it runs paper-exact.
    """
    if load is not None:
        guard = RagCT.load(load)
    else:
        params.setdefault("k", max(2, context.k))
        guard = RagCT(**params)
        if calibrate and context.calibration:
            labelled = context.extras.get("labelled_calibration")
            guard.fit(context.calibration, context.target_fpr, fit_temperature=fit_temperature, labelled=labelled)
    return Defense(name=guard.name, query_guards=(guard,))
