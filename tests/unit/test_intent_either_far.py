"""The session-48 exploration of English far misses read by the e5 verifier (`intent_either_far.py`). What its table
relies on: a row the MiniLM verifier already raises, a routed row, a flag or a row past the band is never counted as
raised by the e5 reading, and a public bucket's rate adds the rows raised to those the guard flags as shipped.
FAKE records throughout."""

from __future__ import annotations

from typing import Any

from intent_veto_fakes import round_module

from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

LINE = 2.48  # v13's operating point in log-odds


def far() -> Any:
    return round_module("intent_either_far")


def row(
    name: str, label: int, gap: float, verifier: float | None, other: float | None, lane: str = "minilm"
) -> dict[str, Any]:
    """A FAKE record `gap` logits under the line (negative: flagged), read by its verifier and by e5 ("other")."""
    return {"set": name, "row": 0, "label": label, "lane": lane, "flagged_by_model": gap < 0, "gap": gap} | {
        "verifier": verifier,
        "other": other,
    }


def test_only_english_near_misses_the_minilm_verifier_leaves_are_raised_by_the_e5_reading() -> None:
    module = far()
    minilm = VetoWeights.load(shipped_weights("minilm"))
    assert (minilm.raise_band, minilm.raise_tau) == (4.0, 2.0)
    assert module.raised_by_other(row("v41", 1, 7.0, None, 6.5), 8.0, 6.0, minilm)
    assert not module.raised_by_other(row("v41", 1, 7.0, None, 6.5), 6.0, 6.0, minilm)  # past the band
    assert not module.raised_by_other(row("v41", 1, 7.0, None, 5.5), 8.0, 6.0, minilm)  # under the line
    assert not module.raised_by_other(row("v41", 1, 3.0, 2.5, 9.0), 8.0, 6.0, minilm)  # MiniLM raises it already
    assert module.raised_by_other(row("v41", 1, 3.0, 1.0, 9.0), 8.0, 6.0, minilm)  # MiniLM leaves it
    assert not module.raised_by_other(row("v41", 1, 3.0, 1.0, 9.0, "e5"), 8.0, 6.0, minilm)  # routed
    assert not module.raised_by_other(row("v41", 1, -1.0, 1.0, 9.0), 8.0, 6.0, minilm)  # a flag
    assert not module.raised_by_other(row("v41", 1, 3.0, 1.0, None), 8.0, 6.0, minilm)  # too long to read


def test_a_public_bucket_counts_the_rows_raised_on_top_of_the_shipped_flags() -> None:
    module = far()
    calm = [row(f"public-{name}", 0, 20.0, None, None) for name in ("sage", "healthcaremagic", "icliniq")]
    enron = [row("public-enron", 0, 20.0, None, None) for _ in range(98)]
    enron += [row("public-enron", 0, -1.0, None, None), row("public-enron", 0, 7.0, None, 7.5)]
    records = [*calm, *enron, row("v41", 1, 7.0, None, 7.5), row("v41", 0, 7.0, None, 3.5)]
    points = {(p["band"], p["line"]): p for p in module.summarise(records, LINE)["points"]}
    wide = points[(8.0, 7.0)]
    assert (wide["requests_raised"], wide["benign_raised"]) == (1, 0)
    assert wide["public"]["enron"]["raised"] == 1 and wide["public"]["enron"]["flagged"]["k"] == 2
    assert not wide["public_within_goal"]  # 2 of 100 e-mails: over 1%
    narrow = points[(6.0, 7.0)]  # the e-mail lies past this band: only the flag that stands
    assert narrow["public"]["enron"]["flagged"]["k"] == 1 and narrow["public_within_goal"]
    # the cost: the public English rows e5 reads within the band (not flagged, not raised by MiniLM), of all of them
    assert (wide["public_english_read_by_e5"]["k"], wide["public_english_read_by_e5"]["n"]) == (1, 103)
    assert narrow["public_english_read_by_e5"]["k"] == 0


