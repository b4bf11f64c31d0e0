"""What a second opinion (verifier) is fitted on (issue 18): the first stage's training rows, the contrastive pairs and,
since session 42, spent held-apart sets. Used by `intent_verifier.py` (the fit and its rating),
`intent_verifier_loo.py` and `intent_veto_judge.py` (which leaves the pairs out of a judge's rows).
"""

from __future__ import annotations

import argparse

import intent_sets as isets
import query_sets as qs

# contrastive pairs written in session 26 (an innocent question and a request worded alike; two
# helper sessions blind to every held-apart set): they train the verifier only, not the first stage;
# session 27 added 600 more (v15a, v15b), weighted toward the kinds still flagged on the development sets;
# session 28 600 more (v16a, v16b), mostly chat follow-ups about the assistant's own answer against
# requests for the material behind it, in 70 languages
PAIRS = tuple(
    qs.REPO / "benchmarks" / "data" / f"intent_train_pairs_{version}{part}.jsonl"
    for version in ("v14", "v15", "v16")
    for part in "ab"
)
PAIR_TEST_SHARE = 15  # percent of the pairs (by pair, never one row of a pair) kept out as "pairs-test"


def contrastive_pairs() -> tuple[list[isets.Example], list[isets.Example]]:
    """(training rows, test rows) of `PAIRS`; both rows of a pair fall on the same side."""
    train: list[isets.Example] = []
    test: list[isets.Example] = []
    for path in PAIRS:
        if not path.is_file():
            raise SystemExit(f"{path.name} is missing (run with --no-pairs to fit and rate without the pairs)")
        for row in isets.read_rows(path):
            example = isets.Example(row["text"], int(row["label"] == "attack"), row["style"], row["lang"], "pairs")
            side = test if isets.bucket(f"{path.name}:{row['pair']}") < PAIR_TEST_SHARE else train
            side.append(example)
    return train, test


def training_rows(corpus: isets.Corpus, pairs: bool, heldout_sets: tuple[str, ...] = ()) -> list[isets.Example]:
    """What a verifier is fitted on: the first stage's training rows, the training pairs with `pairs`, and every row of
    the held-apart sets `heldout_sets` (source `heldout-<set>`, so their benign rows weigh as the burned sets' do;
    session 42: spent development sets, for the verifier only, never for the first stage)."""
    extra = [
        isets.Example(e.text, e.label, e.style, e.lang, f"heldout-{name}")
        for name in heldout_sets
        for e in isets.heldout(isets.HELDOUT_SETS[name])
    ]
    return corpus.train + (contrastive_pairs()[0] if pairs else []) + extra


def add_pairs_switch(parser: argparse.ArgumentParser) -> None:
    """`--no-pairs`: fit (and rate) without the contrastive pairs, as session 25 did."""
    parser.add_argument(
        "--no-pairs", dest="pairs", action="store_false", help="fit and rate without the pairs (as session 25)"
    )
