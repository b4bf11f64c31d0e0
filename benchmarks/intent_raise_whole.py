"""The fifteenth round toward v14 (issue 18): the raise reads near misses whole.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_raise_whole.py --before MINILM.npz --before-e5 E5.npz \\
        --rows ROWS.json [--candidate DIR] [--cost]

The shipped guard with its raise off (v13 and its second opinion, veto lines MiniLM -1 and e5 +2) reads the eighteen
development sets (`DEVELOPMENT`: the earlier rounds' fourteen and the spent judges v27, chat14, v28 and chat15; each
set's rows unseen by v13 and the verifiers' pairs) and the public benign test buckets. Each query it leaves
unflagged within `max(BANDS)` logits under its line is read whole by its lane's verifier (the text and its second
reading, `reading` "whole"), and, within the shipped band, piece by piece as the shipped raise reads it. `--rows`
keeps one record per row (`verifier`: the whole reading's logit; `pieces`: the shipped reading's; no text). The
sweep applies the rule in the model card ("Toward v14, fifteenth round"): per lane, over `BANDS` x `RAISE_TAUS`, of
the points flagging at most as many development benign rows as the shipped settings, the fewest errors; ties to
fewer benign rows, the smaller band, the higher line; a lane whose point makes more errors than its shipped settings
by more than 2% of its development requests keeps them. `--before` is the MiniLM file the round compared with (the
session-29 file, packaged until the sixteenth round), `--before-e5` the e5 file it read with (packaged until the
seventeenth round). `--candidate DIR` writes the
veto files (`intent_veto_judge.py --candidate DIR`); `--cost` measures the raise's cost for the shipped settings and
the candidate in one run (read by the packaged verifiers, which since the sixteenth round include the refitted
MiniLM: the rows read are the round's, where a read stops may differ). Prints a table and writes the sweep as JSON
(`--out`, default `benchmarks/results/intent_raise_whole.json`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import intent_raise as ir
import intent_sets as isets
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_veto import IntentVeto, shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

DEVELOPMENT = (*ir.DEVELOPMENT, "v27", "chat14", "v28", "chat15")
BANDS = (1.0, 2.0, 3.0, 4.0, 5.0)
RAISE_TAUS = (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
LANE_SLACK = 0.02  # a lane's chosen point may make more errors than its shipped settings by this share of requests


def shipped_settings(files: dict[str, Path] | None = None) -> dict[str, dict[str, Any]]:
    """Per lane, the raise settings of the packaged file (or of `files`, per encoder) and how it reads near misses."""
    out = {}
    for lane in ENCODERS:
        weights = VetoWeights.load((files or {}).get(lane) or shipped_weights(lane))
        if weights.raise_band is None or weights.raise_tau is None:
            raise SystemExit(f"the packaged {lane} file raises nothing: this round compares against its raise")
        out[lane] = {"band": weights.raise_band, "raise_tau": weights.raise_tau, "reading": weights.near_miss_reading}
    return out


def read_set(
    guard: ExtractionIntent, shipped: dict[str, dict[str, Any]], name: str, examples: list[isets.Example]
) -> list[dict[str, Any]]:
    """`intent_raise.read_set`'s records (their near misses read as the guard's raise reads them, kept as `pieces`
    within the `shipped` settings' band) with `verifier` the whole reading's logit of each near miss within
    `max(BANDS)`."""
    records = ir.read_set(guard, name, examples)  # reads within intent_raise's bands, as the packaged files read
    for record in records:
        record["pieces"] = record["verifier"] if _within(record, shipped[record["lane"]]["band"]) else None
        record["verifier"] = None
    texts = [e.text for e in examples]
    lanes = [r["lane"] == "e5" for r in records]
    near = [r["row"] for r in records if _within(r, max(BANDS))]
    for i, value in ir.lane_logits(guard, texts, near, lanes, max(RAISE_TAUS), reading="whole").items():
        records[i]["verifier"] = round(value, 4)
    return records


def _within(record: dict[str, Any], band: float) -> bool:
    return record["gap"] is not None and record["gap"] <= band


def as_read(records: list[dict[str, Any]], whole_lanes: set[str]) -> list[dict[str, Any]]:
    """The records with `verifier` the logit each lane's raise reads: whole in `whole_lanes`, else the pieces."""
    return [r if r["lane"] in whole_lanes else {**r, "verifier": r["pieces"]} for r in records]


