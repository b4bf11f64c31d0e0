"""The sixteenth round toward v14 (issue 18): the MiniLM second opinion refitted on v13's rows.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_minilm_refit.py --refit FILE.npz --before OLD.npz \\
        --before-e5 OLD_E5.npz --rows ROWS.json [--candidate DIR] [--cost]

`--refit` is a MiniLM veto file fitted by `intent_verifier.py --save` on v13's training rows and the contrastive
pairs; `--before` the MiniLM file it is compared with (the round's: the session-29 file, from git, as `--before`
says; comparing MR with itself finds nothing), `--before-e5` the e5 file the round read with (packaged then, replaced in
the seventeenth round). The model alone (v13) reads the twenty development sets
(`DEVELOPMENT`: the fifteenth round's eighteen and v29 and chat16, each set's rows unseen by v13 and the verifiers'
pairs) and the public benign test buckets; each flag and each near miss is read by its lane's verifier as
`intent_veto_raise.read_set` reads it, once with `--before` and `--before-e5` and once with the refitted MiniLM in
its place (`refit`: the refitted logit of a MiniLM-lane row; an e5-lane row keeps that e5 file's). `--rows` keeps
one record per row (no text). The sweep applies the rule in the model card ("Toward v14, sixteenth round"), MiniLM
lane only, over `GRID`: of the points flagging at most as many development benign rows as the packaged MiniLM with
its settings, the fewest errors (ties: fewer benign flags, the lower veto line, the smaller band, the higher raise
line); none when that point makes no fewer errors than the packaged file. `--candidate DIR` writes the refitted file
with the chosen settings and the `--before-e5` file into DIR, for `intent_veto_judge.py --candidate DIR`. `--cost`
measures what the raise adds per public benign query with the chosen settings, read by the packaged verifiers
(`intent_raise.raise_cost`; once MR shipped, the refit itself: the report's figure). Writes the sweep to `--out`
(default `benchmarks/results/intent_minilm_refit.json`) and prints the chosen point.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import intent_raise as ir
import intent_raise_whole as whole
import intent_sets as isets
import intent_veto_raise as vr
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

DEVELOPMENT = (*whole.DEVELOPMENT, "v29", "chat16")
GRID = ((-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0), (1.0, 2.0, 3.0, 4.0), (0.0, 1.0, 2.0, 3.0, 4.0, 6.0))
LANE = "minilm"


def reader(
    refit: Path, before: Path, lane: str = LANE, highest_veto: float | None = None, other_file: Path | None = None
) -> Any:
    """A `read_set` for `ir.records_of`: the records of `lane`'s file `before` and the other lane's file (`other_file`,
    default the packaged one), each with the refitted verifier's logit (`refit`: for a row of the other lane, that
    file's logit); flags read up to `highest_veto` (default the fourteenth round's highest line)."""
    other = next(encoder for encoder in ENCODERS if encoder != lane)
    kept = other_file or shipped_weights(other)
    packaged = ExtractionIntent(second_opinion=False)
    packaged.veto_ = IntentVeto({lane: before, other: kept}, raises=False)
    refitted = ExtractionIntent(second_opinion=False)
    refitted.veto_ = IntentVeto({lane: refit, other: kept}, raises=False)

    def read(name: str, examples: list[isets.Example]) -> list[dict[str, Any]]:
        records = vr.read_set(packaged, name, examples, highest_veto)
        again = vr.read_set(refitted, name, examples, highest_veto)
        for record, again_record in zip(records, again, strict=True):
            record["refit"] = again_record["verifier"] if record["lane"] == lane else record["verifier"]
        return records

    return read


def refitted_view(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as the guard with the refitted MiniLM reads them."""
    return [{**r, "verifier": r["refit"]} for r in records]


