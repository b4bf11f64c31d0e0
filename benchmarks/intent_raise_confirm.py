"""The twenty-second round toward v14 (issue 18): an English near miss raised only when the e5 verifier confirms it.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_raise_confirm.py --rows ROWS [--candidate DIR] [--cost]

The model alone (v13) reads the twenty-first round's fourteen development sets (`intent_raise_band.DEVELOPMENT`, rows
left out the same way) and the public benign test buckets as `intent_veto_raise.read_set` reads them, near misses
within `max(BANDS)` logits; each English-lane near miss whose MiniLM logit reaches the lowest raise line is read by the
e5 verifier too, as a confirmation is read (`confirm`, up to the highest confirmation line). `--rows` keeps one
record per row (no text). The sweep applies the rule in the model card ("Toward v14, twenty-second round") to the
English lane over `BANDS` x `RAISE_TAUS` x `CONFIRM_TAUS` (veto line and the e5 lane as shipped). `--candidate DIR`
writes the packaged MiniLM file with the chosen raise and confirmation and the packaged e5 file into DIR, for
`intent_veto_judge.py --candidate DIR`; `--cost` times the shipped guard and the candidate end to end on the public
buckets, single-thread. Writes `--out` (default `benchmarks/results/intent_raise_confirm.json`).

`--calib-rows FILE` runs the twenty-third round instead: the calibration split's records (read as the development
sets are, cached in FILE) bound the choice too: a point must flag at most the shipped settings' English-lane rows of
the split (`calibration_flags`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from pathlib import Path
from typing import Any

import intent_e5_refit as er
import intent_generalisation as ig
import intent_raise as ir
import intent_raise_band as band_round
import intent_sets as isets
import intent_veto_judge as judge
import intent_veto_raise as vr
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_weights, weights_file_name
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

LANE, CONFIRMER = "minilm", "e5"
BANDS = (4.0, 5.0)
RAISE_TAUS = (0.0, 1.0, 2.0, 3.0)
CONFIRM_TAUS: tuple[float | None, ...] = (None, 0.0, 1.0, 2.0, 3.0, 4.0)


def read_set(guard: ExtractionIntent, name: str, examples: list[isets.Example]) -> list[dict[str, Any]]:
    """`intent_veto_raise.read_set`'s records; an English-lane near miss whose MiniLM logit reaches the lowest raise
    line also with the e5 verifier's logit, read as a confirmation is read (`confirm`; None: not read)."""
    highest_veto = max(band_round.shipped_line(lane) for lane in ENCODERS)
    records = vr.read_set(guard, name, examples, highest_veto, reach=max(BANDS), highest_raise=max(RAISE_TAUS))
    asked = [
        r["row"]
        for r in records
        if r["lane"] == LANE
        and not r["flagged_by_model"]
        and r["verifier"] is not None
        and r["verifier"] >= min(RAISE_TAUS)
    ]
    texts = [e.text for e in examples]
    highest = max(t for t in CONFIRM_TAUS if t is not None)
    found = ir.lane_logits(guard, texts, asked, [True] * len(texts), highest, near_miss=True)  # read by e5
    for record in records:
        record["confirm"] = round(found[record["row"]], 4) if record["row"] in found else None
    return records


def guard_flags(record: dict[str, Any], point: dict[str, Any], line: float) -> bool:
    """Whether the guard flags an English-lane row at `point` (a raise needs the confirmation when it names a line)."""
    if record["flagged_by_model"]:
        return vr.guard_flags(record, point["tau"], point["band"], point["raise_tau"], line)
    confirm, needed = record.get("confirm"), point["confirm_tau"]
    confirmed = needed is None or (confirm is not None and confirm >= needed)
    return vr.guard_flags(record, point["tau"], point["band"], point["raise_tau"], line) and confirmed


def points(records: list[dict[str, Any]], line: float) -> list[dict[str, Any]]:
    """Per grid point, the development rows of the English lane the guard flags (benign) and misses (requests)."""
    rows = [r for r in records if r["lane"] == LANE and not r["set"].startswith("public-")]
    out = []
    for band in BANDS:
        for raise_tau in RAISE_TAUS:
            for confirm_tau in CONFIRM_TAUS:
                point = {"tau": band_round.shipped_line(LANE), "band": band, "raise_tau": raise_tau}
                point["confirm_tau"] = confirm_tau
                flagged = [guard_flags(r, point, line) for r in rows]
                out.append(point | vr.error_counts(rows, flagged))
    return out


def shipped_point(grid: list[dict[str, Any]]) -> dict[str, Any]:
    """The grid point of the packaged English file (no confirmation)."""
    weights = VetoWeights.load(shipped_weights(LANE))
    wanted = (weights.raise_band, weights.raise_tau, weights.raise_confirm_tau)
    return next(p for p in grid if (p["band"], p["raise_tau"], p["confirm_tau"]) == wanted)


def choose(grid: list[dict[str, Any]], shipped: dict[str, Any]) -> dict[str, Any] | None:
    """The rule's point, or None when no point flagging at most the shipped benign rows makes fewer errors."""
    eligible = [p for p in grid if p["benign_flagged"] <= shipped["benign_flagged"]]

    def order(p: dict[str, Any]) -> tuple[float, ...]:
        confirm = p["confirm_tau"]
        return (p["errors"], p["benign_flagged"], p["band"], -p["raise_tau"], confirm is not None, -(confirm or 0.0))

    best = min(eligible, key=order)
    return best if best["errors"] < shipped["errors"] else None


