"""The twenty-first round's script (`benchmarks/intent_raise_band.py`): it reads near misses as far under the line as
its widest band, chooses on sets neither second opinion trained on, and its grid holds the shipped settings."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from ragshield.guards.intent_arrays import logit, sigmoid
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import intent_raise as ir
import intent_raise_band as band_round
import intent_sets as isets
import intent_veto_judge as judge
import intent_veto_raise as vr
import train_intent as ti


def test_the_round_chose_on_read_sets_no_second_opinion_trained_on_and_now_refuses_to_run_fitted() -> None:
    import intent_e5_refit as er

    sets = set(band_round.DEVELOPMENT)
    assert len(sets) == 14 and all(name in isets.HELDOUT_SETS for name in sets)
    # the e5 file it read with (session 42) trained on `intent_e5_refit.TRAINED_ON`; the MiniLM file on none
    assert not sets & set(er.TRAINED_ON) and not sets & set(ti.TRAIN_HELDOUT)
    assert not sets & set(isets.UNREAD_JUDGES)
    # since session 47 the packaged e5 file trained on v26 to v30 and chat13 to chat17: a rerun would read fitted
    assert sets & set(judge.veto_trained_sets())
    with pytest.raises(SystemExit, match="packaged second opinion trained on v26"):
        band_round.main(["--rows", "unused.json"])


def test_the_grid_holds_each_lanes_shipped_settings_and_reaches_past_them() -> None:
    for lane in ENCODERS:
        weights = vr.packaged_weights(lane)  # as the round compared with them
        assert band_round.shipped_line(lane) == weights.tau
        assert weights.raise_band in band_round.BANDS and weights.raise_tau in band_round.RAISE_TAUS
        assert max(band_round.BANDS) > weights.raise_band


def test_read_set_reads_near_misses_as_far_under_the_line_as_its_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    """A FAKE guard scores four queries 1, 3, 5 and 9 logits under its line and one above; the verifier is asked
    about the near misses within `reach` only, and a flag always."""
    threshold = 0.9
    line = logit(threshold)
    gaps = [1.0, 3.0, 5.0, 9.0, -1.0]
    model = SimpleNamespace(threshold=threshold, routes=lambda texts: [False] * len(texts))
    guard = SimpleNamespace(
        _model=lambda: model,
        scores=lambda texts: [SimpleNamespace(probability=sigmoid(line - gap)) for gap in gaps],
    )
    asked: list[tuple[list[int], bool]] = []

    stops: list[float] = []

    def fake_lane_logits(guard: Any, texts: list[str], rows: list[int], *args: Any, **kwargs: Any) -> dict[int, float]:
        asked.append((rows, bool(kwargs.get("near_miss"))))
        stops.append(args[1])  # the line reading stops at: the highest veto line for flags, raise line for near misses
        return dict.fromkeys(rows, 0.5)

    monkeypatch.setattr(ir, "lane_logits", fake_lane_logits)
    examples = [isets.Example(f"q{i}", 1, "s", "en", "x") for i in range(len(gaps))]
    records = vr.read_set(guard, "v26", examples, highest_veto=2.5, reach=6.0, highest_raise=5.0)  # type: ignore[arg-type]
    assert asked == [([4], False), ([0, 1, 2], True)] and stops == [2.5, 5.0]
    assert [r["verifier"] for r in records] == [0.5, 0.5, 0.5, None, 0.5]
    vr.read_set(guard, "v26", examples, highest_veto=2.5)  # type: ignore[arg-type]
    assert asked[-1] == ([0, 1], True)  # the fourteenth round's reach: its widest band, 4


def test_the_twenty_second_rounds_sweep_raises_an_english_near_miss_only_when_e5_confirms_it(tmp_path: Path) -> None:
    import intent_raise_confirm as confirm_round

    line = logit(0.92)

    def row(label: int, gap: float, minilm: float | None, e5: float | None) -> dict[str, Any]:
        return {"set": "v26", "row": 0, "label": label, "lane": "minilm", "flagged_by_model": False, "gap": gap} | {
            "verifier": minilm,
            "confirm": e5,
        }

    point = {"tau": 0.0, "band": 5.0, "raise_tau": 0.0, "confirm_tau": 2.0}
    assert confirm_round.guard_flags(row(1, 4.5, 0.5, 2.5), point, line)  # both verifiers read a request
    assert not confirm_round.guard_flags(row(1, 4.5, 0.5, 1.5), point, line)  # e5 under its line
    assert not confirm_round.guard_flags(row(1, 4.5, 0.5, None), point, line)  # e5 did not read it
    assert not confirm_round.guard_flags(row(1, 5.5, 9.0, 9.0), point, line)  # outside the band
    assert confirm_round.guard_flags(row(1, 4.5, 0.5, None), point | {"confirm_tau": None}, line)  # no confirmation
    shipped = {"band": 4.0, "raise_tau": 2.0, "confirm_tau": None, "benign_flagged": 18, "errors": 262}
    better = {"band": 5.0, "raise_tau": 0.0, "confirm_tau": 2.0, "benign_flagged": 15, "errors": 211}
    tie_unconfirmed = {**better, "confirm_tau": None}
    noisier = {"band": 5.0, "raise_tau": 0.0, "confirm_tau": 0.0, "benign_flagged": 30, "errors": 200}
    assert confirm_round.choose([shipped, better, noisier], shipped) == better  # more benign flags: not eligible
    assert confirm_round.choose([shipped, better, tie_unconfirmed], shipped) == tie_unconfirmed  # ties: none first
    assert confirm_round.choose([shipped], shipped) is None
    confirm_round.write_candidate(tmp_path / "RC", better)
    written = VetoWeights.load(tmp_path / "RC" / "intent_veto_minilm.npz")
    assert (written.raise_band, written.raise_tau, written.raise_confirm_tau) == (5.0, 0.0, 2.0)
    assert written.tau == VetoWeights.load(shipped_weights("minilm")).tau and "raise_confirmed" in written.meta
    e5, packaged = VetoWeights.load(tmp_path / "RC" / "intent_veto_e5.npz"), VetoWeights.load(shipped_weights("e5"))
    assert (e5.raise_band, e5.raise_tau) == vr.E5_RAISE_BEFORE_FAR  # the e5 raise the round compared with
    assert e5.tau == packaged.tau and e5.meta == packaged.meta and e5.layers.keys() == packaged.layers.keys()
    assert all(np.allclose(e5.layers[name], packaged.layers[name]) for name in packaged.layers)  # the same weights
