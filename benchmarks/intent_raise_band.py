"""The twenty-first round toward v14 (issue 18): the raise's band widened.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_raise_band.py --rows ROWS.json [--candidate DIR] [--cost]

The model alone (v13) reads the fourteen development sets the packaged e5 file never trained on (`DEVELOPMENT`; rows
equal to a training row of v13, the verifiers' pairs or the sets the packaged second opinion trained on are left out)
and the public benign test buckets; each flag is read by its lane's packaged verifier up to the higher shipped veto
line, and each near miss within `max(BANDS)` logits under the line up to the highest raise line, as the guard reads
them (`intent_veto_raise.read_set`). `--rows` keeps one record per row (no text). The sweep applies the rule in the
model card ("Toward v14, twenty-first round"): per lane, its veto line as shipped, over `BANDS` x `RAISE_TAUS`, the
points flagging at most as many development benign rows as the shipped settings, the fewest errors, ties to fewer
benign flags, the smaller band and the higher raise line; the shipped point when none makes fewer errors.
`--candidate DIR` writes the packaged veto files with the chosen settings into DIR, for `intent_veto_judge.py
--candidate DIR`; `--cost` measures what the raise adds per public benign query with them (`intent_raise.raise_cost`).
Writes the sweep to `--out` (default `benchmarks/results/intent_raise_band.json`) and prints the chosen points.
"""

from __future__ import annotations

import functools

import intent_raise as ir
import intent_veto_judge as judge
import intent_veto_raise as vr
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

DEVELOPMENT = tuple(f"v{n}" for n in range(26, 33)) + tuple(f"chat{n}" for n in range(13, 20))
BANDS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
RAISE_TAUS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)


def shipped_line(lane: str) -> float:
    """The packaged veto line of `lane` (the round keeps it)."""
    return VetoWeights.load(shipped_weights(lane)).tau


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_raise_band.json")
    parser.add_argument("--cost", action="store_true", help="what the raise adds per public benign query")
    args = parser.parse_args(argv)
    ir.refuse_fitted_reading(DEVELOPMENT, "intent_raise_band.json")
    guard = ExtractionIntent(second_opinion=False)
    highest_veto = max(shipped_line(lane) for lane in ENCODERS)
    reader = functools.partial(
        vr.read_set, guard, highest_veto=highest_veto, reach=max(BANDS), highest_raise=max(RAISE_TAUS)
    )
    records = ir.records_of(args, reader, DEVELOPMENT, judge.veto_trained_sets())
    line = logit(guard._model().threshold)
    result = vr.sweep_lanes(records, line, {lane: ((shipped_line(lane),), BANDS, RAISE_TAUS) for lane in ENCODERS})
    shipped, chosen = result["shipped"], result["chosen"]
    if chosen == shipped:
        print("neither lane moves: the round ends, no candidate written")
        args.candidate = None
    else:
        result["public"] = vr.public_check(records, chosen, line)
        vr.print_public(result["public"])
        if args.cost:
            near = ir.public_near_misses(records)
            result["cost"] = {
                label: ir.raise_cost(near, dict(settings), args.data)
                for label, settings in (("shipped", shipped), ("RB", chosen))
            }
            print(f"cost: {result['cost']}")
    ir.finish(args, result, vr.write_candidate)


if __name__ == "__main__":
    main()
