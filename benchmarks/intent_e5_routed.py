"""The thirty-sixth and thirty-seventh rounds toward v14 (issue 18): the e5 verifier refitted with every read set, the
hard benign rows of its own lane weighed up (EZ, round 36) or not (EZ1, round 37), at the packaged settings.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_verifier.py --encoder e5 --save EZ.npz \\
        --train-heldout "$(.venv/bin/python benchmarks/intent_e5_routed.py --print-sets)" \\
        [--routed-hard-benign-weight 2]
    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_e5_routed.py --round 36|37 --refit EZ.npz --candidate DIR

`--refit` is an e5 veto file fitted on the first stage's training rows, the contrastive pairs' training share and
every row of the read sets `TRAINED_ON` (the thirty-first round's thirty-eight and the eighteen read since), with the
hard benign rows that the router sends to the multilingual part weighed the round's `ROUTED_WEIGHTS` times more
(`intent_verifier_fit.row_weights`; 1 in round 37: no row weighed up). No read set is left that it did not train on,
so nothing chooses its settings: the refit keeps every setting of the packaged e5 file (veto line, bands, raise lines,
readings: `intent_guard_loo.fold_weights`). The steps of the rules in the model card ("Toward v14, thirty-sixth
round", "thirty-seventh round") that need no judge are read here by the guard as a user runs it
(`intent_veto_judge.judge`: the packaged guard, and the same guard with the refit as its e5 file):
1. the calibration split: the guard with EZ flags at most as many rows as the packaged guard;
2. the public benign test buckets: each at most `PUBLIC_LIMIT` flagged with EZ.
`--candidate DIR` writes EZ and the packaged MiniLM file into DIR, for `intent_veto_judge.py --candidate DIR`, and the
steps are read with that folder; the round's judges then decide. Writes `--out` (default
`benchmarks/results/intent_e5_routed_round<N>.json`) and prints a table.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import intent_e5_all_spent as all_spent
import intent_e5_refit as er
import intent_guard_loo as loo
import intent_minilm_refit as mr
import intent_raise as ir
import intent_veto_judge as judge
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent_model import IntentModel
from ragshield.guards.intent_veto import shipped_weights, weights_file_name
from ragshield.guards.intent_veto_weights import VetoWeights
from ragshield.metrics.intervals import rate_text

NEWEST = (
    *("v39", "chat26", "v40", "chat27", "v41", "chat28", "v42", "chat29", "v43", "chat30"),
    *("v44", "chat31", "v45", "chat32", "v46", "chat33", "v47", "chat34"),
)
TRAINED_ON = (*all_spent.TRAINED_ON, *NEWEST)
ROUTED_WEIGHTS = {36: 2.0, 37: 1.0}  # per round: the e5 lane's hard benign rows weigh this many times the others
SESSION = 53
PUBLIC_LIMIT = 0.01  # each public benign test bucket's flagged share (the FPR goal)


def spent_round(number: int) -> er.SpentRound:
    """Round `number`'s refit as `intent_e5_refit.check_refit` checks it: e5, `TRAINED_ON`, its routed weight."""
    return er.SpentRound(
        lane="e5",
        choosing=(),  # nothing chooses: the packaged settings are kept
        grid=er.GRID,
        other_grid=mr.GRID,  # the other lane, MiniLM, is not read (kept for the dataclass)
        script="intent_e5_routed",
        before="3fafec0",
        other_before="3fafec0",
        how_many="no",
        session=SESSION,
        trained_on=TRAINED_ON,
        routed_hard_benign_weight=ROUTED_WEIGHTS[number],
    )


PACKAGED = "packaged guard"


def write_candidate(folder: Path, refit: Path, weight: float) -> None:
    """The refit's layers and head with every setting of the packaged e5 file, a header saying what it trained on (the
    e5 lane's hard benign rows weighed `weight` times more) and that nothing chose its settings, and the packaged
    MiniLM file, in `folder`."""
    packaged, fitted = VetoWeights.load(shipped_weights("e5")), VetoWeights.load(refit)
    weighed = (
        f", the hard benign rows the router sends to the multilingual part weighed {weight:g} times more "
        f"(benchmarks/intent_verifier.py --train-heldout --routed-hard-benign-weight {weight:g})"
        if weight != 1.0
        else ", no row weighed up (benchmarks/intent_verifier.py --train-heldout)"
    )
    meta = dict(fitted.meta) | {
        "fitted": f"session {SESSION} on {fitted.model_version}'s training rows, the contrastive pairs' training share "
        f"and every row of the held-apart sets {', '.join(TRAINED_ON)}{weighed}",
        "line_and_raise_chosen": f"not chosen: the packaged e5 file's settings (session {SESSION}, "
        "benchmarks/intent_e5_routed.py; no read set is left that this file did not train on)",
        "line_chosen_on_flags_of": packaged.meta.get("line_chosen_on_flags_of", packaged.model_version),
        "fitted_on_rows_of": fitted.model_version,
        "read_for": f"the first stage {fitted.model_version} (session {SESSION}: refitted on its training rows and "
        f"{len(TRAINED_ON)} read sets, at the settings of the file it replaces)",
    }
    folder.mkdir(parents=True, exist_ok=True)
    loo.fold_weights(packaged, fitted, fitted.model_version, meta).save(folder / weights_file_name("e5"))
    shutil.copyfile(shipped_weights("minilm"), folder / weights_file_name("minilm"))


