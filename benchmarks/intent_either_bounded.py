"""The forty-second to forty-fourth rounds toward v14 (issue 18; session 56, model card): the either raise's reach
chosen on the six read sets of the forty-first round, within the calibration split's bound.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_either_bounded.py --rows runs/r45/rows.json \\
        --calib-rows runs/r45/calib.json [--round 42|43|44] [--candidate DIR]

WIDE (band 12) raised 2 more calibration questions than the packaged point and failed the forty-first round's step 1.
This reads the calibration split once with the same reader as that round's records (`intent_either_wide.reader`; cached
in `--calib-rows`), has e5 read whole every English row within the grid's widest band and cap, and sweeps the either
raise over the round's grid (`GRIDS`: round 42 `CAPS` x `BANDS` x `LINES`; round 43 a finer one between bands 6 and 8,
after the forty-second round found its two calibration questions 6.6 and 7.4 logits under the line; round 44 lines 2
to 6, since e5 reads those questions at 2.0 and 4.5). `choose` takes the rule's point: of those raising at most the
packaged point's calibration questions, no public row more than it, each public bucket within 1% and at most
`MOST_BENIGN_RAISED` benign development rows, the most development requests raised (ties: fewer benign rows raised in
all, the narrower band, the higher line, the shorter cap); none when that is the packaged point. `--candidate DIR`
writes it and reads steps 1 and 2 through the whole guard (`intent_minilm_public_bound.whole_guard_steps`); the judges
v51 and chat38 then decide (`intent_veto_judge.py --set v51|chat38 --candidate DIR`; round 44: v52 and chat39).
Writes `--out` (default `benchmarks/results/intent_either_bounded.json`, later rounds `..._round<N>.json`) and prints
a table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import intent_e5_routed as routed
import intent_either_far as ef
import intent_either_short as es
import intent_either_whole as ew
import intent_either_wide as wide
import intent_minilm_public_bound as bound
import intent_raise as ir
import query_sets as qs
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import VetoWeights

CAPS = wide.CAPS  # characters
BANDS = wide.BANDS  # logits under the first stage's line
LINES = (1.5, 2.0, 2.5, 3.0, 3.5, 4.0)  # the e5 verifier's logit at which a near miss is raised
MOST_BENIGN_RAISED = 2  # benign development rows (the thirty-fourth and thirty-fifth rounds' bound)
CALIBRATION = "calib"
ROUND_NAMES = {42: "forty-second", 43: "forty-third", 44: "forty-fourth"}
GRIDS = {
    42: (CAPS, BANDS, LINES),
    43: ((120,), (6.0, 6.5, 7.0, 7.5, 8.0), (2.0, 2.5, 3.0)),
    44: ((120,), (6.0, 8.0, 10.0, 12.0, 14.0), tuple(2.0 + 0.5 * step for step in range(9))),
}
OUT = qs.REPO / "benchmarks" / "results" / "intent_either_bounded.json"  # later rounds: ..._round<N>.json


def calibration_records(path: Path, data: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The calibration split's records (read once by `intent_either_wide.reader`, then cached in `path`) and texts;
    refuses a cache that is not this split's or that another round's reader wrote (a refit's "refit" readings)."""
    cached = list(json.loads(path.read_text())) if path.exists() else None
    if cached is not None and ({r["set"] for r in cached} != {CALIBRATION} or any("refit" in r for r in cached)):
        raise SystemExit(f"{path.name} does not hold this round's calibration split records: give a new --calib-rows")
    examples = ir.ti.build_corpus(data).calib
    if cached is None:
        cached = wide.reader()(CALIBRATION, examples)
        qs.write_json(path, cached)
    elif len(cached) != len(examples):
        raise SystemExit(f"{path.name} does not hold this round's calibration split records: give a new --calib-rows")
    return cached, [e.text for e in examples]


def calibration_raised(calibration: list[dict[str, Any]], point: dict[str, Any], minilm: VetoWeights) -> int:
    """The calibration questions `point`'s either raise raises (each one the whole guard then flags more)."""
    return sum(ef.raised_by_other(r, point["band"], point["line"], minilm, point["chars"]) for r in calibration)


