"""The fourteenth round toward v14 (issue 18): the veto lines and the raise of near misses chosen together.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_veto_raise.py --rows runs/rows14.json [--candidate DIR]

The model alone (v13) reads the development sets and public benign test buckets of the thirteenth round
(`intent_raise.read_all`); each flag is read by its lane's verifier up to the highest veto line of the grid, and
each near miss within `max(BANDS)` logits under the line up to the highest raise line, as the guard reads them.
`--rows` keeps one record per row (no text). The sweep applies the rule in the model card ("Toward v14,
fourteenth round"): per lane over `VETO_TAUS` x `BANDS` x `RAISE_TAUS`, the points flagging at most as many
development benign rows as the shipped settings, the fewest errors, ties to fewer benign flags, the lower veto
line, the smaller band and the higher raise line. `--candidate DIR` writes the packaged veto files with the
chosen settings into DIR, for `intent_veto_judge.py --candidate DIR`. The shipped settings are read from the
packaged files, so after this round shipped (e5 line +2.0) a rerun compared against RV itself; since the seventeenth
round the packaged e5 file trained on its development sets, and the script refuses to run
(`intent_raise.refuse_fitted_reading`). Writes the sweep
to `--out` (default `benchmarks/results/intent_veto_raise.json`) and prints the chosen points.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import replace
from pathlib import Path
from typing import Any

import intent_generalisation as ig
import intent_raise as ir
import intent_sets as isets
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit, sigmoid
from ragshield.guards.intent_veto import let_through, shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

VETO_TAUS = {"minilm": (-1.0, -0.5, 0.0, 0.5), "e5": (1.0, 1.5, 2.0, 2.5)}  # the shipped line first
# the e5 raise the rounds of sessions 42-47 compared with (band 4 logits, raise line 3); the thirty-second round
# (session 48, `intent_e5_far.py`) widened the packaged file's to band 12, raise line 3.5
E5_RAISE_BEFORE_FAR = (4.0, 3.0)
BANDS = (1.0, 2.0, 3.0, 4.0)
RAISE_TAUS = (2.0, 4.0, 6.0, 8.0)


def read_set(
    guard: ExtractionIntent,
    name: str,
    examples: list[isets.Example],
    highest_veto: float | None = None,
    reach: float = max(BANDS),
    highest_raise: float = max(RAISE_TAUS),
    reach_of: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """One record per example: label, lane, the model's log-odds gap under its line (negative: flagged) and the
    lane verifier's logit for a flag (read up to `highest_veto`, default this round's highest line) or a near miss
    within `reach` logits (per lane in `reach_of` where it names the lane; read up to `highest_raise`; None: not
    read, too long)."""
    model = guard._model()
    texts = [e.text for e in examples]
    scores = guard.scores(texts)
    lanes = model.routes(texts)
    line = logit(model.threshold)
    gaps = [line - logit(s.probability) for s in scores]
    flags = [i for i, s in enumerate(scores) if s.probability >= model.threshold]
    reaches = [(reach_of or {}).get("e5" if routed else "minilm", reach) for routed in lanes]
    near = [i for i, gap in enumerate(gaps) if 0 < gap <= reaches[i] and scores[i].probability < model.threshold]
    if highest_veto is None:
        highest_veto = max(max(taus) for taus in VETO_TAUS.values())
    found = ir.lane_logits(guard, texts, flags, lanes, highest_veto)
    found |= ir.lane_logits(guard, texts, near, lanes, highest_raise, near_miss=True)
    return [
        {
            "set": name,
            "row": i,
            "label": example.label,
            "lane": "e5" if lanes[i] else "minilm",
            "flagged_by_model": scores[i].probability >= model.threshold,
            "gap": round(gaps[i], 4),
            "verifier": round(found[i], 4) if i in found else None,
        }
        for i, example in enumerate(examples)
    ]


def guard_flags(
    record: dict[str, Any], tau: float, band: float, raise_tau: float, line: float, over_point: bool = False
) -> bool:
    """Whether the guard flags this row with these settings: a flag stands unless its verifier logit lets it
    through (`intent_veto.let_through`: under `tau` and, without `over_point`, its sigmoid under the line; unread:
    it stands); a near miss within `band` is raised at `raise_tau`."""
    value = record["verifier"]
    if record["flagged_by_model"]:
        return value is None or let_through(value, tau, sigmoid(line), over_point) is None
    return record["gap"] <= band and value is not None and value >= raise_tau


def error_counts(rows: list[dict[str, Any]], flagged: list[bool]) -> dict[str, int]:
    """Among `rows`, the benign rows flagged, the requests missed (`flagged`: per row, whether the guard flags it)
    and their sum, the errors every round counts."""
    benign = sum(f for f, r in zip(flagged, rows, strict=True) if r["label"] == 0)
    missed = sum(not f for f, r in zip(flagged, rows, strict=True) if r["label"] == 1)
    return {"benign_flagged": benign, "requests_missed": missed, "errors": benign + missed}


def lane_points(
    records: list[dict[str, Any]],
    lane: str,
    line: float,
    grid: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]] | None = None,
) -> list[dict[str, Any]]:
    """Per grid point (`grid`: veto lines, bands, raise lines; default this round's), the development rows of `lane`
    the guard flags (benign) and misses (requests)."""
    rows = [r for r in records if r["lane"] == lane and not r["set"].startswith("public-")]
    taus, bands, raise_taus = grid or (VETO_TAUS[lane], BANDS, RAISE_TAUS)
    out = []
    for tau in taus:
        for band in bands:
            for raise_tau in raise_taus:
                flagged = [guard_flags(r, tau, band, raise_tau, line) for r in rows]
                out.append({"tau": tau, "band": band, "raise_tau": raise_tau} | error_counts(rows, flagged))
    return out


def choose(points: list[dict[str, Any]], shipped: dict[str, Any]) -> dict[str, Any]:
    """The rule's point: of those flagging at most the shipped settings' benign rows, the fewest errors (ties: fewer
    benign flags, lower veto line, smaller band, higher raise line); the shipped point when none makes fewer errors."""
    eligible = [p for p in points if p["benign_flagged"] <= shipped["benign_flagged"]]
    if not eligible:  # a grid read by another verifier (`intent_minilm_refit`) may flag more benign rows everywhere
        return shipped
    best = min(eligible, key=lambda p: (p["errors"], p["benign_flagged"], p["tau"], p["band"], -p["raise_tau"]))
    return best if best["errors"] < shipped["errors"] else shipped


def packaged_weights(lane: str) -> VetoWeights:
    """The packaged file of `lane` as the rounds before the thirty-second compared with it: the e5 file's raise at
    `E5_RAISE_BEFORE_FAR`, and the MiniLM file without the either raise it names since the thirty-fourth round, so
    that those rounds rerun from their records as they ran."""
    weights = VetoWeights.load(shipped_weights(lane))
    if lane == "e5":
        return weights.with_raise(*E5_RAISE_BEFORE_FAR)
    return replace(
        weights, raise_either_tau=None, raise_either_band=None, raise_either_chars=None, raise_either_reading=None
    )


def shipped_point(points: list[dict[str, Any]], lane: str, file: Path | None = None) -> dict[str, Any]:
    """The grid point of the packaged file's settings (veto line, band, raise line) as the rounds compared with them
    (`packaged_weights`), or of `file`'s."""
    weights = VetoWeights.load(file) if file else packaged_weights(lane)
    wanted = (weights.tau, weights.raise_band, weights.raise_tau)
    found = [p for p in points if (p["tau"], p["band"], p["raise_tau"]) == wanted]
    if not found:
        raise SystemExit(f"the packaged {lane} settings {wanted} are not a point of this round's grid")
    return found[0]


def settings(point: dict[str, Any]) -> tuple[float, float, float]:
    """A grid point's veto line, band and raise line, in `guard_flags`'s order."""
    return float(point["tau"]), float(point["band"]), float(point["raise_tau"])


def public_check(records: list[dict[str, Any]], chosen: dict[str, dict[str, Any]], line: float) -> dict[str, Any]:
    """Step 1: per public bucket, rows the guard flags with the chosen settings and the share the raise reads."""
    out = {}
    for name in ir.PUBLIC:
        rows = [r for r in records if r["set"] == f"public-{name}"]
        flagged = sum(guard_flags(r, *settings(chosen[r["lane"]]), line) for r in rows)
        read = sum(1 for r in rows if not r["flagged_by_model"] and r["gap"] <= chosen[r["lane"]]["band"])
        out[name] = {"flagged": ig.share(flagged, len(rows)), "read_by_raise": ig.share(read, len(rows))}
    return out


def print_public(public: dict[str, Any]) -> None:
    """Step 1's figures as a round prints them: per bucket, rows flagged and rows the raise reads."""
    for name, row in public.items():
        print(f"public {name}: flagged {row['flagged']['k']}/{row['flagged']['n']}, read {row['read_by_raise']['k']}")


def sweep_lanes(
    records: list[dict[str, Any]],
    line: float,
    grids: dict[str, tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]] | None = None,
) -> dict[str, Any]:
    """Each lane's grid points (`grids`, default this round's), the packaged settings' point and the rule's choice
    (`choose`), printed as a round prints them."""
    grids = grids or {}
    points = {lane: lane_points(records, lane, line, grids.get(lane)) for lane in ENCODERS}
    shipped = {lane: shipped_point(points[lane], lane) for lane in ENCODERS}
    chosen = {lane: choose(points[lane], shipped[lane]) for lane in ENCODERS}
    for lane in ENCODERS:
        print(f"{lane}: shipped {shipped[lane]}\n{' ' * len(lane)}  chosen  {chosen[lane]}")
    return {"grid": points, "shipped": shipped, "chosen": chosen}


def write_candidate(folder: Path, chosen: dict[str, dict[str, Any]]) -> None:
    """The packaged veto files with each lane's chosen veto line and raise settings, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for encoder in ENCODERS:
        point = chosen[encoder]
        weights = dataclasses.replace(VetoWeights.load(shipped_weights(encoder)), tau=point["tau"])
        weights.with_raise(point["band"], point["raise_tau"]).save(folder / f"intent_veto_{encoder}.npz")


def main(argv: list[str] | None = None) -> None:
    args = ir.round_parser(__doc__, "intent_veto_raise.json").parse_args(argv)
    ir.refuse_fitted_reading(ir.DEVELOPMENT, "intent_veto_raise.json")
    guard = ExtractionIntent(second_opinion=False)
    records = ir.records_of(args, functools.partial(read_set, guard))
    line = logit(guard._model().threshold)
    result = sweep_lanes(records, line)
    result["public"] = public_check(records, result["chosen"], line)
    print_public(result["public"])
    ir.finish(args, result, write_candidate)


if __name__ == "__main__":
    main()