def steps(data: Path, candidate: Path) -> dict[str, Any]:
    """Steps 1 and 2 of the rule: the packaged guard and the guard with `candidate`'s files read the calibration
    split and each public benign test bucket (every row, all benign)."""
    corpus = ti.build_corpus(data)
    groups = {"calibration": corpus.calib} | {name: corpus.test[name] for name in ir.PUBLIC}
    read: dict[str, Any] = {}
    for name, examples in groups.items():
        configurations = judge.judge(examples, (candidate,))["configurations"]
        read[name] = {
            PACKAGED if config.endswith("+ second opinion") else config: {
                "benign_flagged": row["benign_flagged"],
                "second_opinion": row["second_opinion"],
            }
            for config, row in configurations.items()
            if not config.endswith(" alone")
        }
        print(f"read {name}: {len(examples)} rows", flush=True)
    ez = judge.configuration_name(candidate)
    flagged = {name: {config: r["benign_flagged"]["k"] for config, r in row.items()} for name, row in read.items()}
    calibration_holds = flagged["calibration"][ez] <= flagged["calibration"][PACKAGED]
    public_holds = all(read[name][ez]["benign_flagged"]["rate"] <= PUBLIC_LIMIT for name in ir.PUBLIC)
    return {"read": read, "calibration_holds": calibration_holds, "public_holds": public_holds}


def table(result: dict[str, Any]) -> str:
    lines = ["| rows | configuration | flagged |", "|---|---|---|"]
    for name, row in result["read"].items():
        for config, counts in row.items():
            flagged = counts["benign_flagged"]
            lines.append(f"| {name} | {config} | {rate_text(flagged['k'], flagged['n'])} |")
    holds = f"step 1 {'holds' if result['calibration_holds'] else 'fails'}, "
    return "\n".join([*lines, holds + f"step 2 {'holds' if result['public_holds'] else 'fails'}"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--print-sets", action="store_true", help="print TRAINED_ON for --train-heldout and stop")
    parser.add_argument("--round", type=int, choices=sorted(ROUTED_WEIGHTS), default=max(ROUTED_WEIGHTS))
    parser.add_argument("--refit", type=Path, help="the e5 veto refitted with TRAINED_ON and the round's weight")
    parser.add_argument("--candidate", type=Path, help="the folder EZ and the packaged MiniLM file are written to")
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--out", type=Path, help="default benchmarks/results/intent_e5_routed_round<N>.json")
    args = parser.parse_args(argv)
    if args.print_sets:
        print(",".join(TRAINED_ON))
        return
    if not (args.refit and args.candidate):
        parser.error("give --refit and --candidate (or --print-sets)")
    version = str(IntentModel.load().meta.get("model_version"))
    er.check_refit(args.refit, shipped_weights("e5"), shipped_weights("minilm"), spent_round(args.round), version)
    if set(VetoWeights.load(shipped_weights("e5")).meta.get("heldout_sets_trained_on", [])) == set(TRAINED_ON):
        raise SystemExit(
            "the packaged e5 file trained on TRAINED_ON (EZ1B, shipped in session 54): the steps would compare a refit "
            "of these sets with another; the rounds' results as run are benchmarks/results/intent_e5_routed_round*.json"
        )
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: this round needs ../shared/data")
    weight = ROUTED_WEIGHTS[args.round]
    write_candidate(args.candidate, args.refit, weight)
    result = {"round": args.round, "trained_on": list(TRAINED_ON), "routed_hard_benign_weight": weight}
    result |= steps(args.data, args.candidate)
    print(table(result))
    qs.write_json(args.out or qs.REPO / "benchmarks" / "results" / f"intent_e5_routed_round{args.round}.json", result)


if __name__ == "__main__":
    main()