def choose(
    points: list[dict[str, Any]], shipped: dict[str, Any], lane_requests: int
) -> tuple[dict[str, Any] | None, str]:
    """The rule's point for one lane, and why: of the points raising at most as many benign rows as the shipped
    settings, the fewest errors (ties: fewer benign rows, smaller band, higher line); None when that point makes
    more errors than the shipped settings by more than `LANE_SLACK` of the lane's development requests."""
    eligible = [p for p in points if p["benign_raised"] <= shipped["benign_raised"]]
    if not eligible:
        return None, "no point raises as few benign rows as the shipped settings"
    best = min(eligible, key=lambda p: (p["errors"], p["benign_raised"], p["band"], -p["raise_tau"]))
    if best["errors"] > shipped["errors"] + LANE_SLACK * lane_requests:
        return None, f"{best['errors']} errors against the shipped {shipped['errors']}: beyond the slack"
    return best, "chosen"


def write_candidate(folder: Path, chosen: dict[str, dict[str, Any] | None], files: dict[str, Path]) -> None:
    """The veto files `files` (per encoder; the packaged one where absent), a lane with a chosen point reading its
    near misses whole at its settings."""
    ir.write_candidate(folder, chosen, reading="whole", files=files)


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_raise_whole.json")
    parser.add_argument("--cost", action="store_true", help="the raise's cost, shipped and candidate, in one run")
    ir.add_before(parser, "9412fc0")
    args = parser.parse_args(argv)
    files = {"minilm": args.before, "e5": args.before_e5}
    shipped = shipped_settings(files)
    guard = ExtractionIntent(raise_near_misses=False)
    guard.veto_ = IntentVeto(files, raises=False)
    reader = functools.partial(read_set, guard, shipped)
    records = ir.records_of(args, reader, DEVELOPMENT)
    pieces = as_read(records, set())
    result: dict[str, Any] = {"grid": {}, "shipped": {}, "chosen": {}, "why": {}}
    for lane in ENCODERS:
        s = shipped[lane]
        result["shipped"][lane] = ir.sweep(pieces, lane, (s["band"],), (s["raise_tau"],))[0]
        result["grid"][lane] = ir.sweep(records, lane, BANDS, RAISE_TAUS)
        dev = [r for r in records if r["lane"] == lane and not r["set"].startswith("public-")]
        requests = sum(r["label"] == 1 for r in dev)
        result["chosen"][lane], result["why"][lane] = choose(result["grid"][lane], result["shipped"][lane], requests)
        print(f"{lane}: shipped {result['shipped'][lane]}")
        print("band  tau  requests_up  benign_up  errors")
        for p in result["grid"][lane]:
            up = f"{p['requests_raised']:12d} {p['benign_raised']:10d}"
            print(f"{p['band']:4.0f} {p['raise_tau']:4.0f} {up} {p['errors']:7d}")
        print(f"chosen: {result['chosen'][lane]} ({result['why'][lane]})")
    whole = {lane for lane, point in result["chosen"].items() if point}
    kept = {
        lane: result["chosen"][lane] or {"band": s["band"], "raise_tau": s["raise_tau"]} for lane, s in shipped.items()
    }
    result["public"] = ir.public_check(as_read(records, whole), kept)
    for name, row in result["public"].items():
        without, read = row["flagged_without"]["k"], row["read_by_raise"]["k"]
        print(f"public {name}: flagged {row['flagged']['k']}/{row['n']} (without {without}), read by the raise {read}")
    if args.cost and whole:
        readings = {lane: "whole" if lane in whole else shipped[lane]["reading"] for lane in ENCODERS}
        result["cost"] = {
            "shipped": ir.raise_cost(pieces, dict(shipped), args.data),
            "candidate": ir.raise_cost(records, kept, args.data, readings),
        }
        ratio = result["cost"]["candidate"]["added_us_per_query"] / result["cost"]["shipped"]["added_us_per_query"]
        result["cost"]["candidate_over_shipped"] = ratio
        print(f"cost: {result['cost']}")
    ir.finish(args, result, functools.partial(write_candidate, files=files))


if __name__ == "__main__":
    main()
