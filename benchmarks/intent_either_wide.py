"""The forty-first round toward v14 (issue 18; session 56, model card): the either raise reaching 12 logits under the
line (WIDE, the opt-in since session 52) as the default, so that short English chat-wrapped requests the first stage
scores far under its line are read at all.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_either_wide.py --rows runs/r45/rows.json \\
        [--candidate DIR]

The session-55 diagnostic found most missed English chat-wrapped requests "not asked": beyond the band in which any
verifier reads them. This sweeps the either raise (read whole) over `CAPS` x `BANDS` x `LINES` on the six read sets
the packaged verifiers never trained on (`SETS`: v48 to v50 and chat35 to chat37, less their rows equal to a training
row) and the public benign test buckets, with the packaged files (`intent_either_far.summarise`: requests and benign
rows raised, each bucket's flags, the English rows e5 reads). Nothing here chooses: the rule names WIDE's point
(`WIDE`), and the sweep is the development evidence it was written after. `--candidate DIR` writes the packaged files
with the MiniLM file naming `WIDE` (its header saying so) and reads steps 1 and 2 through the whole guard
(`intent_minilm_public_bound.whole_guard_steps`: the calibration split at most the packaged guard's flags; each public
bucket at most 1% and at most the packaged guard's flags). The judges v51 and chat38 then decide
(`intent_veto_judge.py --set v51|chat38 --candidate DIR`), and `intent_either_cost.py` times it. Writes `--out`
(default `benchmarks/results/intent_either_wide.json`) and prints a table.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import intent_e5_routed as routed
import intent_either_far as ef
import intent_either_short as es
import intent_either_whole as ew
import intent_minilm_public_bound as bound
import intent_raise as ir
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

SETS = ("v48", "chat35", "v49", "chat36", "v50", "chat37")  # read; neither packaged verifier trained on them
CAPS = (120, 160)  # characters (`len` of the query text)
BANDS = (6.0, 8.0, 10.0, 12.0, 14.0)  # logits under the first stage's line
LINES = (1.5, 2.0, 2.5, 3.0)  # the e5 verifier's logit at which a near miss is raised
WIDE = {"chars": 120, "band": 12.0, "line": 2.0}  # session 52's opt-in, read whole; the round's candidate
SHIPPED = {"chars": 120, "band": 6.0, "line": 2.0}  # the packaged point (session 52), read whole
OUT = qs.REPO / "benchmarks" / "results" / "intent_either_wide.json"


def reader() -> Any:
    """A `read_set` for `intent_raise.records_of`: the packaged verifiers within their packaged bands; "other" (the e5
    verifier's whole reading of an English near miss) is read afterwards, by `intent_either_whole.read_whole`."""
    guard = ExtractionIntent(second_opinion=False)
    guard.veto_ = IntentVeto({lane: shipped_weights(lane) for lane in ENCODERS}, raises=False)
    bands = {lane: VetoWeights.load(shipped_weights(lane)).raise_band or 0.0 for lane in ENCODERS}
    return functools.partial(vr.read_set, guard, highest_raise=6.0, reach_of=bands)


def texts_of(data: Path) -> dict[str, list[str]]:
    """Per record set (`SETS`, less their rows equal to a training row, and the public buckets), its rows' texts in
    the order `intent_raise.read_all` reads them."""
    return es.texts_of(data, SETS, routed.TRAINED_ON)


def sweep(
    records: list[dict[str, Any]],
    texts: dict[str, list[str]],
    grid: tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...]] = (CAPS, BANDS, LINES),
) -> dict[str, Any]:
    """`intent_either_far.summarise` over `grid` (caps, bands, lines) on `records` (refused unless they are the rows of
    `texts`: `intent_either_short.with_lengths`), with each row's length and e5's whole reading of every English row
    within the grid's widest band and cap; the packaged point (`SHIPPED`) and `WIDE` named."""
    read = ew.read_whole(es.with_lengths(records, texts), texts, max(grid[1]), max(grid[0]))
    line_of_model = logit(ExtractionIntent(second_opinion=False)._model().threshold)
    summary = ef.summarise(read, line_of_model, grid, lambda points: None, SETS)
    named = {"shipped": point_at(summary["points"], SHIPPED)}
    if WIDE["band"] in grid[1] and WIDE["line"] in grid[2]:
        named["wide"] = point_at(summary["points"], WIDE)
    return summary | named


def point_at(points: list[dict[str, Any]], where: dict[str, Any]) -> dict[str, Any]:
    """The grid point with `where`'s cap, band and line (ValueError when the grid has none)."""
    for point in points:
        if all(point[key] == value for key, value in where.items()):
            return point
    raise ValueError(f"no grid point at {where}")


WIDE_CHOSEN = (
    "session 56: WIDE, the opt-in of session 52 (benchmarks/intent_either_whole.py), named by the forty-first round's "
    "rule after a sweep of the read sets v48 to v50 and chat35 to chat37 and the public buckets "
    "(benchmarks/intent_either_wide.py): e5 reads English near misses of at most 120 characters within 12 logits "
    "whole (the text and its second reading), raised at 2"
)


def write_candidate(folder: Path, point: dict[str, Any] = WIDE, chosen: str = WIDE_CHOSEN) -> None:
    """The packaged files in `folder`, the MiniLM file naming `point`'s cap, band and line read whole, its header's
    `either_raise_chosen` saying where they came from (`chosen`)."""
    ef.write_candidate(folder, point["line"], point["band"], point["chars"], "whole", chosen)


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, OUT.name)
    args = parser.parse_args(argv)
    ir.refuse_fitted_reading(SETS, OUT.name)
    texts = texts_of(args.data)
    result = sweep(ir.records_of(args, reader(), SETS, routed.TRAINED_ON), texts)
    print(ef.table(result))
    print(f"WIDE: {result['wide']}\nshipped: {result['shipped']}")
    if args.candidate:
        write_candidate(args.candidate)
        result |= bound.whole_guard_steps(args.data, args.candidate)
        print(routed.table(result))
    qs.write_json(args.out, result)


if __name__ == "__main__":
    main()
