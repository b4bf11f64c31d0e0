"""The blind judge of the intent guard's second opinion (benchmarks/intent_veto_judge.py).

A blind set is only a judge if it is read once, through the configurations named before, and never
scores a text the guard was fitted on: these tests check those rules before any model is loaded.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import intent_verifier as iv  # noqa: E402
import intent_veto_judge as judge  # noqa: E402
import train_intent as ti  # noqa: E402


def _candidate(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for encoder in ("minilm", "e5"):
        (folder / f"intent_veto_{encoder}.npz").write_bytes(b"")
    return folder


def test_an_unknown_set_is_refused_with_the_known_names() -> None:
    with pytest.raises(SystemExit, match=r"no held-apart set 'v99' \(known: .*chat2.*v15"):
        judge.main(["--set", "v99"])


def test_a_candidate_folder_without_both_veto_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "intent_veto_minilm.npz").write_bytes(b"")
    with pytest.raises(SystemExit, match=r"needs intent_veto_minilm\.npz and intent_veto_e5\.npz"):
        judge.main(["--set", "v15", "--candidate", str(tmp_path / "half")])


def test_two_candidates_that_would_share_a_name_in_the_results_are_refused(tmp_path: Path) -> None:
    first, second = _candidate(tmp_path / "a" / "refit"), _candidate(tmp_path / "b" / "refit")
    with pytest.raises(SystemExit, match="different names"):
        judge.main(["--set", "v15", "--candidate", str(first), "--candidate", str(second)])


def test_a_set_already_read_is_not_read_blind_again() -> None:
    read = next(
        name for name in ti.HELDOUT_SETS if (BENCHMARKS / "results" / f"intent_veto_judge_{name}.json").exists()
    )
    with pytest.raises(SystemExit, match="a blind set is read once"):
        judge.main(["--set", read])


def test_the_judge_needs_the_shared_data_to_leave_out_trained_rows(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"needs \.\./shared/data"):
        judge.main(["--set", "v15", "--again", "--data", str(tmp_path)])


def test_rows_the_guard_was_fitted_on_are_left_out_and_the_rest_keep_their_line_numbers(shared_data: Path) -> None:
    pair = iv.contrastive_pairs()[0][0].text
    corpus_row = ti.build_corpus(shared_data).train[0].text
    fresh = "Which bird did the fable about the crow and the fox have in mind, exactly? (a row no one wrote before)"
    rows = [ti.Example(text, 0, "hard", "en", "heldout") for text in (fresh, pair.upper(), corpus_row + "!", fresh)]
    assert judge.unseen_rows(rows, shared_data) == [0, 3]
