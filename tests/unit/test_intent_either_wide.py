"""The forty-first round (session 56): WIDE, the either raise reaching 12 logits, as the default. What the round relies
on: its candidate folder holds the packaged files with only the MiniLM file's either band changed (and its header
saying where that came from), the sweep names the six read sets it reads, and WIDE raises a short English request the
packaged band never reads. FAKE records in the sweep test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from intent_veto_fakes import round_module

from ragshield.guards.intent_veto import shipped_weights, weights_file_name
from ragshield.guards.intent_veto_weights import VetoWeights

LINE = 2.48  # v13's operating point in log-odds


def wide() -> Any:
    return round_module("intent_either_wide")


def row(name: str, label: int, gap: float, other: float | None, chars: int = 60) -> dict[str, Any]:
    """A FAKE English record `gap` logits under the line that the MiniLM verifier leaves, read by e5 at `other`."""
    return {"set": name, "row": 0, "label": label, "lane": "minilm", "flagged_by_model": False, "gap": gap} | {
        "verifier": None,
        "other": other,
        "chars": chars,
    }


def test_the_candidate_changes_only_the_either_band_and_says_where_it_came_from(tmp_path: Path) -> None:
    module = wide()
    module.write_candidate(tmp_path)
    packaged = {lane: VetoWeights.load(shipped_weights(lane)) for lane in ("minilm", "e5")}
    written = {lane: VetoWeights.load(tmp_path / weights_file_name(lane)) for lane in ("minilm", "e5")}
    minilm = written["minilm"]
    assert (minilm.raise_either_band, minilm.raise_either_tau, minilm.raise_either_chars) == (12.0, 2.0, 120)
    assert minilm.raise_either_reading == "whole"
    assert "forty-first round" in minilm.meta["either_raise_chosen"]
    for lane in ("minilm", "e5"):
        before, after = packaged[lane], written[lane]
        assert (after.tau, after.raise_band, after.raise_tau) == (before.tau, before.raise_band, before.raise_tau)
        assert np.array_equal(after.head_weight, before.head_weight)
    e5 = written["e5"]
    assert (e5.raise_either_band, e5.meta) == (packaged["e5"].raise_either_band, packaged["e5"].meta)
    assert packaged["minilm"].raise_either_band == 6.0  # the packaged point the round compares with


def test_wide_raises_a_short_request_past_the_packaged_band_and_the_sweep_names_its_sets() -> None:
    module = wide()
    far = round_module("intent_either_far")
    quiet = [row(f"public-{name}", 0, 20.0, None) for name in ("sage", "healthcaremagic", "icliniq", "enron")]
    records = [*quiet, row("chat37", 1, 10.0, 2.5), row("chat37", 0, 10.0, 1.0), row("v50", 1, 10.0, 2.5, 150)]
    summary = far.summarise(records, LINE, (module.CAPS, module.BANDS, module.LINES), lambda points: None, module.SETS)
    assert summary["sets"] == list(module.SETS)
    at_wide, at_shipped = (
        module.point_at(summary["points"], module.WIDE),
        module.point_at(summary["points"], module.SHIPPED),
    )
    assert (at_wide["requests_raised"], at_wide["benign_raised"]) == (1, 0)  # the 150-character request: past the cap
    assert at_shipped["requests_raised"] == 0  # 10 logits under: past band 6
    assert at_wide["development_english_benign_read_by_e5"]["k"] == 1  # the benign turn costs a reading either way
    assert at_shipped["development_english_benign_read_by_e5"]["k"] == 0
