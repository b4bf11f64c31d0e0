"""The thirty-fifth round (issue 18; session 52, model card): the either raise read whole. The e5 verifier reads a
short English near miss the MiniLM verifier leaves as its whole text (and second reading) only, not in pieces, and
reaches as far under the line as the shipped reading's time allows.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_either_whole.py --rows runs/r36/either_far_rows.json \
        [--candidate DIR] [--wide DIR] [--time]

It reads the per-row records of `intent_either_far.py` (the eight read sets v39 to v42 and chat26 to chat29, less
their rows equal to a training row, and the public benign test buckets), adds each row's length in characters from its
text (so it needs ../shared/data), has the e5 verifier read whole every English row it could read within the grid's
widest band and longest cap, and sweeps `intent_either_far.summarise` over `CAPS` x `BANDS` x `LINES` on those
readings. `choose` takes the point the round's rule names, `choose_wide` the same without the development cost bound;
`--candidate DIR` and `--wide DIR` write their packaged files (for `intent_veto_judge.py --candidate DIR`). `--time`
also times, single-thread, the e5 verifier's reading of the development benign rows read at the widest band within
the shipped cap, whole
and in pieces, interleaved per row (the rule's "a whole reading costs half"). Prints a table and writes `--out`
(default `benchmarks/results/intent_either_whole.json`). Nothing here is blind: the judges are read by
`intent_veto_judge.py`.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from pathlib import Path
from typing import Any

import intent_e5_all_spent as all_spent
import intent_either_far as ef
import intent_either_short as es
import intent_raise as ir
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_weights
from ragshield.guards.intent_veto_reading import verifier_logits
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

CAPS = es.CAPS  # characters (`len` of the query text)
BANDS = (4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0)
LINES = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)
SHIPPED = (120, 5.0)  # the thirty-fourth round's point, read in pieces: cap, band
WHOLE_COST = 0.5  # a whole reading's time over one in pieces (session 52: 24.9 / 50.8 ms, then 23.7 / 48.3; `--time`)
OUT = qs.REPO / "benchmarks" / "results" / "intent_either_whole.json"


def read_whole(
    records: list[dict[str, Any]], texts: dict[str, list[str]], band: float = max(BANDS), cap: int = max(CAPS)
) -> list[dict[str, Any]]:
    """The records with "other" the e5 verifier's whole reading of each English row it could read within `band` and
    `cap` (default the grid's widest band and longest cap; None for the rest: no point of the grid reads them)."""
    guard = ExtractionIntent(second_opinion=False)
    guard.veto_ = IntentVeto({lane: shipped_weights(lane) for lane in ENCODERS}, raises=False)
    minilm = VetoWeights.load(shipped_weights("minilm"))
    out = [r | {"other": None} for r in records]
    for name, rows in texts.items():
        wanted = [r["row"] for r in out if r["set"] == name and ef.read_by_other(r, band, minilm, cap)]
        # read as if routed: the e5 verifier reads the English rows
        got = ir.lane_logits(guard, rows, wanted, [True] * len(rows), math.inf, reading="whole", near_miss=True)
        for r in out:
            if r["set"] == name and r["row"] in got:
                r["other"] = round(got[r["row"]], 4)
    return out


def cost_bound(points: list[dict[str, Any]]) -> float:
    """The most of the development English benign rows the e5 verifier may read whole: the share the shipped point
    reads in pieces, over `WHOLE_COST` (so the time stays the shipped reading's)."""
    shipped = next(p for p in points if (p["chars"], p["band"]) == SHIPPED)
    return float(shipped["development_english_benign_read_by_e5"]["rate"]) / WHOLE_COST


def choose(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The thirty-fifth round's point: `intent_either_short.best` within `cost_bound`."""
    return es.best(points, cost_bound(points))


def choose_wide(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    """WIDE, for comparison: `intent_either_short.best` without the development cost bound (the public one kept)."""
    return es.best(points, 1.0)


def timed(records: list[dict[str, Any]], texts: dict[str, list[str]]) -> dict[str, Any]:
    """Milliseconds of one core per e5 reading (stopped at logit 3) of each development English benign row read at the
    widest band within the shipped cap, whole and in pieces, in a random order per row."""
    minilm = VetoWeights.load(shipped_weights("minilm"))
    model = ExtractionIntent(second_opinion=False)._model()
    verifier = IntentVeto().verifier("e5", str(model.meta.get("model_version")))
    if verifier is None:
        raise SystemExit("the e5 verifier did not load: nothing to time")
    rows = [
        texts[r["set"]][r["row"]]
        for r in records
        if not r["set"].startswith("public-")
        and r["label"] == 0
        and ef.read_by_other(r, max(BANDS), minilm, SHIPPED[0])
    ]
    spent: dict[str, list[float]] = {"pieces": [], "whole": []}
    with qs.single_thread():
        verifier_logits(verifier.logits, {0: "a warm-up question"}, model.second_reading, model.feature_version)
        for k, text in enumerate(rows):
            for how in random.Random(k).sample(sorted(spent), 2):
                read = functools.partial(
                    verifier_logits, verifier.logits, {0: text}, model.second_reading, model.feature_version
                )
                spent[how].append(qs.cpu_time_us(functools.partial(read, stop_at=3.0, reading=how)) / 1000)
    means = {how: statistics.fmean(ms) for how, ms in spent.items()}
    return {
        "n": len(rows),
        **{f"{how}_ms": {"mean": means[how], "median": statistics.median(ms)} for how, ms in spent.items()},
        "whole_over_pieces": means["whole"] / means["pieces"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = ir.reading_parser(__doc__, OUT.name)
    parser.add_argument("--candidate", type=Path, help="write the chosen point's veto files here")
    parser.add_argument("--wide", type=Path, help="write WIDE's veto files here (no development cost bound)")
    parser.add_argument("--time", action="store_true", help="time the whole and pieces readings (about a minute)")
    args = parser.parse_args(argv)
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: the rows' lengths come from their texts in ../shared/data")
    texts = es.texts_of(args.data)
    records = es.with_lengths(ir.records_of(args, ef.reader(), ef.SETS, all_spent.TRAINED_ON), texts)
    line_of_model = logit(ExtractionIntent(second_opinion=False)._model().threshold)
    summary = ef.summarise(read_whole(records, texts), line_of_model, (CAPS, BANDS, LINES), choose)
    summary |= {"reading": "whole", "most_development_read": cost_bound(summary["points"])}
    summary["wide"] = choose_wide(summary["points"])
    if args.time:
        summary["time"] = timed(records, texts)
    print(ef.table(summary))
    print(f"WIDE: {summary['wide']}")
    if "time" in summary:
        print(f"time: {summary['time']}")
        if summary["time"]["whole_over_pieces"] > WHOLE_COST:  # the bound assumes half: say so when this run disagrees
            print(f"warning: a whole reading took {summary['time']['whole_over_pieces']:.2f} of one in pieces here")
    qs.write_json(args.out, summary)
    print(f"wrote {args.out}")
    for folder, point in ((args.candidate, summary["chosen"]), (args.wide, summary["wide"])):
        if folder and point:
            ef.write_candidate(folder, point["line"], point["band"], point["chars"], "whole")
            print(f"wrote {folder}")


if __name__ == "__main__":
    main()
