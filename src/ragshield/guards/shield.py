"""QueryShield (`query-shield`): RAG-CT OR ExtractionIntent (OR RetrievalAnomaly), calibrated jointly.

Each detector sees a different side of an extraction query: RAG-CT and RetrievalAnomaly the
shape of its retrieval (one-sided and two-sided), ExtractionIntent its wording. The shield
blocks when ANY of them fires. Their thresholds are chosen together on the same benign
calibration queries (`ragshield.calibration.union_thresholds`) so that the
*union* meets the target false-positive rate, not each detector separately.

A detector whose threshold is fixed (`fixed_threshold`: the learned `intent` at its shipped
operating point) keeps it; the others share what is left of the false-positive budget on the
calibration queries. The two-sided RetrievalAnomaly (`rag-ct-2s`, a GMM) is OFF by default:
fitted on one benign source it flags off-topic benign questions (64.6% of SAGE questions when
fitted on GenMedGPT); add it with `components: [rag-ct, rag-ct-2s, intent]`.

The verdict `score` is the largest standardised exceedance over the component thresholds,
max_i (score_i - threshold_i) / scale_i, with scale_i the benign interquartile range of
detector i: higher = more suspicious, and the shield blocks when it is >= 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from ragshield.calibration import allowed_false_positives, threshold_at_count, union_thresholds
from ragshield.errors import ConfigError
from ragshield.guards.anomaly import RetrievalAnomaly
from ragshield.guards.base import Defense, threshold_verdict
from ragshield.guards.detector import Detector
from ragshield.guards.factory import DefenseContext
from ragshield.guards.intent import BankIntent, ExtractionIntent
from ragshield.guards.rag_ct import RagCT
from ragshield.parameters import check_parameters
from ragshield.rag.embedding import Embedder
from ragshield.types import RetrievalResult, Verdict

COMPONENTS: tuple[str, ...] = ("rag-ct", "rag-ct-2s", "intent")
DEFAULT_COMPONENTS: tuple[str, ...] = ("rag-ct", "intent")


# components whose `to_dict` holds their whole fitted state (BankIntent's bank vectors do not)
_SAVABLE: tuple[type[Detector], ...] = (RagCT, RetrievalAnomaly, ExtractionIntent)


class _Scorer(Protocol):
    name: str

    def fit(self, benign: Sequence[RetrievalResult], target_fpr: float = ...) -> Any: ...

    def score(self, retrieval: RetrievalResult) -> float: ...


class QueryShield(Detector):
    """The union of the query-time detectors; `score` >= 0 blocks (see the module docstring).

    Args:
        detectors: the component detectors (default: calibrated RagCT and the shipped
            ExtractionIntent built from `k` and `embedder`; RetrievalAnomaly only on request).
        k: retrieval profile length for the default retrieval detectors.
        embedder: the RAG system's embedder, for the default ExtractionIntent.
        name: the guard name in verdicts.

    Fitted attributes: `thresholds_` (per detector name), `scales_`, `calibration_fpr_` (the
    union's FPR on the calibration queries), `n_fit_`, `target_fpr_`. `save` / `load` write and
    read one JSON file with every component nested (no pickle); give `load` the embedder.
    """

    FORMAT = "ragshield.query-shield/1"
    FITTED = ("thresholds_", "scales_", "calibration_fpr_", "threshold_", "n_fit_", "target_fpr_")

    def __init__(
        self,
        *,
        detectors: Sequence[_Scorer] | None = None,
        k: int = 3,
        embedder: Embedder | None = None,
        name: str = "query-shield",
    ) -> None:
        if detectors is None:
            if embedder is None:
                raise ConfigError("QueryShield needs the RAG system's embedder for its ExtractionIntent part")
            defaults: tuple[_Scorer, ...] = (RagCT(k=k), ExtractionIntent(embedder=embedder))
            detectors = defaults
        names = [detector.name for detector in detectors]
        if not names or len(set(names)) != len(names):
            raise ConfigError(f"QueryShield needs detectors with distinct names, got {names}")
        self.detectors: tuple[_Scorer, ...] = tuple(detectors)
        self.k = k
        self.embedder = embedder
        self.name = name

    def _require_fitted(self) -> None:
        self.require_fitted("fit(benign_retrievals)")

    # -- persistence: the Detector contract (JSON, no pickle), components nested ---------------

    def get_params(self) -> dict[str, Any]:
        """`k` and `name` (the components are saved by `to_dict`, the embedder is given at load)."""
        return {"k": self.k, "name": self.name}

    def to_dict(self) -> dict[str, Any]:
        """Parameters, fitted joint thresholds and every component's own `to_dict`."""
        components = []
        for detector in self.detectors:
            if not isinstance(detector, _SAVABLE):
                raise ConfigError(
                    f"QueryShield cannot save component {detector.name!r} ({type(detector).__name__}); "
                    "refit the shield at start-up instead"
                )
            components.append(detector.to_dict())
        return {**super().to_dict(), "components": components}

    @classmethod
    def from_dict(cls, data: dict[str, Any], **runtime: Any) -> QueryShield:
        """A shield from `to_dict` output; `runtime` may give `embedder` (the system's, for intent).

        Raises:
            ConfigError: another format, or a component of a kind this version does not know.
        """
        if not isinstance(data, dict) or data.get("format") != cls.FORMAT:
            found = data.get("format") if isinstance(data, dict) else None
            raise ConfigError(f"not a saved QueryShield (format {found!r}, expected {cls.FORMAT!r})")
        kinds: dict[str, type[Detector]] = {kind.FORMAT: kind for kind in _SAVABLE}
        detectors: list[Any] = []
        for component in data.get("components") or []:
            kind = kinds.get(str(component.get("format")) if isinstance(component, dict) else "")
            if kind is None:
                raise ConfigError(f"saved QueryShield has a component of unknown format {component.get('format')!r}")
            extra = {"embedder": runtime["embedder"]} if kind is ExtractionIntent and "embedder" in runtime else {}
            detectors.append(kind.from_dict(component, **extra))
        return super().from_dict(data, detectors=detectors, **runtime)

    def score_matrix(self, retrievals: Sequence[RetrievalResult]) -> np.ndarray:
        """Raw component scores, one row per retrieval, one column per detector (in order)."""
        columns = []
        for detector in self.detectors:
            many = getattr(detector, "score_many", None)
            values = many(retrievals) if many is not None else [detector.score(r) for r in retrievals]
            columns.append(np.asarray(values, dtype=np.float64))
        return np.stack(columns, axis=1)

    def fit(self, benign_retrievals: Sequence[RetrievalResult], target_fpr: float = 0.01) -> QueryShield:
        """Fit every detector on the benign retrievals, then set joint thresholds so the union's
        FPR on them is at most `target_fpr`. Detectors with a fixed threshold keep it, and the
        others share the budget their false positives leave."""
        benign = list(benign_retrievals)
        fixed = [bool(getattr(detector, "fixed_threshold", False)) for detector in self.detectors]
        for detector, keep in zip(self.detectors, fixed, strict=True):
            if not keep:
                detector.fit(benign, target_fpr)
        matrix = self.score_matrix(benign)
        thresholds = _joint_thresholds(matrix, fixed, [self._own_threshold(d) for d in self.detectors], target_fpr)
        union_fpr = float(np.mean(np.any(matrix >= np.asarray(thresholds), axis=1)))
        quartiles = np.percentile(matrix, [25, 75], axis=0)
        spread = quartiles[1] - quartiles[0]
        fallback = matrix.std(axis=0)
        scales = np.where(spread > 1e-12, spread, np.where(fallback > 1e-12, fallback, 1.0))
        self.thresholds_ = {d.name: float(t) for d, t in zip(self.detectors, thresholds, strict=True)}
        self.scales_ = {d.name: float(s) for d, s in zip(self.detectors, scales, strict=True)}
        self.calibration_fpr_ = float(union_fpr)
        self.threshold_ = 0.0  # on `score`, the largest standardised exceedance
        self.n_fit_ = len(benign)
        self.target_fpr_ = float(target_fpr)
        return self

    @staticmethod
    def _own_threshold(detector: _Scorer) -> float | None:
        if not getattr(detector, "fixed_threshold", False):
            return None
        check = getattr(detector, "_require_threshold", None)
        # a fixed-threshold detector without `_require_threshold` carries its threshold as threshold_
        return float(check()) if check is not None else float(detector.threshold_)  # type: ignore[attr-defined]

    def exceedances(self, scores: np.ndarray) -> np.ndarray:
        """(score_i - threshold_i) / scale_i for a (n, d) matrix of component scores."""
        self._require_fitted()
        names = [d.name for d in self.detectors]
        thresholds = np.array([self.thresholds_[name] for name in names])
        scales = np.array([self.scales_[name] for name in names])
        return (np.atleast_2d(scores) - thresholds) / scales

    def score(self, retrieval: RetrievalResult) -> float:
        """The largest standardised exceedance; >= 0 means at least one detector fires."""
        return float(self.exceedances(self.score_matrix([retrieval]))[0].max())

    def check(self, retrieval: RetrievalResult) -> Verdict:
        """BLOCK when any component's score reaches its jointly calibrated threshold."""
        self._require_fitted()
        raw = self.score_matrix([retrieval])[0]
        exceed = self.exceedances(raw)[0]
        names = [d.name for d in self.detectors]
        fired = [name for name, value in zip(names, exceed, strict=True) if value >= 0]
        value = float(exceed.max())
        evidence: dict[str, Any] = {
            "components": {
                name: {"score": round(float(s), 6), "threshold": round(self.thresholds_[name], 6)}
                for name, s in zip(names, raw, strict=True)
            },
            "fired": fired,
            "similarities": [round(v, 6) for v in retrieval.similarities[: self.k]],
        }
        return threshold_verdict(
            self.name,
            value,
            0.0,
            flagged_reason=f"flagged by {', '.join(fired)}",
            passed_reason="no query-time detector fired",
            evidence=evidence,
        )


def _joint_thresholds(
    matrix: np.ndarray, fixed: Sequence[bool], own: Sequence[float | None], target_fpr: float
) -> list[float]:
    """Thresholds per column: fixed columns keep `own`; the rest are calibrated as a union on the
    benign rows the fixed detectors let through, with the budget they leave."""
    n = matrix.shape[0]
    thresholds: list[float] = [float(t) if keep and t is not None else 0.0 for keep, t in zip(fixed, own, strict=True)]
    free = [i for i, keep in enumerate(fixed) if not keep]
    if not free:
        return thresholds
    flagged = np.zeros(n, dtype=bool)
    for i, keep in enumerate(fixed):
        if keep:
            flagged |= matrix[:, i] >= thresholds[i]
    budget = allowed_false_positives(n, target_fpr) - int(flagged.sum())
    rest = matrix[~flagged][:, free]
    if budget <= 0 or rest.shape[0] == 0:
        # nothing left to spend: the free detectors flag no calibration query
        chosen = [threshold_at_count(rest[:, j] if rest.shape[0] else matrix[:, i], 0) for j, i in enumerate(free)]
    else:
        chosen, _ = union_thresholds(list(rest.T), min(0.999999, (budget + 1e-6) / rest.shape[0]))
    for i, value in zip(free, chosen, strict=True):
        thresholds[i] = float(value)
    return thresholds


def build_defense(
    context: DefenseContext,
    *,
    components: Sequence[str] = DEFAULT_COMPONENTS,
    rag_ct: Mapping[str, Any] | None = None,
    anomaly: Mapping[str, Any] | None = None,
    intent: Mapping[str, Any] | None = None,
) -> Defense:
    """Query shield: RAG-CT OR extraction intent (OR two-sided retrieval anomaly), jointly calibrated.

    Needs benign `context.calibration`; the union is calibrated at `context.target_fpr`, with
    the shipped intent threshold kept as it is. Parameters: `components` (a subset of rag-ct,
    rag-ct-2s, intent; default rag-ct + intent) and per-component options as `rag_ct`,
    `anomaly`, `intent` mappings.
    """
    components = tuple(components)
    unknown = sorted(set(components) - set(COMPONENTS))
    if unknown or not components:
        raise ConfigError(f"query-shield components must be among {', '.join(COMPONENTS)}; got {list(components)}")
    options = {"rag-ct": dict(rag_ct or {}), "rag-ct-2s": dict(anomaly or {}), "intent": dict(intent or {})}
    check_parameters(RagCT, options["rag-ct"], kind="query-shield part", name="rag_ct")
    check_parameters(RetrievalAnomaly, options["rag-ct-2s"], kind="query-shield part", name="anomaly")
    context.require_calibration("defense 'query-shield'")
    k = max(2, context.k)
    detectors: list[_Scorer] = []
    if "rag-ct" in components:
        detectors.append(RagCT(**{"k": k, **options["rag-ct"]}))
    if "rag-ct-2s" in components:
        detectors.append(RetrievalAnomaly(**{"k": k, "seed": context.seed, **options["rag-ct-2s"]}))
    if "intent" in components:
        if context.embedder is None:
            raise ConfigError("query-shield's intent part needs the RAG system's embedder (DefenseContext.embedder)")
        intent_options = dict(options["intent"])
        kind = BankIntent if intent_options.pop("method", "learned") == "bank" else ExtractionIntent
        check_parameters(kind, intent_options, kind="query-shield part", name="intent")
        detectors.append(kind(**{"embedder": context.embedder, **intent_options}))
    shield = QueryShield(detectors=detectors, k=k, embedder=context.embedder)
    shield.fit(context.calibration, context.target_fpr)
    return Defense(name=shield.name, query_guards=(shield,))