def calibration_flags(calibration: list[dict[str, Any]], grid: list[dict[str, Any]], line: float) -> list[int]:
    """Per grid point (in order), the English-lane rows of the calibration split (all benign) the guard flags."""
    rows = [r for r in calibration if r["lane"] == LANE]
    return [sum(guard_flags(r, point, line) for r in rows) for point in grid]


def public_check(records: list[dict[str, Any]], point: dict[str, Any], line: float) -> dict[str, Any]:
    """Per public bucket, rows the guard flags with `point` on the English lane (e5 as shipped) and rows the raise
    reads (near misses within either lane's band)."""
    packaged = vr.packaged_weights(CONFIRMER)  # as the round compared with it
    e5 = (packaged.tau, float(packaged.raise_band or 0.0), float(packaged.raise_tau or 0.0))
    out = {}
    for name in ir.PUBLIC:
        rows = [r for r in records if r["set"] == f"public-{name}"]
        flagged = sum(guard_flags(r, point, line) if r["lane"] == LANE else vr.guard_flags(r, *e5, line) for r in rows)
        band = {LANE: point["band"], CONFIRMER: e5[1]}
        read = sum(1 for r in rows if not r["flagged_by_model"] and r["gap"] <= band[r["lane"]])
        out[name] = {"flagged": ig.share(flagged, len(rows)), "read_by_raise": ig.share(read, len(rows))}
    return out


def write_candidate(folder: Path, point: dict[str, Any]) -> None:
    """The packaged English file with `point`'s raise and confirmation (its header saying so), the e5 file as
    packaged, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    weights = vr.packaged_weights(LANE).with_raise(point["band"], point["raise_tau"])  # as the round compared with it
    meta = {
        **weights.meta,
        "raise_confirmed": "session 43 on fourteen development sets (benchmarks/intent_raise_confirm.py)",
    }
    weights = dataclasses.replace(weights, meta=meta).with_confirmation(point["confirm_tau"])
    weights.save(folder / weights_file_name(LANE))
    vr.packaged_weights(CONFIRMER).save(folder / weights_file_name(CONFIRMER))  # as the round compared with it


def end_to_end_cost(folder: Path, data: Path) -> dict[str, Any]:
    """Single-thread seconds the shipped guard and the candidate (`folder`'s files) take over the public buckets,
    embeddings and model included, each verifier loaded first; and the difference per query."""
    corpus = ti.build_corpus(data)
    texts = [e.text for name in ir.PUBLIC for e in corpus.test[name]]
    out: dict[str, Any] = {"queries": len(texts)}
    with qs.single_thread():
        for label, files in (("shipped", None), ("candidate", {e: folder / weights_file_name(e) for e in ENCODERS})):
            guard = ExtractionIntent()
            if files:
                guard.veto_ = IntentVeto(files)
            guard.scores(texts[:8])
            guard.veto_.preload(str(guard._model().meta.get("model_version")))
            started = time.perf_counter()
            guard.scores(texts)
            out[f"{label}_seconds"] = round(time.perf_counter() - started, 2)
    out["added_ms_per_query"] = round((out["candidate_seconds"] - out["shipped_seconds"]) * 1000 / len(texts), 3)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_raise_confirm.json")
    parser.add_argument("--cost", action="store_true", help="time both guards end to end on the public buckets")
    parser.add_argument("--calib-rows", type=Path, help="the twenty-third round: the calibration split's records")
    args = parser.parse_args(argv)
    guard = ExtractionIntent(second_opinion=False)
    reader = functools.partial(read_set, guard)
    records = ir.records_of(args, reader, band_round.DEVELOPMENT, judge.veto_trained_sets())
    line = logit(guard._model().threshold)
    grid = points(records, line)
    shipped = shipped_point(grid)
    result: dict[str, Any] = {"grid": grid, "shipped": shipped}
    eligible = grid
    if args.calib_rows:
        calibration = er.calibration_records(args.calib_rows, reader, args.data)
        if any(r.get("set") != "calib" or "confirm" not in r for r in calibration):  # another round's cache
            raise SystemExit(f"{args.calib_rows.name} holds records this round did not read: give a new --calib-rows")
        flags = calibration_flags(calibration, grid, line)
        bound = flags[grid.index(shipped)]
        lane_rows = sum(r["lane"] == LANE for r in calibration)
        result["calibration"] = {"rows": len(calibration), "lane_rows": lane_rows, "shipped": bound, "points": flags}
        eligible = [p for p, count in zip(grid, flags, strict=True) if count <= bound]
    result["chosen"] = chosen = choose(eligible, shipped)
    print(f"{LANE}: shipped {shipped}\n        chosen  {chosen}")
    if chosen is None:
        print("no point makes fewer errors than the shipped settings: the round ends, no candidate written")
        args.candidate = None
    else:
        result["public"] = public_check(records, chosen, line)
        vr.print_public(result["public"])
    ir.finish(args, result, write_candidate)
    if args.cost and args.candidate:
        result["cost"] = end_to_end_cost(args.candidate, args.data)
        print(f"cost: {result['cost']}")
        qs.write_json(args.out, result)


if __name__ == "__main__":
    main()
