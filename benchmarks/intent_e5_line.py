"""The twenty-sixth round toward v14 (issue 18): the e5 veto line allowed above the operating point.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_e5_line.py --rows runs/rows26.json [--candidate DIR]

The model alone (v13) reads the eighteen read sets the packaged e5 file never trained on (`SETS`, each set's rows
unseen by v13, the verifiers' pairs and the e5 file's twelve training sets) and the public benign test buckets; each
flag is read by its lane's verifier up to the highest line of the grid and each near miss within the shipped band up
to the highest raise line (`intent_veto_raise.read_set`). `--rows` keeps one record per row (no text). The sweep
applies the rule in the model card ("Toward v14, twenty-sixth round"): e5 lane only, over `LINES` x `RAISE_TAUS`
(band as shipped), every line but the shipped one read with `veto_over_point` (`intent_veto.let_through`); the fewest
errors, ties to the shipped point, fewer benign flags, the lower line, the lower raise line; and the same rule
leaving each set out in turn (`leave_one_set_out`). `--candidate DIR` writes the packaged MiniLM file and the e5 file
with the chosen settings into DIR, for `intent_veto_judge.py --candidate DIR`, only when both conditions hold.
Writes the sweep to `--out` (default `benchmarks/results/intent_e5_line.json`) and prints it.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
from pathlib import Path
from typing import Any

import intent_e5_refit as er
import intent_generalisation as ig
import intent_loso as il
import intent_raise as ir
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

SETS = (*(f"v{n}" for n in range(26, 35)), *(f"chat{n}" for n in range(13, 22)))
LANE = "e5"
LINES = (2.5, 3.0, 3.5, 4.0, 5.0, 6.0)  # the shipped line first: read capped, as the packaged file reads it
RAISE_TAUS = (3.0, 4.0, 5.0)  # the shipped raise line first


def shipped_settings() -> dict[str, Any]:
    """The packaged e5 file's line, band and raise line as this round compared with them
    (`intent_veto_raise.packaged_weights`), and whether its line may sit above the point."""
    weights = vr.packaged_weights(LANE)
    return {
        "tau": weights.tau,
        "band": weights.raise_band,
        "raise_tau": weights.raise_tau,
        "over_point": weights.veto_over_point,
    }


def grid(shipped: dict[str, Any]) -> list[dict[str, Any]]:
    """The round's points: the shipped line as the packaged file reads it, every other line above the point."""
    if (shipped["tau"], shipped["raise_tau"], shipped["over_point"]) != (LINES[0], RAISE_TAUS[0], False):
        raise SystemExit(f"the packaged e5 file is not the one this round compared with: {shipped}")
    return [
        shipped | {"tau": tau, "raise_tau": raise_tau, "over_point": tau != LINES[0]}
        for tau in LINES
        for raise_tau in RAISE_TAUS
    ]


def flags(record: dict[str, Any], point: dict[str, Any], line: float) -> bool:
    """Whether the guard flags this row at `point` (`intent_veto_raise.guard_flags` with `over_point`)."""
    return vr.guard_flags(record, point["tau"], point["band"], point["raise_tau"], line, point["over_point"])


def errors(rows: list[dict[str, Any]], point: dict[str, Any], line: float) -> dict[str, int]:
    """Benign rows `point` flags and requests it misses among `rows`, and their sum."""
    return vr.error_counts(rows, [flags(r, point, line) for r in rows])


