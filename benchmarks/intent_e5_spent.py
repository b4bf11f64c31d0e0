"""The thirtieth round toward v14 (issue 18): the e5 verifier refitted with ten more spent development sets (EX).

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_e5_spent.py --refit EX.npz --rows runs/r34/rows.json \\
        --calib-rows runs/r34/calib.json [--candidate DIR]

`--refit` is an e5 veto file fitted by `intent_verifier.py --encoder e5 --save --train-heldout` on the seventeenth
round's twelve sets and ten more (`TRAINED_ON`: v19 to v30 and chat6 to chat17, less v21 and chat8). The model alone
(v13) reads the twelve read sets neither e5 file trained on (`SETS`: v31 to v36, chat18 to chat23; a row equal to a
row of `TRAINED_ON` left out), the public benign test buckets and the calibration split, as the guard as shipped reads
them; each e5-lane flag and near miss is read by EX too ("refit"), up to the grid's highest lines, and each English
near miss the MiniLM verifier does not raise is read by EX ("other"; for the opt-in `raise_either`, not for the
rule). `--rows` and `--calib-rows` keep one record per row (no text).

The sweep applies the rule in the model card ("Toward v14, thirtieth round"), e5 lane only: over the seventeenth
round's grid (`intent_e5_refit.GRID`), EX's points that flag at most the packaged file's e5-lane benign development
rows and calibration rows; the fewest errors (`intent_veto_raise.choose`'s ties); none (no fallback) when no point
makes fewer errors than the packaged file at its settings. Both development conditions (fewer errors, and leaving each
set out) on the e5 lane. `--candidate DIR` writes EX with the chosen settings and the packaged MiniLM file into DIR,
for `intent_veto_judge.py --candidate DIR`, only when both conditions hold. Writes the sweep to `--out` (default
`benchmarks/results/intent_e5_spent.json`) and prints it. EX shipped, and the file that replaced it the same session
(the thirty-first round) trained on `SETS`, so the script now refuses to run (`refuse_fitted_reading`); its results
as run are in that file.
"""

from __future__ import annotations

import functools
from typing import Any

import intent_e5_enron as ee
import intent_e5_refit as er
import intent_loso as il
import intent_minilm_refit as mr
import intent_raise as ir
import intent_raise_either as either
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import shipped_weights

NEWER_SPENT = ("v26", "chat13", "v27", "chat14", "v28", "chat15", "v29", "chat16", "v30", "chat17")
TRAINED_ON = (*er.TRAINED_ON, *NEWER_SPENT)
SETS = (*(f"v{n}" for n in range(31, 37)), *(f"chat{n}" for n in range(18, 24)))
LANE = "e5"
OPT_IN_LINE = 4.0  # the opt-in's `raise_either` line (twenty-ninth round), measured again with EX, not chosen
SPENT_ROUND = er.SpentRound(
    LANE,
    SETS,
    er.GRID,
    mr.GRID,
    "intent_e5_spent",
    "1446313",
    "1446313",
    "twelve",
    leave_out_trained=True,
    calibration_budget=True,
    session=47,
    trained_on=TRAINED_ON,
)


def choose(rows: list[dict[str, Any]], points: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """The rule's point on `rows`: `points[0]` is the packaged file at its settings, the rest EX's grid points within
    the calibration bound; of those flagging at most the packaged point's benign rows, the fewest errors; the packaged
    point (EX not taken) when none makes fewer errors than it."""
    shipped, *refitted = (ee.e5_errors(rows, point, line) for point in points)
    return vr.choose(refitted, shipped)


def sweep(records: list[dict[str, Any]], calib: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """The e5 grid within the calibration bound, the chosen point and both development conditions on `SETS`."""
    dev = [r for r in records if not r["set"].startswith("public-")]
    rows = [r for r in dev if r["lane"] == LANE]
    candidates, bound = ee.e5_candidates(calib, line)
    points = [candidates[0], *candidates[2:]]  # the packaged settings, then EX's points within the bound
    count, pick = functools.partial(ee.e5_errors, line=line), functools.partial(choose, line=line)
    packaged = count(rows, points[0])
    chosen = pick(rows, points)
    loso = il.leave_one_set_out(rows, points, SETS, pick, count)
    print(f"e5 lane: packaged {packaged}\n  EX at the packaged settings {count(rows, candidates[1])}")
    print(f"  {len(points) - 1} grid points within the calibration bound {bound['packaged']}")
    english = [r for r in dev if r["lane"] == either.LANE]
    return {
        "sets": list(SETS),
        "trained_on": list(TRAINED_ON),
        "rows": {"e5_lane": len(rows), "english_lane": len(english), "calibration": len(calib)},
        "packaged": packaged,
        "refit_at_packaged_settings": count(rows, candidates[1]),
        "grid_within_calibration": [count(rows, p) for p in points[1:]],
        "calibration": bound,
        "chosen": None if chosen["file"] == "packaged" else chosen,
        "leave_one_set_out": loso,
        "passes_development": il.verdict(packaged, chosen, loso),
        "opt_in_english_lane": [either.errors(english, p, line) for p in ({"either": None}, {"either": OPT_IN_LINE})],
    }


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_e5_spent.json", refit="EX: the e5 veto refitted with TRAINED_ON")
    args = parser.parse_args(argv)
    ir.refuse_fitted_reading(SETS, "intent_e5_spent.json")
    model = ExtractionIntent(second_opinion=False)._model()
    er.check_refit(
        args.refit, shipped_weights(LANE), shipped_weights("minilm"), SPENT_ROUND, str(model.meta.get("model_version"))
    )
    line = logit(model.threshold)
    read = ee.reader(args.refit)
    records = ir.records_of(args, read, SETS, TRAINED_ON)
    calib = er.calibration_records(args.calib_rows, read, args.data)
    result = sweep(records, calib, line)
    if result["chosen"] is not None:
        settings = {"e5": result["chosen"]}
        result["public"] = ee.public_check(records, settings | {"minilm": {"either": None}}, line)
        vr.print_public(result["public"])
        result["opt_in_public"] = ee.public_check(records, settings | {"minilm": {"either": OPT_IN_LINE}}, line)
    qs.write_json(args.out, result)
    if args.candidate and result["passes_development"]:
        er.write_candidate(args.candidate, args.refit, result["chosen"], SPENT_ROUND, shipped_weights("minilm"))
        print(f"wrote {args.candidate}")


if __name__ == "__main__":
    main()
