"""The fortieth round toward v14 (issue 18): MA, the thirty-ninth round's MiniLM refit, with its veto line, band and
raise line chosen as that round chose them, but only among points whose per-row records flag, in each public benign
test bucket, at most as many rows as the packaged MiniLM file's records (MB).

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_minilm_public_bound.py --folded DIR_folded.npz \\
        --rows ROWS.json --calib-rows CALIB.json --candidate DIR

`--folded`, `--rows` and `--calib-rows` are what `intent_minilm_all_read.py` wrote (the folded refit and the cached
records of the development sets, the public buckets and the calibration split); nothing is read again to choose, and
the records must give the thirty-ninth round's grid again (`--round39`, its results), so they hold that refit. With
a point chosen, `--candidate DIR` holds it and the packaged e5 file, and the whole guard reads the calibration split
and the public buckets with it (`intent_e5_routed.steps`): step 1, the calibration split at most the packaged guard's
flags; step 2, each bucket at most 1% and at most the packaged guard's flags. The judges v50 and chat37 then decide
(`intent_veto_judge.py --set v50|chat37 --candidate DIR`; read in session 55: MB tied the packaged guard and did not
ship). Writes `--out` (default `benchmarks/results/intent_minilm_public_bound.json`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import intent_e5_refit as er
import intent_e5_routed as routed
import intent_minilm_all_read as round39
import intent_minilm_refit as mr
import intent_raise as ir
import intent_veto_judge as judge
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

ROUND = dataclasses.replace(round39.ROUND, script="intent_minilm_public_bound", session=55)


def public_flags(records: list[dict[str, Any]], point: dict[str, Any], other: dict[str, Any], line: float) -> dict:
    """Per public bucket, the rows the records flag with `point` in the MiniLM lane and `other` in the e5 lane."""
    checked = vr.public_check(records, {ROUND.lane: point, ROUND.other: other}, line)
    return {name: row["flagged"]["k"] for name, row in checked.items()}


def sweep(
    records: list[dict[str, Any]], calibration: list[dict[str, Any]], line: float, packaged: Path, other_file: Path
) -> dict[str, Any]:
    """The thirty-ninth round's points for the refit, kept where they flag at most the packaged file's calibration
    rows and, in every public bucket, at most its public rows; the rule's choice among them (None: none beats it)."""
    shipped = vr.shipped_point(vr.lane_points(records, ROUND.lane, line, ROUND.grid), ROUND.lane, packaged)
    other = vr.shipped_point(vr.lane_points(records, ROUND.other, line, ROUND.other_grid), ROUND.other, other_file)
    refitted = mr.refitted_view(records)
    points = vr.lane_points(refitted, ROUND.lane, line, ROUND.grid)
    budget = er.calibration_flags(calibration, points, shipped, ROUND.lane, line)
    bound = public_flags(records, shipped, other, line)
    read = [
        point | {"calibration": flags, "public": public_flags(refitted, point, other, line)}
        for point, flags in zip(points, budget["points"], strict=True)
    ]
    kept = [
        point
        for point in read
        if point["calibration"] <= budget["shipped"] and all(point["public"][name] <= bound[name] for name in bound)
    ]
    chosen = mr.choose(kept, shipped)
    shipped_read = shipped | {"calibration": budget["shipped"], "public": bound}
    return {"shipped": shipped_read, ROUND.other: other, "points": read, "kept": kept, "chosen": chosen}


def matches_round39(points: list[dict[str, Any]], round39_grid: list[dict[str, Any]]) -> bool:
    """Whether the refit's points read from the records are the thirty-ninth round's (`round39_grid`, from its
    results file): the records then hold the refit that round folded, not another file's."""
    if len(points) != len(round39_grid):
        return False
    return all({key: point[key] for key in grid} == grid for point, grid in zip(points, round39_grid, strict=True))


def public_bound_holds(read: dict[str, Any], candidate: Path) -> bool:
    """Step 2's second half: in each public bucket the whole guard with the candidate flags no more rows than the
    packaged guard (`read`: `intent_e5_routed.steps`'s readings)."""
    mine = judge.configuration_name(candidate)
    return all(
        read[name][mine]["benign_flagged"]["k"] <= read[name][routed.PACKAGED]["benign_flagged"]["k"]
        for name in ir.PUBLIC
    )


def whole_guard_steps(data: Path, candidate: Path) -> dict[str, Any]:
    """Steps 1 and 2 as the rule gives them: `intent_e5_routed.steps`, with step 2 also holding each public bucket
    to the packaged guard's flags."""
    steps = routed.steps(data, candidate)
    steps["public_holds"] = steps["public_holds"] and public_bound_holds(steps["read"], candidate)
    return steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--folded", type=Path, required=True, help="the folded refit intent_minilm_all_read.py wrote")
    parser.add_argument("--rows", type=Path, required=True, help="that round's cached per-row records")
    parser.add_argument("--calib-rows", type=Path, required=True, help="that round's cached calibration records")
    parser.add_argument("--candidate", type=Path, required=True, help="the folder the chosen point is written to")
    parser.add_argument(
        "--round39",
        type=Path,
        default=qs.REPO / "benchmarks" / "results" / f"{round39.ROUND.script}.json",
        help="the thirty-ninth round's results, whose grid the records must give again",
    )
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=qs.REPO / "benchmarks" / "results" / f"{ROUND.script}.json")
    args = parser.parse_args(argv)
    records = list(json.loads(args.rows.read_text()))
    wanted = {*ROUND.choosing, *(f"public-{name}" for name in ir.PUBLIC)}
    calibration = list(json.loads(args.calib_rows.read_text())) if args.calib_rows.exists() else []
    if (
        {record["set"] for record in records} != wanted
        or not calibration
        or {r["set"] for r in calibration} != {"calib"}
    ):
        raise SystemExit("give the thirty-ninth round's --rows and --calib-rows (this round reads no set to choose)")
    model = ExtractionIntent(second_opinion=False)._model()
    er.check_refit(
        args.folded,
        shipped_weights(ROUND.lane),
        shipped_weights(ROUND.other),
        ROUND,
        str(model.meta.get("model_version")),
    )
    result = sweep(
        records, calibration, logit(model.threshold), shipped_weights(ROUND.lane), shipped_weights(ROUND.other)
    )
    if not matches_round39(result["points"], json.loads(args.round39.read_text())["grid"]):
        raise SystemExit("the records do not give the thirty-ninth round's grid: they hold another refit's readings")
    print(f"{ROUND.lane}: shipped {result['shipped']}\n    chosen  {result['chosen']}")
    if result["chosen"] is None:
        print("no bounded point makes fewer errors than the packaged file: the round ends, no candidate written")
    else:
        point = {key: value for key, value in result["chosen"].items() if key not in ("calibration", "public")}
        er.write_candidate(args.candidate, args.folded, point, ROUND)
        written = args.candidate / f"intent_veto_{ROUND.lane}.npz"
        weights = VetoWeights.load(written)
        chosen_by = f"{weights.meta['line_and_raise_chosen']}, bounded by each public benign bucket's flags"
        dataclasses.replace(weights, meta={**weights.meta, "line_and_raise_chosen": chosen_by}).save(written)
        result |= whole_guard_steps(args.data, args.candidate)
        print(routed.table(result))
    qs.write_json(args.out, result)


if __name__ == "__main__":
    main()
