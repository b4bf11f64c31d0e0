"""The seventeenth round toward v14 (issue 18): the e5 second opinion refitted with spent development sets' rows.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_e5_refit.py --refit FILE.npz --before OLD.npz \\
        --before-other MINILM.npz --rows ROWS.json [--candidate DIR] [--cost]

`--refit` is an e5 veto file fitted by `intent_verifier.py --encoder e5 --save --train-heldout` on v13's training
rows, the contrastive pairs' training share and every row of the twelve older development sets (`TRAINED_ON`).
The model alone (v13) reads the ten newer development sets (`CHOOSING`, each set's rows unseen by v13 and the
verifiers' pairs; the refit never trained on them) and the public benign test buckets; each flag (up to the grid's
highest line) and each near miss is read by its lane's verifier as `intent_veto_raise.read_set` reads it, once with
the packaged files and once with the refit in e5's place (`refit`: the refitted logit of an e5-lane row; a
MiniLM-lane row keeps the packaged MiniLM's). `--rows` keeps one record per row (no text). The sweep applies the rule
in the model card ("Toward v14, seventeenth round"), e5 lane only, over `GRID`: of the points flagging at most as
many of the choosing sets' e5-lane benign rows as the packaged e5 with its settings, the fewest errors (ties: fewer
benign flags, the lower veto line, the smaller band, the higher raise line); none when that point makes no fewer
errors than the packaged file. `--before` is the e5 file compared with (required: the round's, packaged until EC
shipped, is `git show c1ef095:src/ragshield/data/intent_veto_e5.npz`), `--before-other` the MiniLM file it read with
(`git show c1ef095:src/ragshield/data/intent_veto_minilm.npz`); `check_refit` refuses files of the wrong lane or
model and a refit not trained on exactly `TRAINED_ON`. `--candidate DIR`
writes the refit with the chosen settings and the `--before-other` file into DIR, for `intent_veto_judge.py
--candidate DIR`. `--cost` measures what the raise adds per public benign query with the chosen settings, read by
the round's files (`intent_raise.raise_cost`). Writes the sweep to `--out` (default
`benchmarks/results/intent_e5_refit.json`) and prints the chosen point.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import intent_minilm_refit as mr
import intent_raise as ir
import intent_verifier_fit as ivf
import intent_veto_raise as vr
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

TRAINED_ON = (
    *("v19", "chat6", "v20", "chat7", "v22", "chat9"),
    *("v23", "chat10", "v24", "chat11", "v25", "chat12"),
)
CHOOSING = ("v26", "chat13", "v27", "chat14", "v28", "chat15", "v29", "chat16", "v30", "chat17")
GRID = ((1.0, 1.5, 2.0, 2.5, 3.0, 4.0), (1.0, 2.0, 3.0, 4.0), (0.0, 1.0, 2.0, 3.0, 4.0, 6.0))
LANE = "e5"


@dataclasses.dataclass(frozen=True)
class SpentRound:
    """A round that refits one lane's verifier with the spent development sets `TRAINED_ON` too and chooses its
    settings on `choosing` over `grid` (veto lines, bands, raise lines); the other lane keeps the file the round read
    with, read on `other_grid`. `before` and `other_before` name commits whose package held the file compared with
    and the other lane's file (the package changes once a round ships)."""

    lane: str
    choosing: tuple[str, ...]
    grid: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]
    other_grid: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]
    script: str
    before: str
    other_before: str
    how_many: str  # the number of choosing sets as the file's header spells it
    # the choosing sets' rows equal to a row of `TRAINED_ON` are left out (the eighteenth round; the seventeenth kept
    # them: 8 of its 4,590 rows, all benign, none flagged by either guard, so no count moves)
    leave_out_trained: bool = False
    # a point must also flag at most the packaged settings' rows of the calibration split (the nineteenth round)
    calibration_budget: bool = False
    session: int = 42  # the session whose round wrote the candidate (its header says so)
    # the weight the refit gave Enron's benign training rows (`intent_verifier.py --enron-weight`; 24th round)
    enron_weight: float = 1.0
    chat_request_weight: float = 1.0  # the same for requests wrapped in a chat turn (`--chat-request-weight`)
    routed_hard_benign_weight: float = 1.0  # and for the e5 lane's hard benign rows (`--routed-hard-benign-weight`)
    trained_on: tuple[str, ...] = TRAINED_ON  # the spent sets the refit trained on (the thirtieth round: ten more)

    @property
    def other(self) -> str:
        return next(encoder for encoder in ENCODERS if encoder != self.lane)


