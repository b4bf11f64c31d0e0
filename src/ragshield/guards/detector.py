"""The `Detector` contract every calibrated guard follows (scikit-learn style).

* the constructor only stores parameters (readable as attributes of the same names);
* `score(item) -> float` is the raw score, higher = more suspicious;
* `fit(benign, target_fpr)` sets the fitted attributes, always including `threshold_`, chosen
  by `ragshield.calibration` so that at most `target_fpr` of the benign items are flagged;
* `check(retrieval) -> Verdict` blocks when `score >= threshold_`;
* before `fit`, a detector either has a documented default threshold (`default_threshold`:
  RAG-CT's paper tau, the intent model's shipped operating point) or raises `NotFittedError`
  naming the fix;
* `save(path)` / `load(path)` write and read JSON: parameters plus fitted attributes, with
  numpy arrays as nested lists; nothing is ever unpickled.

`FORMAT` names the file format; a file of another format is refused with a clear error.
"""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from ragshield.errors import ConfigError, NotFittedError

D = TypeVar("D", bound="Detector")
_ARRAY = "__ndarray__"


def to_json_value(value: Any) -> Any:
    """`value` with numpy arrays and scalars (also inside lists, tuples and dicts) made JSON-safe."""
    if isinstance(value, np.ndarray):
        return {_ARRAY: value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(key): to_json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # JSON has no inf / nan; read back by from_json_value
    return value


def from_json_value(value: Any) -> Any:
    """The inverse of `to_json_value` (arrays come back as numpy arrays, lists stay lists)."""
    if isinstance(value, dict):
        if _ARRAY in value:
            return np.asarray(value[_ARRAY], dtype=value.get("dtype", "float64"))
        return {key: from_json_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_json_value(item) for item in value]
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value


class Detector:
    """Base class of the calibrated guards; see the module docstring for the contract.

    Subclasses set `FORMAT`, implement `score` and `fit`, and name their fitted attributes in
    `FITTED`; attributes that need more than JSON values override `_fitted_state` /
    `_restore_fitted`.
    """

    FORMAT: ClassVar[str] = "ragshield.detector/1"
    FITTED: ClassVar[tuple[str, ...]] = ("threshold_", "n_fit_", "target_fpr_")
    name: str

    # -- the fitted state ------------------------------------------------------------------

    @property
    def fitted(self) -> bool:
        """True once `fit` (or `load` of a fitted file) set `threshold_`."""
        return hasattr(self, "threshold_")

    @property
    def default_threshold(self) -> float | None:
        """The threshold used before `fit` (None: the detector must be fitted first)."""
        return None

    @property
    def active_threshold(self) -> float:
        """`threshold_` when fitted, else the documented default.

        Raises:
            NotFittedError: not fitted and no default threshold.
        """
        if self.fitted:
            return float(self.threshold_)  # type: ignore[attr-defined]
        default = self.default_threshold
        if default is None:
            self.require_fitted()
        return float(default)  # type: ignore[arg-type]

    def require_fitted(self, fit_call: str = "fit(benign)") -> None:
        """Raise `NotFittedError` unless fitted, naming how to fit."""
        if not self.fitted:
            raise NotFittedError(
                f"{type(self).__name__} is not fitted; call {fit_call} or give the defense benign calibration "
                "queries (ragshield scan --fit BENIGN.jsonl, or `calibration:` in the config)"
            )

    # -- persistence -----------------------------------------------------------------------

    def get_params(self) -> dict[str, Any]:
        """The constructor's parameters (JSON-safe ones; runtime objects such as embedders are left out)."""
        params: dict[str, Any] = {}
        for name in inspect.signature(type(self)).parameters:
            value = getattr(self, name, None)
            if value is None or isinstance(value, str | int | float | bool | list | tuple | dict):
                params[name] = to_json_value(value)
        return params

    def _fitted_state(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FITTED if hasattr(self, name)}

    def _restore_fitted(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": self.FORMAT, "params": self.get_params()}
        if self.fitted:
            data["fitted"] = to_json_value(self._fitted_state())
        return data

    @classmethod
    def from_dict(cls: type[D], data: dict[str, Any], **runtime: Any) -> D:
        """A detector from `to_dict` output; `runtime` passes objects not stored (an embedder).

        Raises:
            ConfigError: another format, or parameters this detector does not take.
        """
        if not isinstance(data, dict) or data.get("format") != cls.FORMAT:
            found = data.get("format") if isinstance(data, dict) else None
            raise ConfigError(f"not a saved {cls.__name__} (format {found!r}, expected {cls.FORMAT!r})")
        params = from_json_value(dict(data.get("params", {})))
        try:
            detector = cls(**{**params, **runtime})
        except TypeError as error:
            raise ConfigError(f"saved {cls.__name__} has parameters this version does not take: {error}") from error
        fitted = data.get("fitted")
        if fitted:
            detector._restore_fitted(from_json_value(fitted))
        return detector

    def save(self, path: str | Path) -> None:
        """Write parameters and fitted attributes as JSON."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_dict(), indent=2), encoding="utf-8")

    @classmethod
    def load(cls: type[D], path: str | Path, **runtime: Any) -> D:
        """A detector written by `save`.

        Raises:
            ConfigError: the file is missing, not JSON, or not a saved detector of this kind.
        """
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ConfigError(f"cannot read a saved {cls.__name__} from {file}: {type(error).__name__}") from error
        return cls.from_dict(data, **runtime)
