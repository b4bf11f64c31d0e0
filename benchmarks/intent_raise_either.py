"""The twenty-seventh round toward v14 (issue 18): an English near miss raised by either verifier.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_raise_either.py --rows runs/rows27.json \\
        --calib-rows runs/calib27.json [--candidate DIR]

The model alone (v13) reads the twenty read sets the packaged e5 file never trained on (`SETS`, each set's rows unseen
by v13, the verifiers' pairs and the e5 file's twelve training sets), the public benign test buckets and the
calibration split, as the guard as shipped reads them (`intent_veto_raise.read_set`); each English near miss within
the band that the MiniLM verifier does not raise is read by the e5 verifier too, as it reads a near miss, up to the
highest line of `LINES` (record key "other"). `--rows` and `--calib-rows` keep one record per row (no text). The sweep
applies the rule in the model card ("Toward v14, twenty-seventh round"): English lane only, over no `raise_either_tau`
(the shipped settings) and `LINES`; among the points flagging at most the shipped settings' English-lane calibration
rows, the fewest errors, ties to the shipped settings, fewer benign rows flagged, the higher line; and the same rule
leaving each set out in turn. `--candidate DIR` writes the MiniLM file with the chosen line and the packaged e5 file
into DIR, for `intent_veto_judge.py --candidate DIR`, only when both development conditions hold. Writes the sweep to
`--out` (default `benchmarks/results/intent_raise_either.json`) and prints it.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

import intent_e5_refit as er
import intent_generalisation as ig
import intent_loso as il
import intent_raise as ir
import intent_sets as isets
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_veto, shipped_weights
from ragshield.guards.intent_veto_reading import verifier_logits
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

SETS = (*(f"v{n}" for n in range(26, 36)), *(f"chat{n}" for n in range(13, 23)))
LANE, OTHER = "minilm", "e5"
LINES = (3.0, 4.0, 5.0, 6.0, 8.0)
# {"either": None}: no raise by the other verifier, the shipped settings (the first point)
POINTS: list[dict[str, Any]] = [{"either": either} for either in (None, *LINES)]


@functools.cache
def settings(lane: str) -> tuple[float, float, float]:
    """The packaged file's veto line, band and raise line for `lane`, as the rounds compared with them
    (`intent_veto_raise.packaged_weights`)."""
    weights = vr.packaged_weights(lane)
    if weights.raise_band is None or weights.raise_tau is None or weights.raise_either_tau is not None:
        raise SystemExit(f"the packaged {lane} file is not the one this round compared with")
    return weights.tau, weights.raise_band, weights.raise_tau


def read_set(
    guard: ExtractionIntent, name: str, examples: list[isets.Example], other: IntentVeto | None = None
) -> list[dict[str, Any]]:
    """`intent_veto_raise.read_set` at the shipped lines, and the e5 verifier's logit ("other": `other`'s e5 file,
    default the packaged one) for each English near miss within the band the MiniLM verifier does not raise (None for
    any other row, or one too long to read)."""
    _, band, raise_tau = settings(LANE)
    highest_veto = max(settings(lane)[0] for lane in ENCODERS)
    highest_raise = max(settings(lane)[2] for lane in ENCODERS)
    records = vr.read_set(guard, name, examples, highest_veto=highest_veto, reach=band, highest_raise=highest_raise)
    under = [
        r["row"]
        for r in records
        if r["lane"] == LANE
        and not r["flagged_by_model"]
        and r["gap"] <= band
        and r["verifier"] is not None  # too long to read: the guard reads it with neither verifier
        and r["verifier"] < raise_tau
    ]
    model = guard._model()
    found: dict[int, float] = {}
    if under:
        verifier = (other or shipped_veto(False)).verifier(OTHER, str(model.meta.get("model_version")))
        if verifier is None:
            raise SystemExit("the e5 verifier does not load: this round cannot read")
        texts = {i: examples[i].text for i in under}
        found = verifier_logits(
            verifier.logits,
            texts,
            model.second_reading,
            model.feature_version,
            stop_at=max(LINES),
            reading=verifier.weights.reading_for(True),
        )
    return [r | {"other": round(found[r["row"]], 4) if r["row"] in found else None} for r in records]


def flags(record: dict[str, Any], either: float | None, line: float) -> bool:
    """Whether the guard flags this row: as shipped (`intent_veto_raise.guard_flags`), or, with `either`, an English
    near miss within the band whose e5 logit reaches it."""
    if vr.guard_flags(record, *settings(record["lane"]), line):
        return True
    near = record["lane"] == LANE and not record["flagged_by_model"] and record["gap"] <= settings(LANE)[1]
    return either is not None and near and record.get("other") is not None and record["other"] >= either


def errors(rows: list[dict[str, Any]], point: dict[str, Any], line: float) -> dict[str, Any]:
    """`point` with the benign rows it flags, the requests it misses and their sum among `rows`."""
    return point | vr.error_counts(rows, [flags(r, point["either"], line) for r in rows])


def choose(rows: list[dict[str, Any]], eligible: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """The rule's point on `rows` among `eligible`: the fewest errors; ties to the shipped settings (no line), fewer
    benign rows flagged, the higher line."""
    counted = [errors(rows, point, line) for point in eligible]
    return min(
        counted,
        key=lambda p: (p["errors"], p["either"] is not None, p["benign_flagged"], -(p["either"] or 0.0)),
    )


def leave_one_set_out(rows: list[dict[str, Any]], eligible: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """`intent_loso.leave_one_set_out` over `SETS` with this round's rule among the `eligible` points."""
    count = functools.partial(errors, line=line)
    return il.leave_one_set_out(rows, eligible, SETS, functools.partial(choose, line=line), count)


