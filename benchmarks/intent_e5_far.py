"""The thirty-second round toward v14 (issue 18): the e5 raise reaching further, its band and line chosen on the four
read sets the packaged e5 file (EY) did not train on.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_e5_far.py --rows runs/r36/rows.json \\
        --calib-rows runs/r36/calib.json --test-rows runs/r36/test.json [--candidate DIR]

The guard as shipped (model v13, the packaged verifiers, no raise applied) reads `SETS` (rows equal to a training row
of v13 or of a set EY trained on left out), the public benign test buckets, the calibration split and v13's benign
test buckets in other languages (`TEST_BUCKETS`). Each flag is read by its lane's verifier; each near miss of the e5
lane within `max(BANDS)` logits (English: the packaged band) is read up to `max(RAISE_TAUS)`. The rows are kept in
`--rows`, `--calib-rows` and `--test-rows` (one record per row, no text). The rule in the model card ("Toward v14,
thirty-second round"): over `BANDS` x `RAISE_TAUS` at the packaged e5 veto line, the points in
`intent_veto_raise.choose`'s order that make fewer development errors than the packaged settings (as the round
compared with them, band 4 and line 3: `intent_veto_raise.packaged_weights`), flagging at most their benign rows; the
first is checked against the calibration split, the test buckets (`TEST_ALLOWANCE`) and the public gate, where a
failure ends the round, and then against the cost bound (`COST_LIMIT` median retrievals added per routed query,
`read_cost`), where a failure passes to the next point. `--candidate DIR` writes the packaged files with the chosen
e5 band and line and a header saying so into DIR (for `intent_veto_judge.py --candidate DIR`) only when every step
holds. Writes `--out` (default `benchmarks/results/intent_e5_far.json`) and prints the steps. The cached records are
reused as they are: give new files for another reading.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np

import intent_e5_all_spent as all_spent
import intent_e5_refit as er
import intent_generalisation as ig
import intent_raise as ir
import intent_sets as isets
import intent_veto_judge as judge
import intent_veto_raise as vr
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_weights
from ragshield.guards.intent_veto_reading import verifier_logits
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

SETS = ("v39", "chat26", "v40", "chat27")  # read once as the thirty-first round's judge; EY trained on none
LANE = "e5"
BANDS = (4.0, 6.0, 8.0, 12.0)
RAISE_TAUS = (3.0, 3.5, 4.0, 4.5, 5.0, 6.0)
TEST_BUCKETS = ("own-hard", "own-chat", "written-hard", "written-chat")  # training rows of neither v13 nor EY
TEST_ALLOWANCE = 2  # e5-lane test-bucket rows flagged beyond the packaged settings'
PUBLIC_LIMIT, READ_LIMIT = all_spent.PUBLIC_LIMIT, all_spent.READ_LIMIT
COST_LIMIT = 3.0  # median retrievals the e5 reading of near misses may add per routed query, on average
COST_SAMPLE, COST_SEED = 80, 48


def reader(e5: Path | None = None) -> Any:
    """`intent_veto_raise.read_set` with the packaged verifiers (or `e5` as the e5 file), e5 near misses read out to
    the widest band."""
    guard = ExtractionIntent(second_opinion=False)
    guard.veto_ = IntentVeto(
        {lane: shipped_weights(lane) for lane in ENCODERS} | ({LANE: e5} if e5 else {}), raises=False
    )
    minilm_band = VetoWeights.load(shipped_weights("minilm")).raise_band or 0.0
    return functools.partial(
        vr.read_set,
        guard,
        highest_raise=max(RAISE_TAUS),
        reach_of={LANE: max(BANDS), "minilm": minilm_band},
    )


def test_records(path: Path, read: Any, data: Path) -> list[dict[str, Any]]:
    """v13's benign test buckets `TEST_BUCKETS` as `read` reads them (set "test-<bucket>"), cached in `path`."""
    if path.exists():
        return list(json.loads(path.read_text()))
    test = ti.build_corpus(data).test
    records = [record for name in TEST_BUCKETS for record in read(f"test-{name}", test[name])]
    qs.write_json(path, records)
    return records


def lane_flags(records: list[dict[str, Any]], point: dict[str, Any], line: float) -> int:
    """The e5-lane rows of `records` the guard flags at `point`."""
    return sum(vr.guard_flags(r, *vr.settings(point), line) for r in records if r["lane"] == LANE)


