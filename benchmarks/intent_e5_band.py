"""The thirty-eighth round toward v14 (issue 18): EZ1, the e5 second opinion refitted on every read set (the
thirty-seventh round's file), with its routed raise's band and raise line chosen again on v48 and chat35, the only
read sets it did not train on.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_e5_band.py --refit EZ1.npz \\
        --rows runs/ez1_rows.json --packaged-rows runs/ey_rows.json --candidate DIR

The guard (model v13, no raise applied) reads `SETS` (rows equal to a training row of v13 or of a set EZ1 trained on
left out) and the public benign test buckets twice: once with EZ1 as its e5 file, each e5-lane near miss within
`max(BANDS)` logits read up to `max(RAISE_TAUS)` (`--rows`), and once with the packaged e5 file (`--packaged-rows`).
The rule in the model card ("Toward v14, thirty-eighth round"): over `BANDS` x `RAISE_TAUS` at the packaged e5 veto
line, EZ1's points that make fewer e5-lane errors on `SETS` than the packaged file at its packaged settings and flag
at most its benign rows, in `intent_veto_raise.choose`'s order (`intent_e5_far.ordered`); only the first is tried.
`--candidate DIR` gets EZ1 at that point (every other packaged e5 setting kept) and the packaged MiniLM file, and the
steps that need no judge are read with that folder by the guard as a user runs it (`intent_e5_routed.steps`): the
calibration split (at most the packaged guard's flags) and each public benign test bucket (at most 1% flagged). The
judges v49 and chat36 then decide (`intent_veto_judge.py --set v49|chat36 --candidate DIR`). Writes `--out` (default
`benchmarks/results/intent_e5_band.json`) and prints the steps.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import intent_e5_far as far
import intent_e5_refit as er
import intent_e5_routed as routed
import intent_raise as ir
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_veto import shipped_weights, weights_file_name
from ragshield.guards.intent_veto_weights import VetoWeights

SETS = ("v48", "chat35")  # written blind in session 52; EZ1 (trained in session 53) trained on neither
LANE = "e5"
BANDS, RAISE_TAUS = far.BANDS, far.RAISE_TAUS
REFIT_ROUND = 37  # the round whose file (EZ1: no row weighed up) this round reads
SESSION = 54


def packaged_settings() -> tuple[float, float, float]:
    """The packaged e5 file's veto line, raise band and raise line (logits)."""
    weights = VetoWeights.load(shipped_weights(LANE))
    if weights.raise_band is None or weights.raise_tau is None:
        raise SystemExit("the packaged e5 file raises no near miss: this round compares raise settings")
    return weights.tau, weights.raise_band, weights.raise_tau


def sweep(refit_records: list[dict[str, Any]], packaged_records: list[dict[str, Any]]) -> dict[str, Any]:
    """EZ1's grid on `SETS`' e5 lane, the packaged file's point and the points the rule may try, in its order."""
    line = logit(ExtractionIntent(second_opinion=False)._model().threshold)
    tau, band, raise_tau = packaged_settings()
    points = vr.lane_points(refit_records, LANE, line, ((tau,), BANDS, RAISE_TAUS))
    packaged = vr.lane_points(packaged_records, LANE, line, ((tau,), (band,), (raise_tau,)))[0]
    return {"grid": points, "packaged": packaged, "order": far.ordered(points, packaged)}


def write_candidate(folder: Path, refit: Path, point: dict[str, Any] | None) -> Path:
    """EZ1 at every packaged e5 setting (the thirty-seventh round's candidate) and the packaged MiniLM file, in
    `folder`; with `point`, EZ1's band and raise line are `point`'s and its header says where they were chosen. The
    e5 file's path."""
    routed.write_candidate(folder, refit, routed.ROUTED_WEIGHTS[REFIT_ROUND])
    path = folder / weights_file_name(LANE)
    if point is None:
        return path
    weights = VetoWeights.load(path)
    chosen = weights.with_raise(point["band"], point["raise_tau"])
    chosen_on = f"{' and '.join(SETS)}, which this file did not train on"
    meta = dict(weights.meta) | {
        "line_and_raise_chosen": f"veto line {weights.tau:+g} kept from the file this one replaced (chosen in session "
        f"45); raise band {point['band']:g} logits and raise line {point['raise_tau']:g} chosen in session {SESSION} "
        f"on {chosen_on} (benchmarks/intent_e5_band.py, the thirty-eighth round)",
        "development": list(SETS),
        "read_for": f"the first stage {weights.model_version} (session {routed.SESSION}: refitted on its training rows "
        f"and {len(routed.TRAINED_ON)} read sets; session {SESSION}: its raise band and line chosen on {chosen_on})",
    }
    dataclasses.replace(chosen, meta=meta).save(path)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = ir.reading_parser(__doc__, "intent_e5_band.json")
    parser.add_argument("--refit", type=Path, required=True, help="EZ1: the thirty-seventh round's e5 refit")
    parser.add_argument("--packaged-rows", type=Path, required=True, help="the packaged e5 file's per-row records")
    parser.add_argument("--candidate", type=Path, required=True, help="the folder the chosen point is written to")
    args = parser.parse_args(argv)
    if VetoWeights.load(shipped_weights(LANE)).meta.get("development") == list(SETS):
        raise SystemExit(
            "the packaged e5 file is EZ1B since session 54 (its raise chosen on v48 and chat35): a rerun would compare "
            "EZ1B with itself; the round's results as run are benchmarks/results/intent_e5_band.json"
        )
    version = str(IntentModel.load().meta.get("model_version"))
    er.check_refit(
        args.refit, shipped_weights(LANE), shipped_weights("minilm"), routed.spent_round(REFIT_ROUND), version
    )
    trained = routed.TRAINED_ON
    # the refit is read as the candidate folder holds it: every packaged setting, its readings included
    refit_records = ir.records_of(args, far.reader(write_candidate(args.candidate, args.refit, None)), SETS, trained)
    packaged_args = argparse.Namespace(**{**vars(args), "rows": args.packaged_rows})
    packaged_records = ir.records_of(packaged_args, far.reader(), SETS, trained)
    result: dict[str, Any] = {"sets": list(SETS), "refit_round": REFIT_ROUND} | sweep(refit_records, packaged_records)
    print(f"e5 lane on {', '.join(SETS)}: packaged {result['packaged']}")
    result["chosen"] = result["order"][0] if result["order"] else None
    print(f"first point in the rule's order: {result['chosen']}")
    if result["chosen"]:
        write_candidate(args.candidate, args.refit, result["chosen"])
        result |= routed.steps(args.data, args.candidate)
        print(routed.table(result))
    qs.write_json(args.out, result)


if __name__ == "__main__":
    main()
