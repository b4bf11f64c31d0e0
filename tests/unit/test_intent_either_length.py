"""The either raise's length cap (`VetoWeights.raise_either_chars`, `IntentVeto.raising_english_on_e5(..., chars)`,
`ExtractionIntent(raise_either_chars=...)`; session 51, the thirty-fourth round): the other lane's verifier reads a
lane's near misses for the either raise only when the query is at most that many characters long. What a deployment
relies on: a longer near miss is never handed to the other verifier (so an e-mail cannot be raised by it, and costs
nothing more) while the own verifier still reads its own band at any length; the field survives a save and load in a
format an older ragshield refuses; nonsense is a clear error; the run-time setting replaces the file's, and 0 turns
the either raise off; the packaged MiniLM file names the round's point. FAKE verifiers, but for the packaged file."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from intent_veto_fakes import FLAG_AT, FakeVerifier, apply, fake_weights, round_module, veto_of, with_header

from ragshield.errors import ConfigError
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit, sigmoid
from ragshield.guards.intent_veto import SecondOpinion
from ragshield.guards.intent_veto_weights import FORMAT_SHORT_EITHER, VetoWeights


def under(logits: float) -> float:
    """The probability `logits` under the operating point."""
    return sigmoid(logit(FLAG_AT) - logits)


def english(chars: int | None = None, band: float | None = 3.0) -> FakeVerifier:
    """A FAKE MiniLM verifier raising within 1 logit at line 2, with the either line 4 within `band` logits, for
    queries at most `chars` characters long."""
    weights = fake_weights(tau=0.0).with_raise(1.0, 2.0)
    fields = weights.__dict__ | {"raise_either_tau": 4.0, "raise_either_band": band, "raise_either_chars": chars}
    return FakeVerifier(VetoWeights(**fields), {"records": 1.0})


def routed() -> FakeVerifier:
    return FakeVerifier(fake_weights("e5", tau=0.0).with_raise(1.0, 2.0), {"records": 5.0})


SHORT, LONG = "paste the records", "paste the records " + "and so on " * 4  # 17 and 57 characters
TEXTS = [SHORT, LONG, SHORT + "!", LONG + "!"]
PROBABILITIES = [under(0.5), under(0.5), under(2.0), under(2.0)]  # within MiniLM's band, then beyond it


def test_a_near_miss_longer_than_the_cap_is_never_read_by_the_other_verifier() -> None:
    minilm, e5 = english(chars=20), routed()
    out = apply(veto_of(minilm=minilm, e5=e5), TEXTS, PROBABILITIES, routed=[False] * 4)
    assert [s.second_opinion for s in out] == [
        SecondOpinion.RAISED,  # short, within MiniLM's band: MiniLM reads 1.0 (under 2), e5 reads 5.0 (over 4)
        SecondOpinion.NOT_RAISED,  # long, within MiniLM's band: MiniLM reads it as shipped, e5 does not
        SecondOpinion.RAISED,  # short, beyond MiniLM's band: e5's reading alone
        SecondOpinion.NOT_ASKED,  # long, beyond MiniLM's band: nobody reads it, its score stands
    ]
    assert sorted(e5.read) == sorted([SHORT, SHORT + "!"])
    assert minilm.read == [SHORT, LONG]  # the own band at any length
    assert out[3].probability == PROBABILITIES[3] and out[1].veto_logit == 1.0


def test_without_a_cap_every_length_is_read_as_before() -> None:
    e5 = routed()
    out = apply(veto_of(minilm=english(), e5=e5), TEXTS, PROBABILITIES, routed=[False] * 4)
    assert [s.second_opinion for s in out] == [SecondOpinion.RAISED] * 4
    assert len(e5.read) == 4


def test_the_run_time_cap_replaces_the_files_and_a_later_line_without_one_goes_back_to_it() -> None:
    veto = veto_of(minilm=english(chars=20), e5=routed())
    wider = veto.raising_english_on_e5(4.0, chars=100)
    out = apply(wider, TEXTS, PROBABILITIES, routed=[False] * 4)
    assert [s.second_opinion for s in out] == [SecondOpinion.RAISED] * 4
    weights = veto._weights["minilm"]
    assert wider.raising_english_on_e5(5.0).either_length("minilm", weights) == 20
    assert veto.either_length("minilm", weights) == 20
    for chars in (-5, 2.5, True, "120"):
        with pytest.raises(ConfigError, match="either length must be a whole number, 0 or more"):
            veto.raising_english_on_e5(4.0, chars=chars)  # type: ignore[arg-type]


def test_a_cap_of_zero_turns_the_either_raise_off_and_the_own_band_reads_as_before() -> None:
    minilm, e5 = english(chars=120), routed()
    off = veto_of(minilm=minilm, e5=e5).with_english_either_length(0)
    out = apply(off, TEXTS, PROBABILITIES, routed=[False] * 4)
    assert [s.second_opinion for s in out] == [SecondOpinion.NOT_RAISED] * 2 + [SecondOpinion.NOT_ASKED] * 2
    assert not e5.read and minilm.read == [SHORT, LONG]
    assert off.raising_english_on_e5(4.0).either_length("minilm", minilm.weights) == 120  # a new line: the file's


def test_the_field_survives_a_save_in_a_format_an_older_reader_refuses(tmp_path: Path) -> None:
    english(chars=120).weights.save(tmp_path / "minilm.npz")
    loaded = VetoWeights.load(tmp_path / "minilm.npz")
    assert (loaded.raise_either_tau, loaded.raise_either_band, loaded.raise_either_chars) == (4.0, 3.0, 120)
    with np.load(tmp_path / "minilm.npz") as data:
        header = json.loads(bytes(data["header"]).decode())
    # a ragshield before session 51 accepts only formats /1 and /2: it refuses this file rather than raise e-mails
    assert header["format"] == FORMAT_SHORT_EITHER
    assert header["format"] not in ("ragshield.intent-veto/1", "ragshield.intent-veto/2")
    english().weights.save(tmp_path / "before.npz")
    before = VetoWeights.load(tmp_path / "before.npz")
    assert before.raise_either_chars is None
    with np.load(tmp_path / "before.npz") as data:
        assert json.loads(bytes(data["header"]).decode())["format"] == "ragshield.intent-veto/1"


@pytest.mark.parametrize("chars", [0, -1, 1.5, True, "120"])
def test_a_file_cap_that_is_not_a_whole_number_over_zero_is_refused(chars: Any) -> None:
    with pytest.raises(ConfigError, match="raise_either_chars must be a whole number over 0"):
        english(chars=chars)


@pytest.mark.parametrize("written", [120.0, True, "120"])
def test_a_file_whose_header_spells_the_cap_otherwise_is_refused_not_rounded(tmp_path: Path, written: Any) -> None:
    english(chars=120).weights.save(tmp_path / "minilm.npz")
    edited = with_header(tmp_path / "minilm.npz", tmp_path / "edited.npz", raise_either_chars=written)
    with pytest.raises(ConfigError, match="cannot read intent veto"):
        VetoWeights.load(edited)


def test_a_cap_of_zero_reads_not_even_an_empty_near_miss_on_the_other_verifier() -> None:
    minilm = FakeVerifier(english(chars=120).weights, {}, default=1.0)  # leaves every near miss under its line 2
    e5 = FakeVerifier(routed().weights, {}, default=5.0)  # would raise whatever it reads
    off = veto_of(minilm=minilm, e5=e5).with_english_either_length(0)
    out = apply(off, ["", SHORT + "!"], [under(0.5), under(2.0)], routed=[False, False])
    assert not e5.read and [s.second_opinion for s in out] == [SecondOpinion.NOT_RAISED, SecondOpinion.NOT_ASKED]
    capped = apply(veto_of(minilm=minilm, e5=e5).with_english_either_length(1), [""], [under(0.5)], routed=[False])
    assert e5.read == [""] and capped[0].second_opinion == SecondOpinion.RAISED  # a cap of 1 reads the empty query


def test_the_minilm_band_cap_and_the_length_cap_hold_together() -> None:
    e5 = routed()
    veto = veto_of(minilm=english(chars=20), e5=e5).with_band("minilm", 0.5)
    out = apply(veto, TEXTS, [under(0.4), under(0.4), under(2.0), under(2.0)], routed=[False] * 4)
    assert e5.read == [SHORT]  # within 0.5 logits and short: the only one either cap lets e5 read
    assert [s.second_opinion for s in out][2:] == [SecondOpinion.NOT_ASKED] * 2


def test_a_cap_without_an_either_line_is_refused() -> None:
    raising = fake_weights(tau=0.0).with_raise(1.0, 2.0)
    with pytest.raises(ConfigError, match="needs raise_either_tau"):
        VetoWeights(**{**raising.__dict__, "raise_either_chars": 120})


def test_the_guard_passes_its_cap_to_its_veto_and_refuses_nonsense(tmp_path: Path) -> None:
    from ragshield.guards.factory import DefenseContext, build_defense

    for chars in (True, "120", -1, 1.5, math.inf):
        with pytest.raises(ConfigError, match="raise_either_chars must be a whole number, 0 or more"):
            ExtractionIntent(raise_either=3.0, raise_either_chars=chars)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="needs second_opinion and raise_near_misses on"):
        ExtractionIntent(raise_either_chars=120, raise_near_misses=False)
    with pytest.raises(ConfigError, match="raise_either_chars 0 turns the either raise off"):
        ExtractionIntent(raise_either=3.0, raise_either_chars=0)
    context = DefenseContext(embedder=None)
    off = build_defense("intent", context, {"intent": {"raise_either_chars": 0}}).query_guards[0]
    assert off._veto().either_chars == {"minilm": 0} and off._veto().english_either is None  # the file's line
    options = {"raise_either": 3, "raise_either_band": 5, "raise_either_chars": 200}
    opted = build_defense("intent", context, {"intent": options}).query_guards[0]
    assert opted._veto().either_chars == {"minilm": 200}
    saved = tmp_path / "intent.json"
    opted.save(saved)
    loaded = build_defense("intent", context, {"intent": {"load": str(saved), **options}}).query_guards[0]
    assert loaded.raise_either_chars == 200


def test_the_packaged_minilm_file_reads_short_english_near_misses_on_e5_as_the_thirty_fifth_round_chose() -> None:
    from ragshield.guards.intent_veto import shipped_veto, shipped_weights

    weights = VetoWeights.load(shipped_weights("minilm"))
    assert (weights.raise_either_tau, weights.raise_either_band, weights.raise_either_chars) == (2.0, 6.0, 120)
    assert weights.raise_either_reading == "whole"  # since session 52 (test_intent_either_reading)
    assert (weights.raise_band, weights.raise_tau) == (4.0, 2.0)  # its own reading as before
    assert shipped_veto().either_reach("minilm", weights) == (2.0, 6.0)
    assert ExtractionIntent(raise_either_chars=0)._veto().either_length("minilm", weights) == 0


def record(name: str, label: int, gap: float, other: float | None, chars: int, lane: str = "minilm") -> dict[str, Any]:
    """A FAKE per-row record `gap` logits under the line, read by e5 at `other`, `chars` characters long."""
    fields = {"set": name, "row": 0, "label": label, "lane": lane, "flagged_by_model": gap < 0, "gap": gap}
    return fields | {"verifier": None, "other": other, "chars": chars}


def test_the_round_counts_only_rows_within_the_cap_as_raised_or_read() -> None:
    far = round_module("intent_either_far")
    minilm = VetoWeights.load(far.shipped_weights("minilm"))
    short, long = record("v41", 1, 5.0, 6.0, 60), record("v41", 1, 5.0, 6.0, 300)
    assert far.raised_by_other(short, 8.0, 5.0, minilm, 120) and far.read_by_other(short, 8.0, minilm, 120)
    assert not far.raised_by_other(long, 8.0, 5.0, minilm, 120) and not far.read_by_other(long, 8.0, minilm, 120)
    assert far.raised_by_other(long, 8.0, 5.0, minilm)  # no cap: as in the thirty-third round


def point(chars: int, band: float, line: float, requests: int, benign: int, **overrides: Any) -> dict[str, Any]:
    """A FAKE grid point of the thirty-fourth round (public rows raised none unless `public_within_goal` is False)."""
    read = {"rate": 0.01, "k": 1, "n": 100}
    fields = {"chars": chars, "band": band, "line": line, "requests_raised": requests, "benign_raised": benign}
    fields |= {"public": {"enron": {"raised": 0}}, "public_within_goal": True}
    fields |= {"public_english_read_by_e5": read, "development_english_benign_read_by_e5": read}
    return fields | overrides


def test_the_round_takes_the_most_requests_among_points_within_every_bound() -> None:
    short = round_module("intent_either_short")
    over = {"rate": 0.06, "k": 6, "n": 100}
    points = [
        point(120, 5.0, 3.0, 29, 1),
        point(200, 12.0, 5.0, 63, 1, development_english_benign_read_by_e5=over),  # too costly on short questions
        point(200, 12.0, 4.0, 80, 1, public_english_read_by_e5=over),  # too costly on the public buckets
        point(160, 12.0, 3.0, 90, 3),  # too many benign rows
        point(250, 8.0, 3.0, 70, 0, public_within_goal=False),  # an e-mail raised past 1%
        point(80, 6.0, 3.0, 29, 1),  # as many requests, a wider band
        point(160, 5.0, 3.0, 29, 1),  # as many requests, the same band and line, a longer cap
    ]
    assert short.choose(points) == points[0]
    assert short.choose(points[1:5]) is None


def test_with_the_real_verifiers_only_queries_within_the_cap_are_raised_past_the_minilm_band() -> None:
    # a line of -1e6 is one every e5 reading reaches, so the cap alone decides which far English near misses rise
    texts = [
        "Tell me more about the person mentioned in the second document.",
        "What's the weather like in Paris in May?",
        "How do I boil an egg so the yolk stays soft?",
        "Could you tell me what the weather is usually like in Lisbon in late October, and whether I need a coat?",
    ]
    cap = 45
    capped = ExtractionIntent(threshold=0.5, raise_either=-1e6, raise_either_band=40.0, raise_either_chars=cap)
    scores = capped.scores(texts)
    plain = ExtractionIntent(threshold=0.5, raise_either_chars=0).scores(texts)
    routed_rows = capped._model().routes(texts)
    far = [i for i, s in enumerate(plain) if not routed_rows[i] and 4.0 < logit(0.5) - logit(s.probability) <= 40.0]
    assert {len(texts[i]) <= cap for i in far} == {True, False}, "the sample should hold a short and a long far miss"
    for i in far:
        expected = SecondOpinion.RAISED if len(texts[i]) <= cap else SecondOpinion.NOT_ASKED
        assert scores[i].second_opinion == expected
