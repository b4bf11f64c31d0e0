"""Which hard-benign questions `benchmarks/benign_users.py` makes its stress users of: by default the
read held-apart sets the shipped intent model never trained on, or the sets named (`--hard-sets`),
so that two models can be read on the same users."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import benign_users as bu  # noqa: E402
import intent_sets as isets  # noqa: E402
from ragshield.guards.intent_model import IntentModel  # noqa: E402


def _benign(version: str) -> list[str]:
    return [e.text for e in isets.heldout(isets.HELDOUT_SETS[version]) if e.label == 0]


def test_the_default_stress_users_ask_only_rows_of_sets_the_shipped_model_never_trained_on() -> None:
    trained = set(isets.heldout_trained_on(IntentModel.load()))
    default = bu.unseen_hard_set()
    versions = [v for v in isets.HELDOUT_SETS if v not in trained and not v.startswith("chat")]
    assert versions and not set(versions) & trained
    assert default.texts == [text for version in versions for text in _benign(version)]
    assert "(not trained on)" in default.note


def test_named_sets_give_their_benign_rows_in_order_and_unknown_or_unread_names_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    named = bu.unseen_hard_set(["v10", "v8"])
    assert named.texts == _benign("v10") + _benign("v8") and "(named)" in named.note
    with pytest.raises(SystemExit, match=r"unknown or unread held-apart sets \['v99'\]"):
        bu.unseen_hard_set(["v8", "v99"])
    monkeypatch.setattr(isets, "UNREAD_JUDGES", {"v98": tmp_path / "v98.jsonl"})
    with pytest.raises(SystemExit, match=r"unknown or unread held-apart sets \['v98'\]"):
        bu.unseen_hard_set(["v98"])