def ordered(points: list[dict[str, Any]], shipped: dict[str, Any]) -> list[dict[str, Any]]:
    """`intent_veto_raise.choose`'s order over the points that flag at most the packaged settings' benign rows and
    make fewer errors than they do: the first is its choice."""
    eligible = [
        p for p in points if p["benign_flagged"] <= shipped["benign_flagged"] and p["errors"] < shipped["errors"]
    ]
    return sorted(eligible, key=lambda p: (p["errors"], p["benign_flagged"], p["tau"], p["band"], -p["raise_tau"]))


def kept_texts(name: str, data: Path) -> list[str]:
    """The texts of set `name` as `intent_raise.read_all` numbered them: its rows less those equal to a training row
    of v13 or of a set EY trained on."""
    written = isets.heldout(isets.HELDOUT_SETS[name])
    return [written[i].text for i in judge.unseen_rows(written, data, all_spent.TRAINED_ON)]


def retrieval_us(data: Path) -> float:
    """The median single-thread retrieval (MiniLM query embedding + exact search over 2,000 vectors, microseconds) of
    a seeded sample of `SETS`' texts: the unit of step 4, timed once for every point."""
    from ragshield.rag.embedding import SentenceTransformerEmbedder

    texts = [text for name in SETS for text in kept_texts(name, data)]
    with qs.single_thread():
        embedder = SentenceTransformerEmbedder()
        index = ig.random_index(embedder.dimension, 2000)
        embedder.embed(["warm up"])
        sample = random.Random(5).sample(texts, 50)
        return float(np.median([ig.timed_retrieval(embedder, index, t)[0] for t in sample]))


def read_cost(records: list[dict[str, Any]], point: dict[str, Any], data: Path, retrieval: float) -> dict[str, Any]:
    """Step 4: single-thread CPU time of the e5 verifier reading the development sets' routed near misses within
    `point`'s band (a seeded sample, stopping at its raise line, as the guard reads), per routed query, in median
    retrievals (`retrieval`, microseconds)."""
    texts = {name: kept_texts(name, data) for name in SETS}  # a record's row counts the kept rows only
    routed = [r for r in records if r["set"] in texts and r["lane"] == LANE]
    near = [r for r in routed if not r["flagged_by_model"] and r["gap"] <= point["band"]]
    model = ExtractionIntent(second_opinion=False)._model()
    verifier = IntentVeto({LANE: shipped_weights(LANE)}).verifier(LANE, str(model.meta.get("model_version")))
    if verifier is None:
        raise SystemExit("the e5 verifier does not load: the reading's cost cannot be measured")
    spent = []
    with qs.single_thread():
        for record in random.Random(COST_SEED).sample(near, min(COST_SAMPLE, len(near))):
            read = functools.partial(
                verifier_logits,
                verifier.logits,
                {0: texts[record["set"]][record["row"]]},
                model.second_reading,
                model.feature_version,
                stop_at=point["raise_tau"],
                reading=verifier.weights.near_miss_reading,
            )
            read()  # warm
            spent.append(qs.cpu_time_us(read))
    mean = float(np.mean(spent)) if spent else 0.0
    return {
        "routed_queries": len(routed),
        "near_misses_read": len(near),
        "timed": len(spent),
        "read_us_mean": mean,
        "retrieve_us_median": retrieval,
        "added_retrievals_per_routed_query": len(near) / max(len(routed), 1) * mean / retrieval,
    }


