"""The fortieth round toward v14 (issue 18): MA, the thirty-ninth round's MiniLM refit, with its veto line, band and
raise line chosen as that round chose them, but only among points whose per-row records flag, in each public benign
test bucket, at most as many rows as the packaged MiniLM file's records (MB).

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_minilm_public_bound.py --folded DIR_folded.npz \\
        --rows ROWS.json --calib-rows CALIB.json --candidate DIR

`--folded`, `--rows` and `--calib-rows` are what `intent_minilm_all_read.py` wrote (the folded refit and the cached
records of the development sets, the public buckets and the calibration split); nothing is read again to choose. With
a point chosen, `--candidate DIR` holds it and the packaged e5 file, and the whole guard reads the calibration split
and the public buckets with it (`intent_e5_routed.steps`): step 1, the calibration split at most the packaged guard's
flags; step 2, each bucket at most 1% and at most the packaged guard's flags. The judges v50 and chat37 then decide
(`intent_veto_judge.py --set v50|chat37 --candidate DIR`). Writes `--out` (default
`benchmarks/results/intent_minilm_public_bound.json`).
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
    kept = []
    for point, calibration_flags in zip(points, budget["points"], strict=True):
        flags = public_flags(refitted, point, other, line)
        if calibration_flags <= budget["shipped"] and all(flags[name] <= bound[name] for name in bound):
            kept.append(point | {"public": flags})
    chosen = mr.choose(kept, shipped)
    return {"shipped": shipped | {"public": bound}, ROUND.other: other, "kept": kept, "chosen": chosen}


def public_bound_holds(read: dict[str, Any], candidate: Path) -> bool:
    """Step 2's second half: in each public bucket the whole guard with the candidate flags no more rows than the
    packaged guard (`read`: `intent_e5_routed.steps`'s readings)."""
    mine = judge.configuration_name(candidate)
    return all(
        read[name][mine]["benign_flagged"]["k"] <= read[name][routed.PACKAGED]["benign_flagged"]["k"]
        for name in ir.PUBLIC
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--folded", type=Path, required=True, help="the folded refit intent_minilm_all_read.py wrote")
    parser.add_argument("--rows", type=Path, required=True, help="that round's cached per-row records")
    parser.add_argument("--calib-rows", type=Path, required=True, help="that round's cached calibration records")
    parser.add_argument("--candidate", type=Path, required=True, help="the folder the chosen point is written to")
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=qs.REPO / "benchmarks" / "results" / f"{ROUND.script}.json")
    args = parser.parse_args(argv)
    records = list(json.loads(args.rows.read_text()))
    wanted = {*ROUND.choosing, *(f"public-{name}" for name in ir.PUBLIC)}
    if {record["set"] for record in records} != wanted or not args.calib_rows.exists():
        raise SystemExit("give the thirty-ninth round's --rows and --calib-rows (this round reads no set to choose)")
    calibration = list(json.loads(args.calib_rows.read_text()))
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
    print(f"{ROUND.lane}: shipped {result['shipped']}\n    chosen  {result['chosen']}")
    if result["chosen"] is None:
        print("no bounded point makes fewer errors than the packaged file: the round ends, no candidate written")
    else:
        point = {key: value for key, value in result["chosen"].items() if key != "public"}
        er.write_candidate(args.candidate, args.folded, point, ROUND)
        steps = routed.steps(args.data, args.candidate)
        steps["public_holds"] = steps["public_holds"] and public_bound_holds(steps["read"], args.candidate)
        result |= steps
        print(routed.table(result))
    qs.write_json(args.out, result)


if __name__ == "__main__":
    main()
