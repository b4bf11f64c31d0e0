"""The twenty-eighth round toward v14 (issue 18): the e5 verifier refitted with Enron's e-mails weighed up (EW), in
its own lane and reading the English near misses the MiniLM verifier leaves.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_e5_enron.py --refit EW.npz --rows runs/r31/rows28.json \\
        --calib-rows runs/r31/calib28.json [--candidate DIR]

`--refit` is an e5 veto file fitted by `intent_verifier.py --encoder e5 --save --train-heldout` with the twelve older
development sets (`intent_e5_refit.TRAINED_ON`) and `--enron-weight 5`. The model alone (v13) reads the twenty read sets
neither e5 file trained on (`intent_raise_either.SETS`; each set's rows unseen by v13, the verifiers' pairs and the
twelve sets), the public benign test buckets and the calibration split, as the guard as shipped reads them
(`intent_raise_either.read_set`: the packaged files' logits, and EW's logit "other" for each English near miss within
the band the MiniLM verifier does not raise); each e5-lane flag and near miss is read by EW too ("refit"), up to the
grid's highest lines. `--rows` and `--calib-rows` keep one record per row (no text).

The sweep applies the rule in the model card ("Toward v14, twenty-eighth round"): the e5 lane over the seventeenth
round's grid (`intent_e5_refit.GRID`) within the packaged file's benign development and calibration flags, and the
English lane over `intent_raise_either.POINTS` within the shipped settings' calibration flags; each lane's point by its
round's rule; both development conditions (fewer errors, and leaving each set out) on the two lanes together.
`--candidate DIR` writes EW with the chosen e5 settings and the packaged MiniLM file with the chosen
`raise_either_tau` into DIR, for `intent_veto_judge.py --candidate DIR`, only when both conditions hold. Writes the
sweep to `--out` (default `benchmarks/results/intent_e5_enron.json`) and prints it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import intent_e5_refit as er
import intent_generalisation as ig
import intent_loso as il
import intent_minilm_refit as mr
import intent_raise as ir
import intent_raise_either as either
import intent_sets as isets
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_weights

SETS = either.SETS
LANE = "e5"
ENRON_ROUND = er.SpentRound(
    LANE,
    SETS,
    er.GRID,
    mr.GRID,
    "intent_e5_enron",
    "3a3d1b1",
    "3a3d1b1",
    "twenty",
    leave_out_trained=True,
    calibration_budget=True,
    session=46,
    enron_weight=5.0,
)
REACH = max(er.GRID[1])  # the widest band of the grid: the near misses EW reads
HIGHEST_VETO, HIGHEST_RAISE = max(er.GRID[0]), max(er.GRID[2])


def reader(refit: Path) -> Callable[[str, list[isets.Example]], list[dict[str, Any]]]:
    """A `read_set` for `intent_raise.records_of`: `intent_raise_either.read_set` with EW as the other verifier, and
    EW's logit ("refit") for each e5-lane flag (read up to `HIGHEST_VETO`) and near miss within `REACH` (up to
    `HIGHEST_RAISE`); a MiniLM-lane row keeps the packaged MiniLM's logit there."""
    packaged = ExtractionIntent(second_opinion=False)
    refitted = ExtractionIntent(second_opinion=False)
    refitted.veto_ = IntentVeto({LANE: refit, "minilm": shipped_weights("minilm")}, raises=False)

    def read(name: str, examples: list[isets.Example]) -> list[dict[str, Any]]:
        records = either.read_set(packaged, name, examples, other=refitted.veto_)
        texts = [e.text for e in examples]
        lanes = [r["lane"] == LANE for r in records]
        flags = [r["row"] for r in records if lanes[r["row"]] and r["flagged_by_model"]]
        near = [r["row"] for r in records if lanes[r["row"]] and not r["flagged_by_model"] and r["gap"] <= REACH]
        found = ir.lane_logits(refitted, texts, flags, lanes, HIGHEST_VETO)
        found |= ir.lane_logits(refitted, texts, near, lanes, HIGHEST_RAISE, near_miss=True)
        for r in records:
            r["refit"] = (
                (round(found[r["row"]], 4) if r["row"] in found else None) if lanes[r["row"]] else r["verifier"]
            )
        return records

    return read


