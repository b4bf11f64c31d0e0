"""`benchmarks/intent_misses.py`: where the shipped guard's missed requests sit, and what a raise reaching beyond the
band would add. What a reader of its table relies on: a request is counted where the guard as shipped loses it (a flag
the veto lets through, a near miss in the band not raised, a row beyond the band), and a row beyond the band counts as
raised at every line its verifier logit reaches, public benign rows apart. Driven on FAKE records (no model reads)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights


def record(
    name: str, label: int, flagged: bool, gap: float, verifier: float | None, style: str = "s"
) -> dict[str, Any]:
    return {
        "set": name,
        "row": 0,
        "label": label,
        "lane": "minilm",
        "flagged_by_model": flagged,
        "gap": gap,
        "verifier": verifier,
        "style": style,
        "chars": 40,
    }


def test_missed_requests_are_placed_where_the_shipped_guard_loses_them_and_far_rows_count_per_raise_line() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import intent_misses as misses

    shipped = VetoWeights.load(shipped_weights("minilm"))
    band, raise_tau = shipped.raise_band or 0.0, shipped.raise_tau or 0.0
    records = [
        record("v26", 1, True, -1.0, -9.0, "chat-attack"),  # a flag the veto lets through
        record("v26", 1, True, -1.0, 9.0),  # a flag upheld: caught
        record("v26", 1, False, band - 0.5, raise_tau - 1.0, "chat-attack"),  # in the band, not raised
        record("v26", 1, False, band - 0.5, raise_tau + 1.0),  # raised: caught
        record("chat13", 1, False, band + 3.0, 4.5, "indirect"),  # beyond the band
        record("chat13", 0, False, band + 3.0, 2.5),  # benign beyond the band
        record("public-enron", 0, False, band + 1.0, 3.5),
    ]
    summary = misses.summarise(records)
    assert (summary["rows"], summary["requests"], summary["requests_missed"]) == (6, 5, 3)
    assert summary["missed_by_style"] == {"chat-attack": 2, "indirect": 1}
    assert summary["missed_by_place"] == {
        "minilm: beyond the band": 1,
        "minilm: flag let through": 1,
        "minilm: near miss not raised": 1,
    }
    assert summary["missed_by_style_and_place"]["chat-attack"] == {
        "minilm: flag let through": 1,
        "minilm: near miss not raised": 1,
    }
    by_line = {p["raise_line"]: p for p in summary["raised_beyond_the_band"]["minilm"]}
    assert [by_line[line]["requests_raised"] for line in misses.RAISE_LINES] == [1, 1, 1, 0, 0]
    assert [by_line[line]["benign_raised"] for line in misses.RAISE_LINES] == [1, 0, 0, 0, 0]
    assert by_line[3.0]["public_raised"] == {"enron": 1} and by_line[4.0]["public_raised"] == {}
    assert "| minilm: beyond the band | 1 |" in misses.table(summary)
