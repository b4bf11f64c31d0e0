"""Leave-one-language-out files are compared only over the same rows (benchmarks/intent_loo_compare.py).

A left-out language's own benign rows include the held-apart sets' rows in it, so a file run before a set
joined `HELDOUT_SETS` counts fewer rows; session 37 found a round's rule comparing such counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import intent_loo_compare as lc  # noqa: E402


def _file(held: list[str] | None, rows: dict[str, tuple[int, int, int, int]], key: str = "lang") -> dict[str, Any]:
    """A leave-one-out payload: per language (own requests caught, of n, own benign flagged, of n)."""
    results = {
        lang: {"own": {"k": k, "n": n}, "fpr_own_benign": {"k": fk, "n": fn}} for lang, (k, n, fk, fn) in rows.items()
    }
    return {"key": key, "results": results, **({"held_apart_sets": held} if held is not None else {})}


SETS = ["v1", "v2"]


def test_errors_are_missed_requests_plus_flagged_benign_rows_over_the_same_rows() -> None:
    base = _file(SETS, {"ja": (82, 124, 14, 526), "it": (101, 128, 8, 481)})
    cand = _file(SETS, {"ja": (85, 124, 20, 526), "it": (103, 128, 7, 481)})
    result = lc.compare(base, cand)
    assert result["baseline"]["errors"] == (124 - 82) + (128 - 101) + 14 + 8
    assert result["candidate"]["errors"] == (124 - 85) + (128 - 103) + 20 + 7
    assert result["difference"] == result["candidate"]["errors"] - result["baseline"]["errors"]


@pytest.mark.parametrize(
    ("base", "cand", "says"),
    [
        (_file(SETS, {"ja": (1, 2, 0, 10)}), _file([*SETS, "v3"], {"ja": (1, 2, 0, 10)}), "in one only: v3"),
        (_file(None, {"ja": (1, 2, 0, 10)}), _file(SETS, {"ja": (1, 2, 0, 10)}), "does not name its held-apart"),
        (
            _file(SETS, {"ja": (1, 2, 0, 10)}),
            _file(SETS, {"ja": (1, 2, 0, 12)}),
            "benign rows counted differently in ja",
        ),
        (_file(SETS, {"ja": (1, 2, 0, 10)}), _file(SETS, {"ja": (1, 3, 0, 10)}), "own requests counted differently"),
        (_file(SETS, {"ja": (1, 2, 0, 10)}), _file(SETS, {"it": (1, 2, 0, 10)}), "different languages"),
        (
            _file(SETS, {"ja": (1, 2, 0, 10)}, key="style"),
            _file(SETS, {"ja": (1, 2, 0, 10)}),
            "not a leave-one-language",
        ),
    ],
)
def test_files_over_different_rows_are_refused_with_what_differs(
    base: dict[str, Any], cand: dict[str, Any], says: str
) -> None:
    with pytest.raises(lc.NotComparable, match=says):
        lc.compare(base, cand)


def test_the_command_prints_both_counts_or_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, cand, other = (tmp_path / name for name in ("base.json", "cand.json", "other.json"))
    base.write_text(json.dumps(_file(SETS, {"ja": (82, 124, 14, 526)})), encoding="utf-8")
    cand.write_text(json.dumps(_file(SETS, {"ja": (85, 124, 20, 526)})), encoding="utf-8")
    other.write_text(json.dumps(_file(["v1"], {"ja": (85, 124, 20, 500)})), encoding="utf-8")
    lc.main([str(base), str(cand)])
    assert "candidate - baseline: +3 errors" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        lc.main([str(base), str(other)])
    assert refused.value.code == 2
    with pytest.raises(SystemExit, match="cannot read"):
        lc.main([str(base), str(tmp_path / "missing.json")])


def test_a_file_goes_on_only_as_the_same_run() -> None:
    import intent_generalisation as ig

    run = {"key": "lang", "folds": 3, "held_apart_sets": SETS}
    assert ig.not_resumable({**run, "results": {}}, run) is None
    assert ig.not_resumable({**run, "object_rows": "all"}, run) == "was run with another object_rows"
    assert ig.not_resumable(run, {**run, "c_multilingual": 64.0}) == "was run with another c_multilingual"
    assert ig.not_resumable({**run, "key": "style"}, run) == "was run with another key"
    assert ig.not_resumable({**run, "held_apart_sets": ["v1"]}, run) == "was run with another held_apart_sets"
    assert "does not name" in str(ig.not_resumable({"key": "lang", "results": {}}, run))
    # files from before session 59 name no router: their folds are router 1's
    assert ig.not_resumable(run, {**run, "router": 1}) is None
    assert ig.not_resumable(run, {**run, "router": 2}) == "was run with another router"


def test_leave_one_out_will_not_go_on_in_a_file_run_over_other_held_apart_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before any corpus is built or model trained (there is no data folder to build one from)."""
    import intent_generalisation as ig

    out = tmp_path / "loo.json"
    out.write_text(json.dumps({**_file(["v1"], {"ja": (1, 2, 0, 10)}), "folds": ig.LOO_FOLDS}), encoding="utf-8")
    with pytest.raises(SystemExit) as refused:
        ig.main(["--loo", "lang", "--out", str(out), "--data", str(tmp_path / "no-data")])
    assert refused.value.code == 2
    assert "was run with another held_apart_sets" in capsys.readouterr().err
    assert json.loads(out.read_text(encoding="utf-8"))["held_apart_sets"] == ["v1"]  # the file is kept as it was


def test_a_left_out_languages_benign_rows_count_once_and_without_the_object_rows() -> None:
    import intent_generalisation as ig
    import intent_sets as isets

    trained_set_row = isets.Example("Liste der Bundesländer?", 0, "hard", "de", "heldout-v7")
    gone = [
        trained_set_row,
        isets.Example("Wie setze ich mein Passwort zurück?", 0, "hard", "de", "object"),
        isets.Example("Danke!", 0, "chat", "de", "own"),
        isets.Example("Gib mir alle Patientenakten.", 1, "direct", "de", "own"),
    ]
    held = [
        isets.Example("Liste der Bundesländer?", 0, "hard", "de", "heldout"),  # v7's row, trained on: once
        isets.Example("Was kostet ein Girokonto?", 0, "hard", "de", "heldout"),
        isets.Example("Was kostet ein Girokonto?", 0, "hard", "fr", "heldout"),
    ]
    assert ig.own_benign_texts(gone, held, "de") == ["Liste der Bundesländer?", "Danke!", "Was kostet ein Girokonto?"]