def e5_view(rows: list[dict[str, Any]], point: dict[str, Any]) -> list[dict[str, Any]]:
    """`rows` as `point`'s file reads them: the packaged logits, or EW's ("refit")."""
    return rows if point["file"] == "packaged" else mr.refitted_view(rows)


def e5_errors(rows: list[dict[str, Any]], point: dict[str, Any], line: float) -> dict[str, Any]:
    """`point` (an e5 grid point; "file": "packaged" reads the packaged logits, "refit" EW's) with the benign rows it
    flags, the requests it misses and their sum among `rows` (e5 lane)."""
    view = e5_view(rows, point)
    return point | vr.error_counts(view, [vr.guard_flags(r, *vr.settings(point), line) for r in view])


def e5_choose(rows: list[dict[str, Any]], points: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """The rule's e5 point on `rows`: `points[0]` is the packaged file at its settings, `points[1]` EW at them, the
    rest EW's grid points within the calibration bound. Of those flagging at most the packaged point's benign rows,
    the fewest errors (`intent_veto_raise.choose`'s ties); EW at the packaged settings when none makes fewer errors
    than the packaged file."""
    shipped, *refitted = (e5_errors(rows, point, line) for point in points)
    best = vr.choose(refitted[1:], shipped)
    return refitted[0] if best is shipped else best


def e5_candidates(calib: list[dict[str, Any]], line: float) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The e5 points `e5_choose` reads: the packaged file at its settings, EW at them, and EW's grid points that flag
    at most the packaged settings' e5-lane rows of the calibration split (`calib`); and the calibration rows flagged
    by the packaged file (the bound) and by EW at its settings (which the rule's fallback may exceed)."""
    packaged = {"file": "packaged", **dict(zip(("tau", "band", "raise_tau"), either.settings(LANE), strict=True))}
    refit_at_packaged = packaged | {"file": "refit"}
    grid = [
        {"file": "refit", "tau": tau, "band": band, "raise_tau": raise_tau}
        for tau in er.GRID[0]
        for band in er.GRID[1]
        for raise_tau in er.GRID[2]
    ]
    counted = er.calibration_flags(calib, [refit_at_packaged, *grid], packaged, LANE, line)
    within = [p for p, n in zip(grid, counted["points"][1:], strict=True) if n <= counted["shipped"]]
    bound = {"packaged": counted["shipped"], "refit_at_packaged_settings": counted["points"][0]}
    return [packaged, refit_at_packaged, *within], bound | {"points_within": len(within)}


def sweep(records: list[dict[str, Any]], calib: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """Both lanes' grids, each lane's choice and both development conditions on the twenty sets together."""
    dev = [r for r in records if not r["set"].startswith("public-")]
    e5_rows, english = ([r for r in dev if r["lane"] == lane] for lane in (LANE, either.LANE))
    e5_points, bound = e5_candidates(calib, line)
    packaged, within = e5_points[0], e5_points[2:]
    calib_en = [r for r in calib if r["lane"] == either.LANE]
    en_flags = [sum(either.flags(r, p["either"], line) for r in calib_en) for p in either.POINTS]
    en_points = [p for p, n in zip(either.POINTS, en_flags, strict=True) if n <= en_flags[0]]

    e5_count, e5_pick = functools.partial(e5_errors, line=line), functools.partial(e5_choose, line=line)
    e5_chosen = e5_pick(e5_rows, e5_points)
    e5_loso = il.leave_one_set_out(e5_rows, e5_points, SETS, e5_pick, e5_count)
    en_counted = [
        either.errors(english, p, line) | {"calibration_flags": n} for p, n in zip(either.POINTS, en_flags, strict=True)
    ]
    en_chosen = either.choose(english, en_points, line)
    en_loso = either.leave_one_set_out(english, en_points, line)
    e5_packaged, e5_refit = e5_count(e5_rows, packaged), e5_count(e5_rows, e5_points[1])
    shipped = {"errors": e5_packaged["errors"] + en_counted[0]["errors"]}
    chosen = {"e5": e5_chosen, "minilm": en_chosen, "errors": e5_chosen["errors"] + en_chosen["errors"]}
    loso = {
        "per_set": {name: {"e5": e5_loso["per_set"][name], "minilm": en_loso["per_set"][name]} for name in SETS},
        "errors": e5_loso["errors"] + en_loso["errors"],
        "shipped_errors": e5_loso["shipped_errors"] + en_loso["shipped_errors"],
    }
    print(f"e5 lane: packaged {e5_packaged}\n  EW at its settings {e5_refit}")
    print(f"  chosen {e5_chosen} ({len(within)} grid points within the calibration bound {bound['packaged']})")
    il.print_grid(en_counted, ("either", "calibration_flags"))
    return {
        "sets": list(SETS),
        "rows": {"e5_lane": len(e5_rows), "english_lane": len(english), "calibration": len(calib)},
        "e5": {
            "packaged": e5_packaged,
            "refit_at_packaged_settings": e5_refit,
            "grid_within_calibration": [e5_count(e5_rows, p) for p in within],
            "calibration": bound,
            "chosen": e5_chosen,
        },
        "english": {"grid": en_counted, "chosen": en_chosen},
        "shipped": shipped,
        "chosen": chosen,
        "leave_one_set_out": loso,
        "passes_development": il.verdict(shipped, chosen, loso),
    }


def public_check(records: list[dict[str, Any]], chosen: dict[str, Any], line: float) -> dict[str, Any]:
    """Step 1: per public bucket and over all of them ("all"), the rows the guard flags with the chosen e5 point and
    either line, and the rows the verifiers read as near misses (within the lane's band; a row too long to read is
    counted too)."""
    out = {}
    for name in (*ir.PUBLIC, "all"):
        wanted = {f"public-{bucket}" for bucket in ir.PUBLIC} if name == "all" else {f"public-{name}"}
        rows = [r for r in records if r["set"] in wanted]
        e5_rows = e5_view([r for r in rows if r["lane"] == LANE], chosen["e5"])
        e5_flags = [vr.guard_flags(r, *vr.settings(chosen["e5"]), line) for r in e5_rows]
        en_flags = [either.flags(r, chosen["minilm"]["either"], line) for r in rows if r["lane"] == either.LANE]
        bands = {LANE: chosen["e5"]["band"], either.LANE: either.settings(either.LANE)[1]}
        read = sum(1 for r in rows if not r["flagged_by_model"] and r["gap"] <= bands[r["lane"]])
        out[name] = {
            "flagged": ig.share(sum(e5_flags) + sum(en_flags), len(rows)),
            "read_by_raise": ig.share(read, len(rows)),
        }
    return out


def write_candidate(folder: Path, refit: Path, chosen: dict[str, Any]) -> None:
    """EW with the chosen e5 settings and its header, and the packaged MiniLM file with the chosen either line (as
    packaged when the English lane chose none), in `folder`."""
    er.write_candidate(folder, refit, chosen["e5"], ENRON_ROUND, shipped_weights("minilm"))
    if chosen["minilm"]["either"] is not None:
        either.save_with_either(folder, chosen["minilm"]["either"], "session 46", ENRON_ROUND.script)


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_e5_enron.json", refit="EW: the e5 veto refitted with --enron-weight 5")
    args = parser.parse_args(argv)
    ir.refuse_fitted_reading(SETS, "intent_e5_enron.json")
    either.settings(LANE)  # refuses a packaged file this round did not compare with
    model = ExtractionIntent(second_opinion=False)._model()
    er.check_refit(
        args.refit, shipped_weights(LANE), shipped_weights("minilm"), ENRON_ROUND, str(model.meta.get("model_version"))
    )
    line = logit(model.threshold)
    read = reader(args.refit)
    records = ir.records_of(args, read, SETS, er.TRAINED_ON)
    calib = er.calibration_records(args.calib_rows, read, args.data)
    result = sweep(records, calib, line)
    result["public"] = public_check(records, result["chosen"], line)
    vr.print_public(result["public"])
    qs.write_json(args.out, result)
    if args.candidate and result["passes_development"]:
        write_candidate(args.candidate, args.refit, result["chosen"])
        print(f"wrote {args.candidate}")


if __name__ == "__main__":
    main()
