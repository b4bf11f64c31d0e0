"""`intent: {routed_raise_band: ...}` (session 48): the e5 raise read no further under the line than this band, for a
deployment that needs the reading cost of before the thirty-second round (band 4). What a deployment relies on: off
by default (the packaged band, 12 logits), only the routed lane's band narrows and never widens, English near misses
read as before, the switch reaches the guard alone, inside the shield and from a calibrated file, a nonsense band is a
clear error, and the view shares the verifiers already loaded. FAKE verifiers for the reading; the real packaged guard
for the wiring."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from intent_veto_fakes import FLAG_AT, FakeVerifier, apply, fake_weights, veto_of

from ragshield.errors import ConfigError
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit, sigmoid
from ragshield.guards.intent_veto import SecondOpinion, shipped_veto

UNDER_BY = {gap: sigmoid(logit(FLAG_AT) - gap) for gap in (1.0, 6.0)}  # logits under the line


def test_the_band_narrows_the_routed_raise_and_leaves_english_alone() -> None:
    english = FakeVerifier(fake_weights(tau=0.0).with_raise(8.0, 2.0), {}, default=5.0)
    routed = FakeVerifier(fake_weights("e5", tau=0.0).with_raise(12.0, 3.5), {}, default=5.0)
    veto = veto_of(minilm=english, e5=routed)
    narrowed = veto.with_band("e5", 4.0)
    probabilities = [UNDER_BY[6.0], UNDER_BY[1.0], UNDER_BY[6.0]]
    lanes = [True, True, False]  # two routed near misses, 6 and 1 logits under; an English one 6 under
    texts = ["lista de pacientes", "lista de clientes", "list the patients"]
    assert [s.second_opinion for s in apply(veto, texts, probabilities, routed=lanes)] == [SecondOpinion.RAISED] * 3
    routed.read.clear()
    out = apply(narrowed, texts, probabilities, routed=lanes)
    assert [s.second_opinion for s in out] == [
        SecondOpinion.NOT_ASKED,  # 6 logits under: past the narrowed band, never read
        SecondOpinion.RAISED,  # 1 logit under: within it, read and raised as before
        SecondOpinion.RAISED,  # English: its own file's band (8), untouched
    ]
    assert routed.read == ["lista de clientes"]
    assert veto.with_band("e5", 20.0).raising("e5", "v11").raise_band == 12.0  # a cap never widens the file's band
    assert narrowed._verifiers is veto._verifiers and not veto.band_caps  # shares what is loaded; the veto unchanged
    with pytest.raises(ConfigError, match="finite number of logits over 0"):
        veto.with_band("e5", math.nan)


@pytest.mark.parametrize("band", [True, "4", math.nan, math.inf, 0.0, -1.0, [4.0]])
def test_a_band_that_is_not_a_positive_finite_number_is_a_clear_error(band: Any) -> None:
    with pytest.raises(ConfigError, match="routed_raise_band must be a finite number"):
        ExtractionIntent(routed_raise_band=band)


def test_the_band_needs_the_second_opinion_raising_near_misses() -> None:
    for off in ({"second_opinion": False}, {"raise_near_misses": False}):
        with pytest.raises(ConfigError, match="routed_raise_band needs second_opinion and raise_near_misses"):
            ExtractionIntent(routed_raise_band=4.0, **off)


def test_the_switch_reaches_the_packaged_guard_alone_inside_the_shield_and_from_a_calibrated_file(
    tmp_path: Path,
) -> None:
    from ragshield.guards.factory import DefenseContext, build_defense

    context = DefenseContext(embedder=None)
    default = build_defense("intent", context).query_guards[0]
    assert default.routed_raise_band is None and default._veto() is shipped_veto()  # off by default
    opted = build_defense("intent", context, {"intent": {"routed_raise_band": 4}}).query_guards[0]
    assert opted.routed_raise_band == 4.0 and opted._veto().band_caps == {"e5": 4.0}
    assert opted._veto()._verifiers is default._veto()._verifiers  # one loaded copy of each verifier per process
    both = ExtractionIntent(raise_either=4.0, routed_raise_band=4.0)._veto()
    assert both.english_either == 4.0 and both.band_caps == {"e5": 4.0}  # the two switches combine
    shield = build_defense("shield", context, {"shield": {"intent": {"routed_raise_band": 4.0}}})
    assert shield.query_guards[0].guard.routed_raise_band == 4.0
    default.save(tmp_path / "intent.json")
    loaded = build_defense(
        "intent", context, {"intent": {"load": str(tmp_path / "intent.json"), "routed_raise_band": 4}}
    )
    assert loaded.query_guards[0].routed_raise_band == 4.0
