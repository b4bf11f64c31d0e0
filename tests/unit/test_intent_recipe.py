"""The intent model's training recipe keeps its evaluation sets apart (benchmarks/train_intent.py).

The shipped model's figures are only honest if no judge or evaluation row is a training or
calibration row: these tests check the splitting rules the recipe relies on, not any score.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import train_intent as ti  # noqa: E402


def test_the_written_requests_no_model_trains_on_are_exactly_the_untrained_ones() -> None:
    trained = {row["text"] for row in ti.written_rows(attacks=True, trained=True) if row["label"] == 1}
    untrained = {example.text for example in ti.written_requests()}
    every = {row["text"] for path in ti.WRITTEN_ATTACKS for row in ti._rows(path)}
    assert trained and untrained
    assert not trained & untrained
    assert trained | untrained == every
    # what trains: non-English, no paraphrase, and none of v10's padded or obfuscated requests (each
    # of those cost PIDE-medical, a published family, its 0.95 goal)
    untrained_rows = [row for path in ti.WRITTEN_ATTACKS for row in ti._rows(path) if row["text"] in untrained]
    assert all(
        row["lang"] == "en"
        or row["style"] == "paraphrase"
        or (row["id"].startswith("ta10-") and row["style"] in ("padded", "obfuscated"))
        for row in untrained_rows
    )
    assert not any(row["lang"] == "en" or row["style"] == "paraphrase" for row in ti.written_rows() if row["label"])
    # and v10's padded and obfuscated requests never train, whatever their language
    assert not [
        row
        for path in ti.WRITTEN_ATTACKS
        for row in ti._rows(path)
        if row["text"] in trained and row["id"].startswith("ta10-") and row["style"] in ("padded", "obfuscated")
    ]
    # both hand-written files feed the recipe
    assert {row["id"][:4] for path in ti.WRITTEN_ATTACKS for row in ti._rows(path) if row["text"] in trained} == {
        "ta9-",
        "ta10",
    }


def test_a_judge_row_equal_to_a_training_text_punctuation_aside_is_dropped() -> None:
    corpus = ti.Corpus(train=[ti.Example("Thank you.", 0, "chat", "en", "chat")])
    judge = [ti.Example(text, 0, "chat", "en", "heldout") for text in ("thank you", "Thanks a lot!")]
    assert [example.text for example in ti.unseen(judge, corpus)] == ["Thanks a lot!"]


def test_the_judge_is_a_held_apart_set_that_trains_nothing() -> None:
    assert ti.JUDGES == ("v10",)
    assert (BENCHMARKS / "data" / "intent_heldout_v10.jsonl").is_file()
    assert all(version in ti.HELDOUT_SETS and version not in ti.TRAIN_HELDOUT for version in ti.JUDGES)
    # its development sets are not trained on either
    assert not {"v8", "v9", "chat"} & set(ti.TRAIN_HELDOUT)


def test_written_benign_rows_train_or_test_but_never_calibrate(shared_data: Path) -> None:
    corpus = ti.build_corpus(shared_data)
    written = {row["text"] for path in ti.WRITTEN_BENIGN for row in ti._rows(path)}
    assert not any(example.text in written for example in corpus.calib)
    tested = {example.text for name in ("written-hard", "written-chat") for example in corpus.test.get(name, [])}
    trained = {example.text for example in corpus.train if example.source == "written" and example.label == 0}
    assert tested and trained and not tested & trained
    assert tested | trained == written
    # and no held-apart judge row is trained on
    judged = {example.text for version in ti.JUDGES for example in ti.heldout(ti.HELDOUT_SETS[version])}
    assert not judged & {example.text for example in corpus.train}


@pytest.mark.parametrize("text", ["", "   "])
def test_enron_split_of_an_empty_opening_is_still_a_split(text: str) -> None:
    assert ti.enron_split(text, "") in ("train", "calib", "test")
