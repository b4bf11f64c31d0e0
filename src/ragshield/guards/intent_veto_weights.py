"""The intent veto's weights file (`intent_veto`): one verifier's fine-tuned layers, head and line.

`.npz` read with `allow_pickle=False`: matrices as int8 with a float32 scale per row (a quarter of
float32; a verifier's logits move by about 0.05), vectors as float32, and a JSON header.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.guards.intent_arrays import logit, sigmoid

FORMAT = "ragshield.intent-veto/1"
# written by a file with `raise_confirm_tau` (session 43): a ragshield that does not know it refuses the file (its
# flags then stand, nothing is raised) rather than raise without the confirmation
FORMAT_CONFIRMED = "ragshield.intent-veto/2"
# written by a file with `raise_either_chars` (session 51): a ragshield that does not know it refuses the file rather
# than read queries of any length for the either raise (it would raise long texts, e-mails among them)
FORMAT_SHORT_EITHER = "ragshield.intent-veto/3"
# written by a file with `raise_either_reading` (session 52): a ragshield that does not know it refuses the file rather
# than read the either raise's band in pieces (twice the time, and more benign rows raised at the wider bands)
FORMAT_EITHER_READING = "ragshield.intent-veto/4"
FORMATS = (FORMAT, FORMAT_CONFIRMED, FORMAT_SHORT_EITHER, FORMAT_EITHER_READING)
ENCODERS = ("minilm", "e5")
READINGS = ("pieces", "whole")  # what a verifier reads of a flag (`intent_veto_reading.pieces_of`)


@dataclass(frozen=True)
class VetoWeights:
    """One verifier's fine-tuned parameters and its veto line.

    `layers`: the fine-tuned encoder layers' parameters by their torch names (float32 here; saved
    as int8 rows); `head_weight` / `head_bias`: the logistic head on the L2-normalised mean-pooled
    vector; `tau`: log-odds below which a read flag is let through; `max_length`: tokens read per
    piece; `model_version`: the intent model whose flags it was fitted for (it reads no other's);
    `reading`: "pieces" (the whole text, its sentences and clauses: the largest logit counts) or
    "whole" (the whole text and its second reading only); files without one read pieces.
    `raise_band` / `raise_tau` (both or neither; files without them raise nothing): a query the model
    leaves under its operating point by at most `raise_band` logits is read too, and flagged when the
    verifier's logit is at least `raise_tau` (`intent_veto.IntentVeto.apply`). `raise_reading`: what it reads
    of a near miss ("pieces" or "whole"; None, as in files before session 41: the flags' `reading`).
    `raise_confirm_tau` (None: no confirmation, as in files before session 43): a near miss this verifier would
    raise is read by the other lane's verifier too and raised only when that logit reaches this line as well.
    `raise_either_tau` (None: as in files before session 45): a near miss this verifier does not raise is read by
    the other lane's verifier too and raised when that logit reaches this line (one it cannot read is not raised);
    not with `raise_confirm_tau`. `raise_either_band` (None: `raise_band`, as in files before session 50; only with
    `raise_either_tau`; at least `raise_band`): how far under the line, in logits, the other verifier reads for that
    raise; this verifier still reads only its own `raise_band`. `raise_either_chars` (None: any length, as in files
    before session 51; only with `raise_either_tau`; a whole number over 0): the longest query, in characters (`len`
    of its text), the other verifier reads for that raise; a longer one is read only by this verifier.
    `raise_either_reading` (None: as the other verifier's file reads its own near misses, as in files before session
    52; only with `raise_either_tau`): what the other verifier reads of a near miss for that raise, "pieces" or
    "whole".
    `veto_over_point` (False in files before session 45): `tau` may sit above the model's operating point; a flag
    read under it is let through even when its logit is over the point's log-odds (`intent_veto.let_through`).
    """

    encoder: str
    tau: float
    max_length: int
    model_version: str
    layers: Mapping[str, np.ndarray]
    head_weight: np.ndarray
    head_bias: float
    meta: Mapping[str, Any] = field(default_factory=dict)
    reading: str = "pieces"
    raise_band: float | None = None
    raise_tau: float | None = None
    raise_reading: str | None = None
    raise_confirm_tau: float | None = None
    veto_over_point: bool = False
    raise_either_tau: float | None = None
    raise_either_band: float | None = None
    raise_either_chars: int | None = None
    raise_either_reading: str | None = None

    def __post_init__(self) -> None:
        if self.encoder not in ENCODERS:
            raise ConfigError(f"intent veto encoder must be one of {', '.join(ENCODERS)}, got {self.encoder!r}")
        if self.reading not in READINGS:
            raise ConfigError(f"intent veto reading must be one of {', '.join(READINGS)}, got {self.reading!r}")
        if not math.isfinite(self.tau) or self.max_length < 8:
            raise ConfigError(f"intent veto: tau must be finite and max_length >= 8 ({self.tau}, {self.max_length})")
        if self.raise_reading is not None and self.raise_reading not in READINGS:
            raise ConfigError(
                f"intent veto raise_reading must be one of {', '.join(READINGS)}, got {self.raise_reading!r}"
            )
        if (self.raise_band is None) != (self.raise_tau is None):
            raise ConfigError("intent veto: raise_band and raise_tau go together (both or neither)")
        if self.raise_reading is not None and self.raise_band is None:
            raise ConfigError("intent veto: raise_reading needs raise_band and raise_tau (a file that raises)")
        if self.raise_confirm_tau is not None and (
            self.raise_band is None or not math.isfinite(self.raise_confirm_tau)
        ):
            raise ConfigError("intent veto: raise_confirm_tau must be finite and needs raise_band and raise_tau")
        if self.raise_either_tau is not None and (
            self.raise_band is None or not math.isfinite(self.raise_either_tau) or self.raise_confirm_tau is not None
        ):
            raise ConfigError(
                "intent veto: raise_either_tau must be finite, needs raise_band and raise_tau, and excludes "
                "raise_confirm_tau (a raise on either verifier's reading, or on both, not the two at once)"
            )
        either_band = self.raise_either_band
        # never under raise_band: a ragshield before session 50 ignores the field and reads within raise_band, so a
        # file may only widen the reading (an older one then raises less, never more); a run-time view may narrow it
        if either_band is not None and (
            self.raise_either_tau is None
            or not math.isfinite(either_band)
            or either_band < (self.raise_band or math.inf)
        ):
            raise ConfigError(
                "intent veto: raise_either_band must be finite, at least raise_band, and needs raise_either_tau "
                f"({either_band})"
            )
        chars = self.raise_either_chars
        if chars is not None and (self.raise_either_tau is None or not whole_number(chars, least=1)):
            raise ConfigError(
                f"intent veto: raise_either_chars must be a whole number over 0 and needs raise_either_tau ({chars!r})"
            )
        how = self.raise_either_reading
        if how is not None and (self.raise_either_tau is None or not is_reading(how)):
            raise ConfigError(
                f"intent veto: raise_either_reading must be one of {', '.join(READINGS)} and needs raise_either_tau "
                f"({how!r})"
            )
        band, line = self.raise_band, self.raise_tau
        if band is not None and line is not None and not (math.isfinite(band) and band > 0 and math.isfinite(line)):
            raise ConfigError(f"intent veto: raise_band must be finite and > 0, raise_tau finite ({band}, {line})")

    @property
    def raises(self) -> bool:
        """Whether this verifier also reads near misses (`raise_band`, `raise_tau`)."""
        return self.raise_band is not None

    @property
    def near_miss_reading(self) -> str:
        """What the raise reads of a near miss: `raise_reading`, or the flags' `reading` when the file names none."""
        return self.raise_reading or self.reading

    def reading_for(self, near_miss: bool) -> str:
        """What this verifier reads of a query: a near miss as `near_miss_reading`, a flag as `reading`."""
        return self.near_miss_reading if near_miss else self.reading

    def with_raise(self, band: float, raise_tau: float, reading: str | None = None) -> VetoWeights:
        """These weights, reading near misses within `band` logits under the line (as `reading` says; None: as
        these weights already read them) and raising them at `raise_tau`."""
        return replace(
            self, raise_band=float(band), raise_tau=float(raise_tau), raise_reading=reading or self.raise_reading
        )

    def with_confirmation(self, confirm_tau: float | None) -> VetoWeights:
        """These weights, raising a near miss only when the other lane's verifier reads it at `confirm_tau` too
        (None: on this verifier's reading alone)."""
        return replace(self, raise_confirm_tau=None if confirm_tau is None else float(confirm_tau))

    def _format(self) -> str:
        """The oldest format that says all these weights do: a reader that cannot honour a field must refuse it."""
        if self.raise_either_reading is not None:
            return FORMAT_EITHER_READING
        if self.raise_either_chars is not None:
            return FORMAT_SHORT_EITHER
        return FORMAT if self.raise_confirm_tau is None else FORMAT_CONFIRMED

    def save(self, path: str | Path) -> None:
        arrays: dict[str, np.ndarray] = {"head_weight": np.asarray(self.head_weight, dtype=np.float32)}
        for i, value in enumerate(self.layers.values()):
            matrix = np.asarray(value, dtype=np.float32)
            if matrix.ndim == 2:  # int8 per row: a quarter of float32; logits move by about 0.05
                scale = np.maximum(np.abs(matrix).max(axis=1), 1e-12) / 127.0
                arrays[f"q{i}"] = np.round(matrix / scale[:, None]).astype(np.int8)
                arrays[f"s{i}"] = scale.astype(np.float32)
            else:
                arrays[f"f{i}"] = matrix
        header = {
            "format": self._format(),
            "encoder": self.encoder,
            "tau": self.tau,
            "reading": self.reading,
            "max_length": self.max_length,
            "model_version": self.model_version,
            "head_bias": self.head_bias,
            "names": list(self.layers),
            "meta": dict(self.meta),
        }
        if self.veto_over_point:  # only when set: an older ragshield ignores it and caps the line (more flags stand)
            header["veto_over_point"] = True
        if self.raises:
            header |= {"raise_band": self.raise_band, "raise_tau": self.raise_tau}
            if self.raise_reading is not None:
                header["raise_reading"] = self.raise_reading
            if self.raise_confirm_tau is not None:
                header["raise_confirm_tau"] = self.raise_confirm_tau
            if self.raise_either_tau is not None:  # an older ragshield ignores it: it raises less, never more
                header["raise_either_tau"] = self.raise_either_tau
            if self.raise_either_band is not None:  # an older ragshield reads the either line within raise_band only
                header["raise_either_band"] = self.raise_either_band
            if self.raise_either_chars is not None:  # only in FORMAT_SHORT_EITHER, which an older ragshield refuses
                header["raise_either_chars"] = self.raise_either_chars
            if self.raise_either_reading is not None:  # only in FORMAT_EITHER_READING, which an older one refuses
                header["raise_either_reading"] = self.raise_either_reading
        arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        with open(path, "wb") as handle:
            np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str | Path) -> VetoWeights:
        """Raises ConfigError for a file that is missing, broken or not an intent veto."""
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(bytes(data["header"]).decode())
                if header.get("format") not in FORMATS:
                    raise ConfigError(f"{path} is not a ragshield intent veto")
                layers = {}
                for i, name in enumerate(header["names"]):
                    if f"q{i}" in data:
                        layers[name] = data[f"q{i}"].astype(np.float32) * data[f"s{i}"][:, None]
                    else:
                        layers[name] = data[f"f{i}"]
                return cls(
                    encoder=header["encoder"],
                    tau=float(header["tau"]),
                    max_length=int(header["max_length"]),
                    model_version=str(header["model_version"]),
                    layers=layers,
                    head_weight=data["head_weight"],
                    head_bias=float(header["head_bias"]),
                    meta=header.get("meta", {}),
                    reading=str(header.get("reading", "pieces")),
                    raise_band=_optional_float(header.get("raise_band")),
                    raise_tau=_optional_float(header.get("raise_tau")),
                    raise_reading=header.get("raise_reading"),
                    raise_confirm_tau=_optional_float(header.get("raise_confirm_tau")),
                    veto_over_point=_flag(header.get("veto_over_point", False)),
                    raise_either_tau=_optional_float(header.get("raise_either_tau")),
                    raise_either_band=_optional_float(header.get("raise_either_band")),
                    raise_either_chars=_optional_count(header.get("raise_either_chars")),
                    raise_either_reading=header.get("raise_either_reading"),
                )
        except ConfigError:
            raise
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as error:
            raise ConfigError(f"cannot read intent veto {path}: {type(error).__name__}: {error}") from error


def _optional_float(value: Any) -> float | None:
    """A header's optional line: None or a number (a JSON `true` would read as 1.0, a low line: refused)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"a line must be a number, got {value!r}")
    return float(value)


def _optional_count(value: Any) -> int | None:
    """A header's optional count: None or a whole number (a JSON 120.0 or `true` is refused, not rounded)."""
    if value is None:
        return None
    if not whole_number(value):
        raise ValueError(f"a count must be a whole number, got {value!r}")
    return int(value)


def whole_number(value: Any, least: int | None = None) -> bool:
    """Whether `value` is an int (not a bool, not a float such as 120.0), at least `least` when given: the one check
    every setting counted in characters goes through (file header, view, guard option)."""
    return isinstance(value, int) and not isinstance(value, bool) and (least is None or value >= least)


def is_reading(value: Any) -> bool:
    """Whether `value` names a reading ("pieces" or "whole"): the one check every reading setting goes through (file
    header, view, guard option)."""
    return isinstance(value, str) and value in READINGS


def _flag(value: Any) -> bool:
    """A header's switch: JSON true or false only (a misspelt "yes" would otherwise read as off without a word)."""
    if not isinstance(value, bool):
        raise ValueError(f"a switch must be true or false, got {value!r}")
    return value


def let_through(verifier_logit: float, tau: float, flag_at: float, over_point: bool = False) -> float | None:
    """The probability a flag (model probability >= `flag_at`) gets when its verifier logit lets it through, or None
    when the flag stands.

    Let through: `verifier_logit` under the file's line `tau`. Without `over_point` (the file's `veto_over_point`)
    its sigmoid must also be under `flag_at`, so a line above the operating point's log-odds (v13: 2.48; e5's +2.5
    since session 42) acts as that log-odds: a file's line cannot lift a score, nor call a flag let through that
    still blocks. With it, the probability is sigmoid(logit - max(0, tau - L)), L the point's log-odds: under the
    point for any logit under `tau`, and the verifier's own sigmoid, as before, for a line at or under L."""
    if not verifier_logit < tau:  # also a NaN line: the flag stands
        return None
    shift = max(0.0, tau - logit(flag_at)) if over_point else 0.0
    probability = sigmoid(verifier_logit - shift)
    return probability if probability < flag_at else None


def band_floor(flag_at: float, band: float) -> float:
    """The lowest probability a near miss has: `band` logits under the line `flag_at`."""
    return sigmoid(logit(flag_at) - band)
