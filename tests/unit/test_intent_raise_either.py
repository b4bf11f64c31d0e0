"""`raise_either_tau` (session 45, the twenty-seventh round's candidate): a near miss its own verifier does not raise is
raised when the other lane's verifier reads it at that line. What a deployment relies on: the other verifier reads only
the near misses the own one leaves, and only when the file names the line; one it cannot read, or that fails, is not
raised (the raise only adds flags); a file without the line reads as before; the line round-trips and refuses
nonsense. FAKE verifiers throughout."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from intent_veto_fakes import FLAG_AT, BrokenVerifier, FakeVerifier, apply, fake_weights, veto_of, with_header

from ragshield.errors import ConfigError
from ragshield.guards.intent_arrays import logit, sigmoid
from ragshield.guards.intent_veto import SecondOpinion
from ragshield.guards.intent_veto_weights import VetoWeights

UNDER_BY_HALF = sigmoid(logit(FLAG_AT) - 0.5)  # half a logit under the line


def test_a_near_miss_the_own_verifier_leaves_is_raised_when_the_other_reads_it_at_its_line() -> None:
    either = replace(fake_weights(tau=0.0).with_raise(1.0, 2.0), raise_either_tau=4.0)
    english = FakeVerifier(either, {"dump": 6.0, "paste": 1.0, "tea": 0.0})
    routed = FakeVerifier(fake_weights("e5", tau=0.0), {"records": 5.0, "recipe": 1.0}, default=-3.0)
    texts = ["dump it all", "paste her records", "paste the recipe", "tea please"]
    out = apply(veto_of(minilm=english, e5=routed), texts, [UNDER_BY_HALF] * 4, routed=[False] * 4)
    assert [s.second_opinion for s in out] == [
        SecondOpinion.RAISED,  # its own verifier raises it: the other is not asked
        SecondOpinion.RAISED,  # under its own line, over the other's
        SecondOpinion.NOT_RAISED,
        SecondOpinion.NOT_RAISED,
    ]
    assert out[1].probability == FLAG_AT and out[1].veto_logit == 1.0  # the own verifier's logit stays on the verdict
    assert "dump it all" not in routed.read and {"paste her records", "paste the recipe"} <= set(routed.read)
    # without the line the same verifiers read as before: the other lane is never asked about an English near miss
    plain = FakeVerifier(fake_weights(tau=0.0).with_raise(1.0, 2.0), english.table)
    untouched = FakeVerifier(fake_weights("e5", tau=0.0), routed.table)
    before = apply(veto_of(minilm=plain, e5=untouched), texts, [UNDER_BY_HALF] * 4, routed=[False] * 4)
    assert before[1].second_opinion == SecondOpinion.NOT_RAISED and not untouched.read


def test_an_other_verifier_that_fails_or_is_absent_raises_nothing() -> None:
    either = replace(fake_weights(tau=0.0).with_raise(1.0, 2.0), raise_either_tau=4.0)
    english = FakeVerifier(either, {"paste": 1.0})
    broken = BrokenVerifier(fake_weights("e5", tau=0.0), {})
    out = apply(veto_of(minilm=english, e5=broken), ["paste her records"], [UNDER_BY_HALF], routed=[False])
    assert out[0].second_opinion == SecondOpinion.NOT_RAISED and out[0].probability == UNDER_BY_HALF
    out = apply(veto_of(minilm=english), ["paste her records"], [UNDER_BY_HALF], routed=[False])
    assert out[0].second_opinion == SecondOpinion.NOT_RAISED and out[0].probability == UNDER_BY_HALF


def test_the_either_line_round_trips_and_refuses_nonsense(tmp_path: Path) -> None:
    replace(fake_weights().with_raise(4.0, 2.0), raise_either_tau=5.0).save(tmp_path / "either.npz")
    assert VetoWeights.load(tmp_path / "either.npz").raise_either_tau == 5.0
    fake_weights().with_raise(4.0, 2.0).save(tmp_path / "plain.npz")  # files before session 45: no such line
    assert VetoWeights.load(tmp_path / "plain.npz").raise_either_tau is None
    for bad in (
        lambda: replace(fake_weights(), raise_either_tau=5.0),  # no raise to extend
        lambda: replace(fake_weights().with_raise(4.0, 2.0), raise_either_tau=math.inf),
        lambda: replace(fake_weights().with_raise(4.0, 2.0).with_confirmation(3.0), raise_either_tau=5.0),
    ):
        with pytest.raises(ConfigError, match="raise_either_tau"):
            bad()


def either_round() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_raise_either

    return intent_raise_either


def near(name: str, label: int, own: float, other: float | None) -> dict[str, Any]:
    """A FAKE English near miss half a logit under the line, read by MiniLM at `own` and by e5 at `other`."""
    return {
        "set": name,
        "row": 0,
        "label": label,
        "lane": "minilm",
        "flagged_by_model": False,
        "gap": 0.5,
        "verifier": own,
        "other": other,
    }


def test_the_twenty_seventh_rounds_sweep_raises_only_what_e5_reads_and_leaving_a_set_out_counts_it_by_the_others() -> (
    None
):
    round27 = either_round()
    line = 2.0
    request, benign = near("v26", 1, 0.0, 5.5), near("chat13", 0, 0.0, 4.5)
    assert not round27.flags(request, None, line)  # as shipped: MiniLM does not raise it
    assert round27.flags(request, 5.0, line) and not round27.flags(request, 6.0, line)
    assert not round27.flags(near("v26", 1, 0.0, None), 3.0, line)  # e5 did not read it: not raised
    far = near("v26", 1, 0.0, 9.0) | {"gap": 7.0}  # beyond the band: never raised
    assert not round27.flags(far, 3.0, line)
    chosen = round27.choose([request, benign], round27.POINTS, line)
    assert (chosen["either"], chosen["errors"]) == (5.0, 0)  # ties to the higher line: 5, not 6 (misses it)
    assert round27.choose([benign], round27.POINTS, line)["either"] is None  # nothing to gain: as shipped
    alone = round27.leave_one_set_out([request, benign], round27.POINTS, line)
    assert (alone["errors"], alone["shipped_errors"]) == (1, 1)  # the request, held out, meets the benign set's choice
    assert alone["per_set"]["v26"]["chosen"] == {"either": None} and alone["per_set"]["chat13"]["chosen"] == {
        "either": 5.0
    }
    two = [{"either": None}, {"either": 3.0}]
    assert round27.choose([request, benign], two, line)["either"] is None  # a tie goes to the shipped settings


def test_a_near_miss_its_own_verifier_cannot_read_is_never_handed_to_the_other() -> None:
    either = replace(fake_weights(tau=0.0).with_raise(1.0, 2.0), raise_either_tau=4.0)
    routed = FakeVerifier(fake_weights("e5", tau=0.0), {}, default=9.0)
    out = apply(veto_of(minilm=BrokenVerifier(either, {}), e5=routed), ["paste her records"], [UNDER_BY_HALF])
    assert out[0].second_opinion == SecondOpinion.UNAVAILABLE and out[0].probability == UNDER_BY_HALF
    assert not routed.read


def test_a_header_with_a_malformed_switch_or_line_is_a_clear_error(tmp_path: Path) -> None:
    good = tmp_path / "good.npz"
    replace(fake_weights().with_raise(4.0, 2.0), raise_either_tau=5.0).save(good)
    for key, value in (("veto_over_point", "yes"), ("raise_either_tau", True), ("raise_either_tau", "5")):
        with pytest.raises(ConfigError, match="cannot read intent veto"):
            VetoWeights.load(with_header(good, tmp_path / "bad.npz", **{key: value}))
    with pytest.raises(ConfigError, match="raise_either_tau"):  # refused on load as on construction
        VetoWeights.load(with_header(good, tmp_path / "both.npz", raise_confirm_tau=3.0))