def test_a_row_is_read_by_e5_for_the_cost_only_within_the_band_and_when_minilm_leaves_it() -> None:
    module = far()
    minilm = VetoWeights.load(shipped_weights("minilm"))
    assert module.read_by_other(row("public-sage", 0, 7.0, None, None), 8.0, minilm)
    assert not module.read_by_other(row("public-sage", 0, 9.0, None, None), 8.0, minilm)  # past the band
    assert not module.read_by_other(row("public-sage", 0, 3.0, 2.5, None), 8.0, minilm)  # MiniLM raises it
    assert module.read_by_other(row("public-sage", 0, 3.0, 1.0, None), 8.0, minilm)  # MiniLM leaves it
    assert not module.read_by_other(row("public-sage", 0, -1.0, None, None), 8.0, minilm)  # a flag
    assert not module.read_by_other(row("public-sage", 0, 3.0, 1.0, None, "e5"), 8.0, minilm)  # routed


def point(band: float, line: float, requests: int, benign: int, medical: int, enron: int, read: int) -> dict[str, Any]:
    """A FAKE grid point: `medical` rows raised in each medical bucket of 100 rows, `read` of 100 English rows read."""
    share = {"rate": 0.0, "k": 0, "n": 100}
    public = {name: {"raised": medical, "flagged": share | {"rate": medical / 100}} for name in far().MEDICAL}
    public["enron"] = {"raised": enron, "flagged": share | {"rate": enron / 100}}
    return {
        "band": band,
        "line": line,
        "requests_raised": requests,
        "benign_raised": benign,
        "public": public,
        "public_english_read_by_e5": share | {"k": read, "rate": read / 100},
    }


def test_the_round_chooses_the_fewest_errors_within_the_medical_goal_and_the_cost_bound() -> None:
    module = far()
    best = point(8.0, 5.0, 47, 1, 0, 30, 9)  # Enron far over 1%: not counted for an opt-in not over e-mail
    assert module.choose([point(6.0, 5.0, 30, 1, 0, 0, 3), best]) is best
    assert module.choose([point(6.0, 5.0, 30, 1, 0, 0, 3), point(12.0, 5.0, 90, 1, 0, 0, 11)])["band"] == 6.0  # cost
    assert module.choose([point(6.0, 5.0, 30, 1, 0, 0, 3), point(8.0, 4.0, 90, 1, 2, 0, 5)])["band"] == 6.0  # medical
    tie = [point(8.0, 5.0, 58, 5, 1, 0, 9), point(8.0, 4.0, 50, 0, 0, 0, 9)]  # same errors: fewer benign rows win
    assert module.choose(tie)["line"] == 4.0  # even at the lower line
    enron = [point(8.0, 5.0, 50, 0, 0, 9, 9), point(8.0, 4.0, 50, 0, 0, 2, 9)]  # Enron counts among the benign rows
    assert module.choose(enron)["line"] == 4.0
    bands = [point(8.0, 5.0, 50, 0, 0, 0, 9), point(6.0, 5.0, 50, 0, 0, 0, 5)]  # then the narrower band
    assert module.choose(bands)["band"] == 6.0
    lines = [point(6.0, 4.0, 50, 0, 0, 0, 5), point(6.0, 5.0, 50, 0, 0, 0, 5)]  # then the higher line
    assert module.choose(lines)["line"] == 5.0
    assert module.choose([point(12.0, 5.0, 90, 1, 0, 0, 11)]) is None


def test_the_candidate_is_the_packaged_files_with_the_either_line_and_band_on_the_minilm_file(tmp_path: Any) -> None:
    module = far()
    module.write_candidate(tmp_path, 5.0, 8.0)
    written = VetoWeights.load(tmp_path / "intent_veto_minilm.npz")
    packaged = VetoWeights.load(shipped_weights("minilm"))
    assert (written.raise_either_tau, written.raise_either_band) == (5.0, 8.0)
    assert (written.tau, written.raise_band, written.raise_tau) == (
        packaged.tau,
        packaged.raise_band,
        packaged.raise_tau,
    )
    assert (tmp_path / "intent_veto_e5.npz").read_bytes() == shipped_weights("e5").read_bytes()