E5_ROUND = SpentRound(LANE, CHOOSING, GRID, mr.GRID, "intent_e5_refit", "c1ef095", "c1ef095", "ten")


def check_refit(refit: Path, before: Path, other: Path, spent: SpentRound, model_version: str) -> None:
    """Refuse files that are not what the round assumes: the refit and `before` of the round's lane, `other` of the
    other lane, all read for `model_version`, and the refit trained on exactly `spent.trained_on` (so on none of the
    sets that choose its settings). A wrong file would otherwise read as unavailable and end the round quietly."""
    loaded = {path: VetoWeights.load(path) for path in (refit, before, other)}
    for path, lane in ((refit, spent.lane), (before, spent.lane), (other, spent.other)):
        if (loaded[path].encoder, loaded[path].model_version) != (lane, model_version):
            raise SystemExit(
                f"{path.name} is a {loaded[path].encoder} file for {loaded[path].model_version}: this round wants "
                f"{lane} for {model_version}"
            )
    trained = loaded[refit].meta.get("heldout_sets_trained_on", [])
    if set(trained) != set(spent.trained_on):
        raise SystemExit(
            f"{refit.name} trained on {trained or 'no held-apart set'}, not on {', '.join(spent.trained_on)}"
        )
    for key, rows in ivf.WEIGHED_ROWS.items():
        if (weighed := float(loaded[refit].meta.get(key, 1.0))) != (wanted := getattr(spent, key)):
            raise SystemExit(f"{refit.name} weighed {rows} {weighed}, not {wanted}")


def write_candidate(
    folder: Path, refit: Path, point: dict[str, Any], spent: SpentRound = E5_ROUND, other: Path | None = None
) -> None:
    """The refitted verifier with the chosen veto line and raise and a header saying what it was fitted on and which
    sets chose its settings, and the other lane's file `other` (default the packaged one), in `folder`."""
    version = VetoWeights.load(refit).model_version
    weighed = "".join(
        f" --{key.replace('_', '-')} {getattr(spent, key):g}" for key in ivf.WEIGHT_KEYS if getattr(spent, key) != 1.0
    )
    header = {
        "fitted": f"session {spent.session} on {version}'s training rows, the contrastive pairs' training share and "
        f"every row of the held-apart sets {', '.join(spent.trained_on)} (benchmarks/intent_verifier.py --train-heldout"
        f"{weighed})",
        "line_and_raise_chosen": f"session {spent.session} on {spent.how_many} development sets "
        f"(benchmarks/{spent.script}.py)",
        "read_for": f"the first stage {version} (session {spent.session}: refitted on its training rows and "
        f"{len(spent.trained_on)} spent development sets, line {point['tau']} and raise chosen on its flags of "
        f"{spent.how_many} others)",
    }
    other_file = other or shipped_weights(spent.other)
    mr.save_refit(folder, refit, point, spent.choosing, header, (spent.other, other_file))


def calibration_records(path: Path, reader: Any, data: Path) -> list[dict[str, Any]]:
    """The calibration split's records (all benign) as `reader` reads them (set "calib"), cached in `path`."""
    if path.exists():
        return list(json.loads(path.read_text()))
    records = list(reader("calib", ti.build_corpus(data).calib))
    qs.write_json(path, records)
    return records


