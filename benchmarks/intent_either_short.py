"""The thirty-fourth round (issue 18; session 51, model card): the either raise for short English queries, as the
default. The e5 verifier reads an English near miss the MiniLM verifier leaves only when the query is at most a cap
of characters long.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_either_short.py --rows runs/r36/either_far_rows.json \
        [--candidate DIR] [--far DIR]

It reads the per-row records of `intent_either_far.py` (the eight read sets v39 to v42 and chat26 to chat29, less
their rows equal to a training row, and the public benign test buckets: no text), adds each row's length in
characters from its text (so it needs ../shared/data), and sweeps `intent_either_far.summarise` over `CAPS` x
`BANDS` x `LINES`. `choose` takes the point the round's rule names; `--candidate DIR` writes the packaged files with
the MiniLM file naming it (for `intent_veto_judge.py --candidate DIR`), and `--far DIR` the thirty-third round's
opt-in (band 8, line 5, any length) beside it. Prints a table and writes `--out` (default
`benchmarks/results/intent_either_short.json`). Nothing here is blind: the judges are read by `intent_veto_judge.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import intent_e5_all_spent as all_spent
import intent_either_far as ef
import intent_raise as ir
import intent_sets as isets
import intent_veto_judge as judge
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit

CAPS = (80, 120, 160, 200)  # characters (`len` of the query text)
BANDS = (4.0, 5.0, 6.0, 8.0, 12.0)
LINES = (3.0, 4.0, 5.0, 6.0, 7.0)
MOST_BENIGN_RAISED = 2  # development benign rows
MOST_READ = 0.05  # of the development English benign rows, and of the public English rows, the e5 verifier reads
FAR = (5.0, 8.0)  # the thirty-third round's opt-in: line, band (any length)
OUT = qs.REPO / "benchmarks" / "results" / "intent_either_short.json"


def development_rows(
    data: Path, sets: tuple[str, ...] = ef.SETS, trained: tuple[str, ...] = all_spent.TRAINED_ON
) -> dict[str, list[isets.Example]]:
    """Per development set (`sets`, default this round's), the rows `intent_raise.read_all` read, in its order (less
    those equal to a training row, of v13 or of the held-apart sets `trained`)."""
    rows = {}
    for name in sets:
        written = isets.heldout(isets.HELDOUT_SETS[name])
        rows[name] = [written[i] for i in judge.unseen_rows(written, data, trained)]
    return rows


def texts_of(
    data: Path, sets: tuple[str, ...] = ef.SETS, trained: tuple[str, ...] = all_spent.TRAINED_ON
) -> dict[str, list[str]]:
    """Per record set (the development sets, as `development_rows` gives them, and the public buckets), its rows'
    texts in the order `intent_raise.read_all` read them."""
    texts = {name: [e.text for e in rows] for name, rows in development_rows(data, sets, trained).items()}
    corpus = ir.ti.build_corpus(data)
    texts |= {f"public-{name}": [e.text for e in corpus.test[name]] for name in ir.PUBLIC}
    return texts


def with_lengths(records: list[dict[str, Any]], texts: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Each record with its text's length in characters ("chars"); refuses records read from other rows."""
    for name, rows in texts.items():
        if sum(r["set"] == name for r in records) != len(rows):
            raise SystemExit(f"the records of {name} are not the rows read now: read them again with a new --rows")
    return [r | {"chars": len(texts[r["set"]][r["row"]])} for r in records]


def best(points: list[dict[str, Any]], most_read: float) -> dict[str, Any] | None:
    """Of the points keeping every public bucket (Enron too) within 1%, raising at most `MOST_BENIGN_RAISED` benign
    development rows and having the e5 verifier read at most `most_read` of the development English benign rows and
    `MOST_READ` of the public English rows, the most development requests raised, then fewer benign rows raised
    (development and public), the narrower band, the higher line, the shorter cap (the thirty-fourth and thirty-fifth
    rounds' choice)."""
    return ef.best_of(
        points,
        lambda p: (
            p["public_within_goal"]
            and p["benign_raised"] <= MOST_BENIGN_RAISED
            and p["development_english_benign_read_by_e5"]["rate"] <= most_read
            and p["public_english_read_by_e5"]["rate"] <= MOST_READ
        ),
        lambda p: (-p["requests_raised"], ef.benign_raised(p), p["band"], -p["line"], p["chars"]),
    )


def choose(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The thirty-fourth round's point: `best` with the e5 verifier reading at most `MOST_READ` of the development
    English benign rows."""
    return best(points, MOST_READ)


def main(argv: list[str] | None = None) -> None:
    parser = ir.reading_parser(__doc__, OUT.name)
    parser.add_argument("--candidate", type=Path, help="write the chosen point's veto files here")
    parser.add_argument("--far", type=Path, help="write the thirty-third round's opt-in (band 8, line 5) here")
    args = parser.parse_args(argv)
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: the rows' lengths come from their texts in ../shared/data")
    records = with_lengths(ir.records_of(args, ef.reader(), ef.SETS, all_spent.TRAINED_ON), texts_of(args.data))
    line_of_model = logit(ExtractionIntent(second_opinion=False)._model().threshold)
    summary = ef.summarise(records, line_of_model, (CAPS, BANDS, LINES), choose)
    print(ef.table(summary))
    qs.write_json(args.out, summary)
    print(f"wrote {args.out}")
    chosen = summary["chosen"]
    if args.candidate and chosen:
        ef.write_candidate(args.candidate, chosen["line"], chosen["band"], chosen["chars"])
        print(f"wrote {args.candidate}")
    if args.far:
        ef.write_candidate(args.far, *FAR)
        print(f"wrote {args.far}")


if __name__ == "__main__":
    main()
