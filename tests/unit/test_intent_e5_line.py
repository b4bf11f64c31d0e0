"""`benchmarks/intent_e5_line.py`, the twenty-sixth round: the e5 veto line above the operating point. What the round's
reader relies on: the shipped line is read capped as the packaged file reads it, every other line with
`veto_over_point`; ties go to the shipped point; the leave-one-set-out sum counts each set with the point the other
sets chose, so a gain only one set shows does not pass; the candidate folder holds the packaged MiniLM file as it is
and the e5 file with the chosen line. Driven on FAKE records (no model reads), the candidate on the packaged files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

LINE = 2.0  # the operating point's log-odds in these records


def line_round() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_e5_line

    return intent_e5_line


def flag(name: str, label: int, verifier: float) -> dict[str, Any]:
    """A FAKE e5-lane record of a row the model flags, read by the verifier at `verifier`."""
    return {
        "set": name,
        "row": 0,
        "label": label,
        "lane": "e5",
        "flagged_by_model": True,
        "gap": -1.0,
        "verifier": verifier,
    }


def test_the_shipped_line_reads_capped_and_the_others_let_through_above_the_point() -> None:
    round26 = line_round()
    points = round26.grid(round26.shipped_settings())
    assert len(points) == len(round26.LINES) * len(round26.RAISE_TAUS)
    assert points[0] == round26.shipped_settings()  # the packaged file, as it reads now
    assert [p["over_point"] for p in points] == [p["tau"] != 2.5 for p in points]
    by_line = {(p["tau"], p["raise_tau"]): p for p in points}
    between = flag("v26", 0, 2.2)  # under the shipped line 2.5, over the point's log-odds (2.0 here)
    assert round26.flags(between, points[0], LINE)  # capped: it stands, as the packaged file lets it
    assert not round26.flags(between, by_line[(3.0, 3.0)], LINE)  # over the point: let through
    benign = flag("v26", 0, 3.2)  # under lines 3.5 and up
    assert round26.flags(benign, by_line[(3.0, 3.0)], LINE) and not round26.flags(benign, by_line[(3.5, 3.0)], LINE)
    with pytest.raises(SystemExit, match="not the one this round compared with"):
        round26.grid(round26.shipped_settings() | {"tau": 2.0})


def test_the_choice_breaks_ties_to_the_shipped_point_and_leave_one_set_out_counts_each_set_by_the_others() -> None:
    round26 = line_round()
    points = round26.grid(round26.shipped_settings())
    request = flag("v27", 1, 4.5)  # let through from line 5 up
    one_benign = [flag("v26", 0, 3.2), request]
    chosen = round26.choose(one_benign, points, LINE)
    assert (chosen["tau"], chosen["raise_tau"], chosen["errors"]) == (3.5, 3.0, 0)  # ties: lower line, raise line
    assert round26.choose([request], points, LINE)["tau"] == 2.5  # nothing to gain: the shipped point
    # one set alone shows the gain: held out, the others choose the shipped point, so the sum does not move
    alone = round26.leave_one_set_out(one_benign, points, LINE)
    assert (alone["errors"], alone["shipped_errors"]) == (1, 1)
    assert alone["per_set"]["v26"]["chosen"] == points[0]  # the setting alone, without its counts
    # a second set with the same kind of row: each held set is counted with the other's choice, and the gain holds
    two = round26.leave_one_set_out([*one_benign, flag("chat13", 0, 3.4)], points, LINE)
    assert (two["errors"], two["shipped_errors"]) == (0, 2)


def test_the_candidate_holds_the_packaged_minilm_file_and_the_e5_file_with_the_chosen_line(tmp_path: Path) -> None:
    round26 = line_round()
    point = round26.shipped_settings() | {"tau": 4.0, "raise_tau": 4.0, "over_point": True}
    round26.write_candidate(tmp_path, point)
    minilm = shipped_weights("minilm")
    assert (tmp_path / minilm.name).read_bytes() == minilm.read_bytes()
    packaged, written = VetoWeights.load(shipped_weights("e5")), VetoWeights.load(tmp_path / shipped_weights("e5").name)
    assert (written.tau, written.raise_tau, written.raise_band, written.veto_over_point) == (4.0, 4.0, 4.0, True)
    assert written.model_version == packaged.model_version and "session 45" in written.meta["line_over_point_chosen"]
    assert written.meta["heldout_sets_trained_on"] == packaged.meta["heldout_sets_trained_on"]  # judges leave them out
