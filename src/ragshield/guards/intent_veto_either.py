"""The run-time settings of the `intent` second opinion's either raise (`intent_veto.IntentVeto`): views that replace
the MiniLM file's `raise_either_tau`, `raise_either_band`, `raise_either_chars` and `raise_either_reading` for English
near misses, and the settings in force for a lane.

Apart from `intent_veto` so the reading code there stays about reading; each view is a shallow copy sharing what is
loaded (and its lock).
"""

from __future__ import annotations

import copy
import math
from typing import Self

from ragshield.errors import ConfigError
from ragshield.guards.intent_veto_weights import READINGS, VetoWeights, is_reading, whole_number


class EitherSettings:
    """The either raise's run-time settings per encoder (its near misses' lane): line (logit), band (logits), length
    (characters) and reading ("pieces" or "whole"); empty unless a view sets them, so the files' settings stand."""

    either_lines: dict[str, float]
    either_bands: dict[str, float]
    either_chars: dict[str, int]
    either_readings: dict[str, str]
    band_caps: dict[str, float]

    @property
    def english_either(self) -> float | None:
        """The run-time line for English near misses (`raising_english_on_e5`), or None: the MiniLM file's (2.0 in the
        packaged file since session 52; `either_reach` gives the line in force)."""
        return self.either_lines.get("minilm")

    def raising_english_on_e5(
        self, line: float, band: float | None = None, chars: int | None = None, reading: str | None = None
    ) -> Self:
        """These verifiers with an English near miss the MiniLM verifier does not raise raised when the e5 verifier
        reads it at `line` (logit) or over, within `band` logits, when at most `chars` characters long and read as
        `reading` says (each None: the file's, whatever an earlier view set; `chars` 0: none), sharing what is loaded.
        They replace the MiniLM file's `raise_either_tau`, `raise_either_band`, `raise_either_chars` and
        `raise_either_reading`; a file that confirms keeps confirming."""
        if not math.isfinite(line):
            raise ConfigError(f"intent veto: the English either line must be finite, got {line}")
        if band is not None and (not math.isfinite(band) or band <= 0):
            raise ConfigError(f"intent veto: the English either band must be finite and over 0, got {band}")
        view = copy.copy(self)
        view.either_lines = {**self.either_lines, "minilm": float(line)}
        view.either_bands = {k: v for k, v in self.either_bands.items() if k != "minilm"}
        view.either_bands |= {} if band is None else {"minilm": float(band)}
        view.either_chars = {k: v for k, v in self.either_chars.items() if k != "minilm"}
        view.either_readings = {k: v for k, v in self.either_readings.items() if k != "minilm"}
        view = view if chars is None else view.with_english_either_length(chars)
        return view if reading is None else view.with_english_either_reading(reading)

    def with_english_either(
        self, line: float | None, band: float | None, chars: int | None, reading: str | None
    ) -> Self:
        """These verifiers with the guard's either options (`intent_opinion.either_options`; each None: the file's):
        with a line, `raising_english_on_e5`; without one, the length and reading alone."""
        if line is not None:
            return self.raising_english_on_e5(line, band, chars, reading)
        view = self if chars is None else self.with_english_either_length(chars)
        return view if reading is None else view.with_english_either_reading(reading)

    def either_reach(self, encoder: str, weights: VetoWeights | None) -> tuple[float, float] | None:
        """(line, band in logits) of the other lane's reading for `encoder`'s near misses (read with `weights`, its
        file as this view raises with it; the band narrowed by `band_caps` too), or None: no such raise."""
        line = None if weights is None else self.either_lines.get(encoder, weights.raise_either_tau)
        if weights is None or line is None or weights.raise_band is None:
            return None
        band = self.either_bands.get(encoder, weights.raise_either_band or weights.raise_band)
        return line, min(band, self.band_caps.get(encoder, math.inf))

    def with_english_either_length(self, chars: int) -> Self:
        """These verifiers with the English either raise reading only near misses at most `chars` characters long (0:
        none, the either raise off), whatever the MiniLM file says, sharing what is loaded."""
        if not whole_number(chars, least=0):
            raise ConfigError(
                f"intent veto: the English either length must be a whole number, 0 or more, got {chars!r}"
            )
        view = copy.copy(self)
        view.either_chars = {**self.either_chars, "minilm": chars}
        return view

    def with_english_either_reading(self, reading: str) -> Self:
        """These verifiers with the e5 verifier reading English near misses for the either raise as `reading` says
        ("pieces" or "whole"), whatever the MiniLM file says, sharing what is loaded."""
        if not is_reading(reading):
            raise ConfigError(
                f"intent veto: the English either reading must be one of {', '.join(READINGS)}, got {reading!r}"
            )
        view = copy.copy(self)
        view.either_readings = {**self.either_readings, "minilm": reading}
        return view

    def either_read_as(self, encoder: str, weights: VetoWeights | None) -> str | None:
        """What the other lane's verifier reads of `encoder`'s near misses for the either raise (the run-time
        `either_readings`, else the file's `raise_either_reading`), or None: as its own file reads near misses."""
        return self.either_readings.get(encoder, None if weights is None else weights.raise_either_reading)

    def either_length(self, encoder: str, weights: VetoWeights | None) -> int | None:
        """The longest query, in characters, the other lane's verifier reads for `encoder`'s either raise (the run-time
        `either_chars`, else the file's `raise_either_chars`), or None: any length."""
        return self.either_chars.get(encoder, None if weights is None else weights.raise_either_chars)