def public_check(records: list[dict[str, Any]], either: float | None, line: float) -> dict[str, Any]:
    """Step 1: per public bucket, rows flagged with `either` (both lanes), rows the raise reads (unchanged: the band is
    as shipped) and English near misses the e5 verifier reads on top."""
    out = {}
    for name in ir.PUBLIC:
        rows = [r for r in records if r["set"] == f"public-{name}"]
        flagged = sum(flags(r, either, line) for r in rows)
        read = sum(1 for r in rows if not r["flagged_by_model"] and r["gap"] <= settings(r["lane"])[1])
        other = sum(1 for r in rows if r["other"] is not None)
        out[name] = {
            "flagged": ig.share(flagged, len(rows)),
            "read_by_raise": ig.share(read, len(rows)),
            "read_by_e5_too": ig.share(other, len(rows)),
        }
    return out


def write_candidate(folder: Path, either: float) -> None:
    """The packaged MiniLM file with `raise_either_tau` and its header saying which sets chose it, and the packaged
    e5 file, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    vr.packaged_weights(OTHER).save(folder / shipped_weights(OTHER).name)  # as the round compared with it
    save_with_either(folder, either, "session 45", "intent_raise_either")


def save_with_either(folder: Path, either: float, session: str, script: str) -> None:
    """The packaged MiniLM file with `raise_either_tau` `either`, its header saying who chose it on `SETS`, in
    `folder` (which must exist)."""
    weights = VetoWeights.load(shipped_weights(LANE))
    meta = dict(weights.meta) | {
        "raise_either_chosen": f"{session} on the read sets {', '.join(SETS)} (benchmarks/{script}.py)"
    }
    chosen = dataclasses.replace(weights, raise_either_tau=float(either), meta=meta)
    chosen.save(folder / shipped_weights(LANE).name)


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_raise_either.json")
    parser.add_argument("--calib-rows", type=Path, required=True, help="the calibration split's per-row records")
    args = parser.parse_args(argv)
    ir.refuse_fitted_reading(SETS, "intent_raise_either.json")
    guard = ExtractionIntent(second_opinion=False)
    line = logit(guard._model().threshold)
    reader = functools.partial(read_set, guard)
    records = ir.records_of(args, reader, SETS, er.TRAINED_ON)
    calib = [r for r in er.calibration_records(args.calib_rows, reader, args.data) if r["lane"] == LANE]
    calib_flags = [sum(flags(r, point["either"], line) for r in calib) for point in POINTS]
    eligible = [point for point, n in zip(POINTS, calib_flags, strict=True) if n <= calib_flags[0]]
    rows = [r for r in records if r["lane"] == LANE and not r["set"].startswith("public-")]
    counted = [errors(rows, p, line) | {"calibration_flags": n} for p, n in zip(POINTS, calib_flags, strict=True)]
    chosen = choose(rows, eligible, line)
    loso = leave_one_set_out(rows, eligible, line)
    il.print_grid(counted, ("either", "calibration_flags"))
    passes = il.verdict(counted[0], chosen, loso)
    result: dict[str, Any] = {
        "sets": list(SETS),
        "rows": {"english_lane": len(rows), "calibration_english_lane": len(calib)},
        "grid": counted,
        "chosen": chosen,
        "leave_one_set_out": loso,
        "passes_development": passes,
        "public": public_check(records, chosen["either"], line),
    }
    for name, row in result["public"].items():
        print(
            f"public {name}: flagged {row['flagged']['k']}/{row['flagged']['n']}, read by e5 too "
            f"{row['read_by_e5_too']['k']}"
        )
    qs.write_json(args.out, result)
    if args.candidate and passes:
        write_candidate(args.candidate, chosen["either"])
        print(f"wrote {args.candidate}")


if __name__ == "__main__":
    main()