def calibration_flags(
    records: list[dict[str, Any]], points: list[dict[str, Any]], shipped: dict[str, Any], lane: str, line: float
) -> dict[str, Any]:
    """The calibration rows of `lane` the guard flags with the packaged file at its settings (`shipped`) and with the
    refit at each grid point (`points`, in order); the other lane reads the same rows at every point."""
    rows = [r for r in records if r["lane"] == lane]

    def flags(view: list[dict[str, Any]], point: dict[str, Any]) -> int:
        return sum(vr.guard_flags(r, *vr.settings(point), line) for r in view)

    refitted = mr.refitted_view(rows)
    return {
        "rows": len(records),
        "lane_rows": len(rows),
        "shipped": flags(rows, shipped),
        "points": [flags(refitted, point) for point in points],
    }


def main(argv: list[str] | None = None, spent: SpentRound = E5_ROUND, doc: str | None = __doc__) -> None:
    parser = ir.round_parser(doc, f"{spent.script}.json")
    parser.add_argument("--refit", type=Path, required=True, help="the veto fitted with the older sets' rows too")
    parser.add_argument(
        "--before",
        type=Path,
        required=True,
        help=f"the {spent.lane} file the round compared with: git show {spent.before}:src/ragshield/data/"
        f"intent_veto_{spent.lane}.npz (comparing the refit with itself finds nothing)",
    )
    parser.add_argument(
        "--before-other",
        type=Path,
        required=True,
        help=f"the {spent.other} file the round read with: git show {spent.other_before}:src/ragshield/data/"
        f"intent_veto_{spent.other}.npz",
    )
    parser.add_argument("--cost", action="store_true", help="what the raise adds per public benign query")
    if spent.calibration_budget:
        parser.add_argument("--calib-rows", type=Path, required=True, help="the calibration split's records (cache)")
    args = parser.parse_args(argv)
    model = ExtractionIntent(second_opinion=False)._model()
    check_refit(args.refit, args.before, args.before_other, spent, str(model.meta.get("model_version")))
    highest = max(*spent.grid[0], *spent.other_grid[0])  # flags of both lanes read up to either grid's top line
    reader = mr.reader(args.refit, args.before, spent.lane, highest, args.before_other)
    records = ir.records_of(args, reader, spent.choosing, spent.trained_on if spent.leave_out_trained else ())
    line = logit(model.threshold)
    packaged = vr.lane_points(records, spent.lane, line, spent.grid)
    shipped = vr.shipped_point(packaged, spent.lane, args.before)
    points = vr.lane_points(mr.refitted_view(records), spent.lane, line, spent.grid)
    other = vr.shipped_point(
        vr.lane_points(records, spent.other, line, spent.other_grid), spent.other, args.before_other
    )
    result: dict[str, Any] = {"grid": points, "shipped": shipped, spent.other: other}
    if spent.calibration_budget:
        calibration = calibration_records(args.calib_rows, reader, args.data)
        result["calibration"] = budget = calibration_flags(calibration, points, shipped, spent.lane, line)
        points = [p for p, flags in zip(points, budget["points"], strict=True) if flags <= budget["shipped"]]
    result["chosen"] = chosen = mr.choose(points, shipped)
    print(f"{spent.lane}: shipped {shipped}\n    chosen  {chosen}")
    if chosen is not None:
        settings = {spent.lane: chosen, spent.other: other}
        result["public"] = vr.public_check(mr.refitted_view(records), settings, line)
        vr.print_public(result["public"])
        if args.cost:
            files = {spent.lane: args.refit, spent.other: args.before_other}
            result["cost"] = ir.raise_cost(mr.public_near_misses(records), dict(settings), args.data, files=files)
            print(f"cost: {result['cost']}")
    if args.candidate and chosen is None:
        print("no point makes fewer errors than the packaged file: the round ends, no candidate written")
        args.candidate = None
    ir.finish(args, result, lambda folder, point: write_candidate(folder, args.refit, point, spent, args.before_other))


if __name__ == "__main__":
    main()