def choose(rows: list[dict[str, Any]], points: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """The rule's point on `rows`: the fewest errors; ties to the shipped point (the first), fewer benign rows
    flagged, the lower line, the lower raise line."""
    counted = [point | errors(rows, point, line) for point in points]
    return min(
        counted,
        key=lambda p: (p["errors"], p is not counted[0], p["benign_flagged"], p["tau"], p["raise_tau"]),
    )


def leave_one_set_out(rows: list[dict[str, Any]], points: list[dict[str, Any]], line: float) -> dict[str, Any]:
    """`intent_loso.leave_one_set_out` over `SETS` with this round's rule."""
    count = functools.partial(errors, line=line)
    return il.leave_one_set_out(rows, points, SETS, functools.partial(choose, line=line), count)


def both_lanes(records: list[dict[str, Any]], point: dict[str, Any], line: float) -> dict[str, Any]:
    """Over the development rows of both lanes (MiniLM at its packaged settings): benign rows flagged and requests
    caught, each with its interval."""
    minilm = VetoWeights.load(shipped_weights("minilm"))
    english = {"tau": minilm.tau, "band": minilm.raise_band, "raise_tau": minilm.raise_tau, "over_point": False}
    rows = [r for r in records if not r["set"].startswith("public-")]
    flagged = [flags(r, point if r["lane"] == LANE else english, line) for r in rows]
    benign = [f for f, r in zip(flagged, rows, strict=True) if r["label"] == 0]
    requests = [f for f, r in zip(flagged, rows, strict=True) if r["label"] == 1]
    return {
        "benign_flagged": ig.share(sum(benign), len(benign)),
        "requests_caught": ig.share(sum(requests), len(requests)),
    }


def public_check(records: list[dict[str, Any]], point: dict[str, Any], line: float) -> dict[str, Any]:
    """Step 1: per public bucket, rows the guard flags with `point` on the e5 lane (MiniLM as packaged) and the rows
    the raise reads (the band is as shipped in both lanes, so this share does not move)."""
    minilm = VetoWeights.load(shipped_weights("minilm"))
    english = {"tau": minilm.tau, "band": minilm.raise_band, "raise_tau": minilm.raise_tau, "over_point": False}
    out = {}
    for name in ir.PUBLIC:
        rows = [r for r in records if r["set"] == f"public-{name}"]
        settings = {r["row"]: point if r["lane"] == LANE else english for r in rows}
        flagged = sum(flags(r, settings[r["row"]], line) for r in rows)
        read = sum(1 for r in rows if not r["flagged_by_model"] and r["gap"] <= settings[r["row"]]["band"])
        out[name] = {"flagged": ig.share(flagged, len(rows)), "read_by_raise": ig.share(read, len(rows))}
    return out


def write_candidate(folder: Path, point: dict[str, Any]) -> None:
    """The packaged MiniLM file and the packaged e5 file with the chosen line, raise line and `veto_over_point`
    (its header says which sets chose them), in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shipped_weights("minilm"), folder / shipped_weights("minilm").name)
    weights = vr.packaged_weights(LANE)
    meta = dict(weights.meta) | {
        "line_over_point_chosen": f"session 45 on the read sets {', '.join(SETS)} (benchmarks/intent_e5_line.py)"
    }
    chosen = dataclasses.replace(
        weights, tau=float(point["tau"]), veto_over_point=bool(point["over_point"]), meta=meta
    ).with_raise(point["band"], point["raise_tau"])
    chosen.save(folder / shipped_weights(LANE).name)


def main(argv: list[str] | None = None) -> None:
    args = ir.round_parser(__doc__, "intent_e5_line.json").parse_args(argv)
    ir.refuse_fitted_reading(SETS, "intent_e5_line.json")
    shipped = shipped_settings()
    points = grid(shipped)
    guard = ExtractionIntent(second_opinion=False)
    line = logit(guard._model().threshold)
    reader = functools.partial(
        vr.read_set, guard, highest_veto=max(LINES), reach=shipped["band"], highest_raise=max(RAISE_TAUS)
    )
    records = ir.records_of(args, reader, SETS, er.TRAINED_ON)
    rows = [r for r in records if r["lane"] == LANE and not r["set"].startswith("public-")]
    counted = [point | errors(rows, point, line) for point in points]
    chosen = choose(rows, points, line)
    loso = leave_one_set_out(rows, points, line)
    il.print_grid(counted, ("tau", "over_point", "raise_tau"))
    passes = il.verdict(counted[0], chosen, loso)
    result: dict[str, Any] = {
        "sets": list(SETS),
        "rows": {"e5_lane": len(rows)},
        "grid": counted,
        "shipped": counted[0],
        "chosen": chosen,
        "leave_one_set_out": loso,
        "passes_development": passes,
        "both_lanes": {"shipped": both_lanes(records, counted[0], line), "chosen": both_lanes(records, chosen, line)},
    }
    if passes:
        result["public"] = public_check(records, chosen, line)
        vr.print_public(result["public"])
    qs.write_json(args.out, result)
    if args.candidate and passes:
        write_candidate(args.candidate, chosen)
        print(f"wrote {args.candidate}")


if __name__ == "__main__":
    main()