def public_near_misses(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The public buckets' records as `intent_raise.raise_cost` reads them: a gap only for a row the model leaves
    under its line, and the refitted logit."""
    return [{**r, "verifier": r["refit"]} for r in ir.public_near_misses(records)]


def choose(points: list[dict[str, Any]], shipped: dict[str, Any]) -> dict[str, Any] | None:
    """The rule's point for the refit, or None when it makes no fewer errors than the packaged file."""
    best = vr.choose(points, shipped)
    return None if best is shipped else best


def save_refit(
    folder: Path,
    refit: Path,
    point: dict[str, Any],
    development: tuple[str, ...],
    header: dict[str, str],
    other: tuple[str, Path],
) -> None:
    """The refit `refit` with `point`'s veto line and raise, its header saying what it was fitted on and which sets,
    on whose flags, chose them (`header`: "fitted", "line_and_raise_chosen", "read_for"), and the other lane's file
    (`other`: encoder, path), in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    weights = VetoWeights.load(refit)
    version = weights.model_version
    meta = {key: value for key, value in weights.meta.items() if key != "development"} | {
        "fitted": header["fitted"],
        "line_and_raise_chosen": header["line_and_raise_chosen"],
        "development": list(development),
        "line_chosen_on_flags_of": version,
        "fitted_on_rows_of": version,
        "read_for": header["read_for"],
    }
    weights = dataclasses.replace(weights, tau=point["tau"], meta=meta)
    weights.with_raise(point["band"], point["raise_tau"]).save(folder / f"intent_veto_{weights.encoder}.npz")
    shutil.copyfile(other[1], folder / f"intent_veto_{other[0]}.npz")


def write_candidate(folder: Path, refit: Path, point: dict[str, Any], e5: Path | None = None) -> None:
    """The refitted MiniLM with the chosen veto line and raise and the header the shipped file carries (what it was
    fitted on, which sets chose its line, on whose flags), and the e5 file `e5` (default the packaged one), in
    `folder`."""
    version = VetoWeights.load(refit).model_version
    header = {
        "fitted": f"session 41 on {version}'s training rows and the contrastive pairs' training share "
        "(benchmarks/intent_verifier.py)",
        "line_and_raise_chosen": "session 41 on twenty development sets (benchmarks/intent_minilm_refit.py)",
        "read_for": f"the first stage {version} (session 41: refitted on its training rows, line {point['tau']} and "
        "raise chosen on its flags)",
    }
    save_refit(folder, refit, point, DEVELOPMENT, header, ("e5", e5 or shipped_weights("e5")))


def main(argv: list[str] | None = None) -> None:
    parser = ir.round_parser(__doc__, "intent_minilm_refit.json")
    parser.add_argument("--refit", type=Path, required=True, help="the MiniLM veto fitted on v13's rows")
    parser.add_argument("--cost", action="store_true", help="what the raise adds per public benign query")
    ir.add_before(parser, "9412fc0")
    args = parser.parse_args(argv)
    records = ir.records_of(args, reader(args.refit, args.before, other_file=args.before_e5), DEVELOPMENT)
    line = logit(ExtractionIntent(second_opinion=False)._model().threshold)
    packaged = vr.lane_points(records, LANE, line, GRID)
    shipped = vr.shipped_point(packaged, LANE, args.before)
    points = vr.lane_points(refitted_view(records), LANE, line, GRID)
    chosen = choose(points, shipped)
    e5 = vr.shipped_point(vr.lane_points(records, "e5", line), "e5", args.before_e5)
    result: dict[str, Any] = {"grid": points, "shipped": shipped, "chosen": chosen, "e5": e5}
    print(f"{LANE}: shipped {shipped}\n        chosen  {chosen}")
    if chosen is not None:
        result["public"] = vr.public_check(refitted_view(records), {LANE: chosen, "e5": e5}, line)
        vr.print_public(result["public"])
    if args.cost and chosen is not None:
        result["cost"] = ir.raise_cost(public_near_misses(records), {LANE: chosen, "e5": e5}, args.data)
        print(f"cost: {result['cost']}")
    if args.candidate and chosen is None:
        print("no point makes fewer errors than the packaged file: the round ends, no candidate written")
        args.candidate = None
    ir.finish(args, result, lambda folder, point: write_candidate(folder, args.refit, point, args.before_e5))


if __name__ == "__main__":
    main()