def gates(
    records: list[dict[str, Any]],
    calib: list[dict[str, Any]],
    test: list[dict[str, Any]],
    point: dict[str, Any],
    shipped: dict[str, Any],
    line: float,
) -> dict[str, Any]:
    """Steps 1-3 for `point`: the calibration split's and the test buckets' e5-lane flags against the packaged
    settings', and the public gate (each bucket at most 1% flagged, at most 3% of their rows read)."""
    minilm = VetoWeights.load(shipped_weights("minilm"))
    chosen = {LANE: point, "minilm": {"tau": minilm.tau, "band": minilm.raise_band, "raise_tau": minilm.raise_tau}}
    public = vr.public_check(records, chosen, line)
    read = sum(row["read_by_raise"]["k"] for row in public.values())
    rows = sum(row["read_by_raise"]["n"] for row in public.values())
    out = {
        "calibration": {"packaged": lane_flags(calib, shipped, line), "candidate": lane_flags(calib, point, line)},
        "test_buckets": {
            "e5_lane_rows": sum(r["lane"] == LANE for r in test),
            "packaged": lane_flags(test, shipped, line),
            "candidate": lane_flags(test, point, line),
        },
        "public": public,
        "public_read": ig.share(read, rows),
    }
    out["calibration_holds"] = out["calibration"]["candidate"] <= out["calibration"]["packaged"]
    out["test_holds"] = out["test_buckets"]["candidate"] <= out["test_buckets"]["packaged"] + TEST_ALLOWANCE
    out["public_holds"] = (
        all(row["flagged"]["rate"] <= PUBLIC_LIMIT for row in public.values())
        and out["public_read"]["rate"] <= READ_LIMIT
    )
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Read (or reuse) the rows, sweep the e5 lane and walk the rule's steps; the result as written to `--out`."""
    read = reader()
    records = ir.records_of(args, read, SETS, all_spent.TRAINED_ON)
    calib = er.calibration_records(args.calib_rows, read, args.data)
    test = test_records(args.test_rows, read, args.data)
    line = logit(ExtractionIntent(second_opinion=False)._model().threshold)
    packaged = VetoWeights.load(shipped_weights(LANE))
    points = vr.lane_points(records, LANE, line, ((packaged.tau,), BANDS, RAISE_TAUS))
    shipped = vr.shipped_point(points, LANE)
    result: dict[str, Any] = {"sets": list(SETS), "grid": points, "shipped": shipped, "tried": [], "chosen": None}
    print(f"e5 lane, packaged settings: {shipped}")
    retrieval = retrieval_us(args.data)
    for point in ordered(points, shipped):
        tried: dict[str, Any] = {"point": point} | gates(records, calib, test, point, shipped, line)
        result["tried"].append(tried)
        print(
            f"point {point}: calibration {tried['calibration']}, test buckets {tried['test_buckets']}, "
            f"public read {tried['public_read']['k']}/{tried['public_read']['n']}"
        )
        vr.print_public(tried["public"])
        if not (tried["calibration_holds"] and tried["test_holds"] and tried["public_holds"]):
            break  # steps 1-3 fail: the round ends, the shipped files stay
        tried["cost"] = read_cost(records, point, args.data, retrieval)
        added = tried["cost"]["added_retrievals_per_routed_query"]
        print(f"  {added:.2f} retrievals added per routed query")
        if added <= COST_LIMIT:
            result["chosen"] = point
            break
    result["shipped_cost"] = read_cost(records, shipped, args.data, retrieval)
    return result


def write_candidate(folder: Path, point: dict[str, Any]) -> None:
    """The packaged files with `point`'s e5 band and raise line, the e5 header saying which sets chose them, in
    `folder` (the file that shipped in session 48)."""
    ir.write_candidate(folder, {LANE: point})
    path = folder / shipped_weights(LANE).name
    weights = VetoWeights.load(path)
    meta = dict(weights.meta) | {
        "line_and_raise_chosen": "veto line +2.5 kept from the file this one replaced (chosen in session 45); raise "
        f"band {point['band']:g} logits and raise line {point['raise_tau']:g} chosen in session 48 on "
        f"{', '.join(SETS[:-1])} and {SETS[-1]}, which this file did not train on (benchmarks/intent_e5_far.py, the "
        "thirty-second round)",
        "development": list(SETS),
        "read_for": "the first stage v13 (session 47: refitted on its training rows and 38 spent development sets; "
        f"session 48: its raise reaches near misses {point['band']:g} logits under the line)",
    }
    dataclasses.replace(weights, meta=meta).save(path)


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_e5_far.json")
    parser.add_argument("--calib-rows", type=Path, required=True, help="the calibration split's records (read once)")
    parser.add_argument("--test-rows", type=Path, required=True, help="v13's test buckets' records (read once)")
    args = parser.parse_args(argv)
    ir.refuse_fitted_reading(SETS, "intent_e5_far.json")  # the e5 file packaged since session 54 trained on them
    result = run(args)
    qs.write_json(args.out, result)
    print(f"chosen: {result['chosen']}")
    if args.candidate and result["chosen"]:
        write_candidate(args.candidate, result["chosen"])
        print(f"wrote {args.candidate}")


if __name__ == "__main__":
    main()