def choose(points: list[dict[str, Any]], packaged: dict[str, Any]) -> dict[str, Any] | None:
    """The rule's point (`points` carry "calibration_raised"), or None when it is the packaged point."""
    best = ef.best_of(
        points,
        lambda p: (
            p["calibration_raised"] <= packaged["calibration_raised"]
            and all(p["public"][name]["raised"] <= packaged["public"][name]["raised"] for name in ir.PUBLIC)
            and p["public_within_goal"]
            and p["benign_raised"] <= MOST_BENIGN_RAISED
        ),
        lambda p: (
            -p["requests_raised"],
            ef.benign_raised(p) + p["calibration_raised"],
            p["band"],
            -p["line"],
            p["chars"],
        ),
    )
    if best is None or all(best[key] == packaged[key] for key in ("chars", "band", "line")):
        return None
    return best


def sweep(
    records: list[dict[str, Any]],
    calibration: list[dict[str, Any]],
    texts: dict[str, list[str]],
    calibration_texts: list[str],
    grid: tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...]],
) -> dict[str, Any]:
    """`intent_either_wide.sweep` over `grid`, each point with the calibration questions it raises (e5 reading the
    split's English rows whole to the grid's edge), the packaged point and the rule's choice."""
    summary = wide.sweep(records, texts, grid)
    summary.pop("wide", None)  # the forty-first round's point, not this round's
    split = {CALIBRATION: calibration_texts}
    calibrated = ew.read_whole(es.with_lengths(calibration, split), split, max(grid[1]), max(grid[0]))
    minilm = VetoWeights.load(shipped_weights("minilm"))
    points = [p | {"calibration_raised": calibration_raised(calibrated, p, minilm)} for p in summary["points"]]
    packaged = wide.point_at(points, wide.SHIPPED)
    return summary | {"points": points, "shipped": packaged, "chosen": choose(points, packaged)}


def chosen_text(point: dict[str, Any], number: int) -> str:
    """The candidate MiniLM file's `either_raise_chosen` (round `number`)."""
    return (
        f"session 56, by the {ROUND_NAMES[number]} round's rule (benchmarks/intent_either_bounded.py --round "
        f"{number}) on the read sets v48 to "
        "v50 and chat35 to chat37, bounded by the calibration split and the public buckets: e5 reads English near "
        f"misses of at most {point['chars']} characters within {point['band']:g} logits whole (the text and its "
        f"second reading), raised at {point['line']:g}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, OUT.name)
    parser.add_argument("--calib-rows", type=Path, required=True, help="the calibration split's per-row records")
    parser.add_argument("--round", type=int, choices=sorted(GRIDS), default=max(GRIDS), help="whose grid")
    args = parser.parse_args(argv)
    if args.round != 42 and args.out == OUT:
        args.out = OUT.with_name(f"{OUT.stem}_round{args.round}.json")
    ir.refuse_fitted_reading(wide.SETS, args.out.name)
    texts = wide.texts_of(args.data)
    records = ir.records_of(args, wide.reader(), wide.SETS, routed.TRAINED_ON)
    calibration, calibration_texts = calibration_records(args.calib_rows, args.data)
    result = sweep(records, calibration, texts, calibration_texts, GRIDS[args.round])
    print(ef.table(result))
    for p in result["points"]:
        print(f"cap {p['chars']}, band {p['band']:g}, line {p['line']:g}: calibration raised {p['calibration_raised']}")
    print(f"packaged: {result['shipped']}\nchosen: {result['chosen']}")
    if result["chosen"] is None:
        print("the rule's point is the packaged one: the round ends, no candidate written")
    elif args.candidate:
        wide.write_candidate(args.candidate, result["chosen"], chosen_text(result["chosen"], args.round))
        result |= bound.whole_guard_steps(args.data, args.candidate)
        print(routed.table(result))
    qs.write_json(args.out, result)


if __name__ == "__main__":
    main()
