"""The thirty-first round toward v14 (issue 18): the e5 verifier refitted with every read set (EY), at the packaged
settings.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_e5_all_spent.py --refit EY.npz \\
        --rows runs/r35/rows.json --calib-rows runs/r35/calib.json [--candidate DIR]

`--refit` is an e5 veto file fitted by `intent_verifier.py --encoder e5 --save --train-heldout` on the thirtieth round's
twenty-two sets and the sixteen read since (`TRAINED_ON`). No read set is left that it did not train on, so nothing
chooses its settings: it keeps the packaged e5 file's (`packaged_point`). The guard as shipped reads the public benign
test buckets and the calibration split; each e5-lane flag and near miss is read by EY too ("refit"). `--rows` and
`--calib-rows` keep one record per row (no text). The steps of the rule in the model card ("Toward v14, thirty-first
round") that need no judge: EY flags at most the packaged file's e5-lane calibration rows, and each public bucket at
most 1% with at most 3% of their rows read as near misses. `--candidate DIR` writes EY with the packaged settings and
the packaged MiniLM file into DIR, for `intent_veto_judge.py --candidate DIR`, only when both hold. Writes `--out`
(default `benchmarks/results/intent_e5_all_spent.json`) and prints it. EY ships as the packaged e5 file since session
47, so the steps rerun from the round's cached `--rows` only: a fresh reading would compare EY with itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import intent_e5_enron as ee
import intent_e5_refit as er
import intent_e5_spent as spent
import intent_minilm_refit as mr
import intent_raise as ir
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

NEWER_SPENT = (*spent.SETS, "v37", "chat24", "v38", "chat25")
TRAINED_ON = (*spent.TRAINED_ON, *NEWER_SPENT)
LANE = "e5"
PUBLIC_LIMIT, READ_LIMIT = 0.01, 0.03  # each bucket's flagged share, and the share of all rows read as near misses
ALL_SPENT_ROUND = er.SpentRound(
    LANE, (), er.GRID, mr.GRID, "intent_e5_all_spent", "d008e1e", "d008e1e", "no", session=47, trained_on=TRAINED_ON
)


ROUND_SETTINGS = (2.5, 4.0, 3.0)  # the packaged e5 veto line, band and raise line when the round ran (session 47)


def packaged_point(file: str) -> dict[str, Any]:
    """The packaged e5 settings as the round read them (`ROUND_SETTINGS`; the thirty-second round widened the band
    since), as a grid point read by `file` ("packaged" or "refit")."""
    return {"file": file, **dict(zip(("tau", "band", "raise_tau"), ROUND_SETTINGS, strict=True))}


def steps(records: list[dict[str, Any]], calib: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """Step 1 (the calibration split's e5-lane rows EY flags against the packaged file's) and step 2 (the public gate
    with EY at the packaged settings), and whether both hold."""
    packaged, refit = packaged_point("packaged"), packaged_point("refit")
    calibration = er.calibration_flags(calib, [refit], packaged, LANE, line)
    public = ee.public_check(records, {"e5": refit, "minilm": {"either": None}}, line)
    shipped_public = ee.public_check(records, {"e5": packaged, "minilm": {"either": None}}, line)
    calibration_holds = calibration["points"][0] <= calibration["shipped"]
    public_holds = all(public[b]["flagged"]["rate"] <= PUBLIC_LIMIT for b in ir.PUBLIC)
    public_holds = public_holds and public["all"]["read_by_raise"]["rate"] <= READ_LIMIT
    print(f"calibration split, e5 lane: packaged {calibration['shipped']}, EY {calibration['points'][0]} flagged")
    vr.print_public(public)
    return {
        "point": refit,
        "calibration": calibration,
        "public": public,
        "public_as_shipped": shipped_public,
        "calibration_holds": calibration_holds,
        "public_holds": public_holds,
    }


def write_candidate(folder: Path, refit: Path) -> None:
    """EY at the packaged settings with a header saying what it trained on and that nothing chose its settings, and
    the packaged MiniLM file, in `folder`."""
    version = VetoWeights.load(refit).model_version
    header = {
        "fitted": f"session 47 on {version}'s training rows, the contrastive pairs' training share and every row of "
        f"the held-apart sets {', '.join(TRAINED_ON)} (benchmarks/intent_verifier.py --train-heldout)",
        "line_and_raise_chosen": "not chosen: the packaged e5 file's settings (session 47, "
        "benchmarks/intent_e5_all_spent.py; no read set is left that this file did not train on)",
        "read_for": f"the first stage {version} (session 47: refitted on its training rows and {len(TRAINED_ON)} "
        "spent development sets, at the settings chosen for the file it replaces)",
    }
    mr.save_refit(folder, refit, packaged_point("refit"), (), header, ("minilm", shipped_weights("minilm")))


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_e5_all_spent.json", refit="EY: the e5 veto refitted with TRAINED_ON")
    args = parser.parse_args(argv)
    model = ExtractionIntent(second_opinion=False)._model()
    er.check_refit(
        args.refit,
        shipped_weights(LANE),
        shipped_weights("minilm"),
        ALL_SPENT_ROUND,
        str(model.meta.get("model_version")),
    )
    packaged = VetoWeights.load(shipped_weights(LANE)).meta.get("heldout_sets_trained_on", [])
    if not args.rows.exists() and set(packaged) >= set(TRAINED_ON):
        raise SystemExit(
            "the packaged e5 file trained on every set EY did (EY since session 47, EZ1B since session 54): a fresh "
            "reading would compare EY with itself or with a later refit of the same sets"
        )
    line = logit(model.threshold)
    read = ee.reader(args.refit)
    records = ir.records_of(args, read, (), TRAINED_ON)
    calib = er.calibration_records(args.calib_rows, read, args.data)
    result = {"trained_on": list(TRAINED_ON)} | steps(records, calib, line)
    qs.write_json(args.out, result)
    if args.candidate and result["calibration_holds"] and result["public_holds"]:
        write_candidate(args.candidate, args.refit)
        print(f"wrote {args.candidate}")


if __name__ == "__main__":
    main()
