"""The thirty-ninth round toward v14 (issue 18): the MiniLM second opinion refitted with every read set up to v47 and
chat34 (MA), Enron's e-mails weighed 5 as in the twenty-fourth round, its settings chosen on v48, chat35, v49 and
chat36.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_verifier.py --encoder minilm --save MA.npz \\
        --train-heldout "$(.venv/bin/python benchmarks/intent_minilm_all_read.py --print-sets)" --enron-weight 5
    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_minilm_all_read.py --fit MA.npz --rows ROWS.json \\
        --calib-rows CALIB.json --candidate DIR

`--fit` is folded into every setting of the packaged MiniLM file (its readings and its either raise included:
`intent_guard_loo.fold_weights`) and written beside the candidate folder; the twenty-fourth round's rule then chooses
its veto line, band and raise line on `DEVELOPMENT` (`intent_e5_refit.main` with `ROUND`: the packaged files read
each set's rows once and the folded refit again, MiniLM lane, bounded by the calibration split). When a point is
chosen, `--candidate DIR` holds it and the packaged e5 file, and the steps that need no judge are read with that folder
by the guard as a user runs it (`intent_e5_routed.steps`): the calibration split, at most the packaged guard's flags,
and each public benign test bucket, at most 1%. (The records' own public figures, `public`, are not the gate: they
read e5 near misses within 4 logits only and no either raise.) The judges v50 and chat37 then decide
(`intent_veto_judge.py --set v50|chat37 --candidate DIR`). Writes `--out` (default
`benchmarks/results/intent_minilm_all_read.json`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import intent_e5_refit as er
import intent_e5_routed as routed
import intent_guard_loo as loo
import intent_minilm_refit as mr
import query_sets as qs
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

DEVELOPMENT = ("v48", "chat35", "v49", "chat36")  # read in session 54; no MiniLM file trained on them
TRAINED_ON = routed.TRAINED_ON  # every read set up to v47 and chat34, as EZ1 (the packaged e5 file)
ENRON_WEIGHT = 5.0  # as ME (the twenty-fourth round), whose refit passed the public gate where MC's did not
LANE = "minilm"
# the packaged e5 file's veto line, band and raise line (EZ1B, session 54): the other lane is read at that one point
E5_SETTINGS = ((2.5,), (12.0,), (4.5,))
# the packaged header lines that say where the settings a fold keeps were chosen (none of them is chosen again here)
KEPT_HEADER = ("either_raise_chosen",)
ROUND = er.SpentRound(
    lane=LANE,
    choosing=DEVELOPMENT,
    grid=mr.GRID,
    other_grid=E5_SETTINGS,
    script="intent_minilm_all_read",
    before="6c455b1",
    other_before="6c455b1",
    how_many="four",
    leave_out_trained=True,
    calibration_budget=True,
    session=54,
    enron_weight=ENRON_WEIGHT,
    trained_on=TRAINED_ON,
)


def fold(fit: Path, out: Path) -> Path:
    """`fit`'s layers and head with every setting of the packaged MiniLM file, its header kept (with the packaged
    header's line on where the kept settings were chosen), written to `out`."""
    packaged, fitted = VetoWeights.load(shipped_weights(LANE)), VetoWeights.load(fit)
    kept = {key: packaged.meta[key] for key in KEPT_HEADER if key in packaged.meta}
    loo.fold_weights(packaged, fitted, fitted.model_version, dict(fitted.meta) | kept).save(out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--print-sets", action="store_true", help="print TRAINED_ON for --train-heldout and stop")
    parser.add_argument("--fit", type=Path, help="MA as intent_verifier.py --save wrote it")
    parser.add_argument("--candidate", type=Path, help="the folder the chosen point is written to")
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=qs.REPO / "benchmarks" / "results" / f"{ROUND.script}.json")
    args, rest = parser.parse_known_args(argv)  # the rest (--rows, --calib-rows) is the round's
    if args.print_sets:
        print(",".join(TRAINED_ON))
        return
    if not (args.fit and args.candidate):
        parser.error("give --fit and --candidate (or --print-sets)")
    folded = fold(args.fit, args.candidate.with_name(f"{args.candidate.name}_folded.npz"))
    shared = ["--candidate", str(args.candidate), "--data", str(args.data), "--out", str(args.out)]
    files = [
        "--refit",
        str(folded),
        "--before",
        str(shipped_weights(LANE)),
        "--before-other",
        str(shipped_weights("e5")),
    ]
    er.main([*rest, *shared, *files], ROUND, __doc__)
    result = json.loads(args.out.read_text())
    if result["chosen"] is not None:
        result |= routed.steps(args.data, args.candidate)
        print(routed.table(result))
        qs.write_json(args.out, result)


if __name__ == "__main__":
    main()
