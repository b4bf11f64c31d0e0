"""Where the shipped intent guard's missed requests sit (issue 18): an exploration for the next round, not a round.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_misses.py --rows runs/misses.json

The packaged guard (model v13 and both packaged verifiers) reads every row of the read held-apart sets the e5 file
never trained on (`SETS`: v26 to v33 and chat13 to chat20, rows equal to a training row left out) and of the public
benign test buckets. Unlike a round, each verifier reads every row the model leaves under its line, however far
under (up to `REACH` logits, each read stopping once it reaches `HIGHEST_RAISE`), so the table can say what a raise
reaching further would find. `--rows` keeps one record per row (set, row, label, style, length in characters, lane,
the model's gap under its line in logits, the verifier's logit; no text). Prints and writes to `--out` (default
`benchmarks/results/intent_misses.json`):
- the requests the guard as shipped misses, by style and by lane and gap (flag let through by the veto, near miss
  within the shipped band the verifier does not raise, or beyond the band), and both together (JSON only);
- for each lane, what raising the rows beyond the shipped band would add at each raise line: requests and benign rows
  of the sets, and public benign rows (each public row raised is a false positive on the issue's FPR goal).
These sets were all read before, so nothing here is blind; a round that acts on it needs its own rule and judges.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import intent_raise as ir
import intent_sets as isets
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_weights
from ragshield.guards.intent_veto_weights import ENCODERS

SETS = (*(f"v{n}" for n in range(26, 34)), *(f"chat{n}" for n in range(13, 21)))
REACH = 60.0  # logits under the line: every unflagged row in practice
HIGHEST_RAISE = 12.0
RAISE_LINES = (2.0, 3.0, 4.0, 5.0, 6.0)
OUT = qs.REPO / "benchmarks" / "results" / "intent_misses.json"


def read(data: Path) -> list[dict[str, Any]]:
    """One record per row of `SETS` (unseen rows) and of the public buckets (`intent_raise.read_all`), each read by
    its lane's verifier, with the row's style and length."""
    guard = ExtractionIntent(second_opinion=False)  # the model's own scores; the verifiers read as the guard's do
    guard.veto_ = IntentVeto({lane: shipped_weights(lane) for lane in ENCODERS}, raises=False)

    def read_set(name: str, examples: list[isets.Example]) -> list[dict[str, Any]]:
        found = vr.read_set(guard, name, examples, reach=REACH, highest_raise=HIGHEST_RAISE)
        return [
            record | {"style": example.style, "chars": len(example.text)}
            for record, example in zip(found, examples, strict=True)
        ]

    return ir.read_all(data, read_set, SETS)


def where(record: dict[str, Any], band: float) -> str:
    """Why the guard as shipped misses this request: a vetoed flag, a near miss it does not raise, or beyond."""
    if record["flagged_by_model"]:
        return "flag let through"
    return "near miss not raised" if record["gap"] <= band else "beyond the band"


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The missed requests by style and place, and what a raise beyond the band would add per lane and line."""
    line = logit(ExtractionIntent(second_opinion=False)._model().threshold)
    shipped = {lane: vr.packaged_weights(lane) for lane in ENCODERS}  # as shipped when this was read (session 44)

    def flags(record: dict[str, Any]) -> bool:
        weights = shipped[record["lane"]]
        return vr.guard_flags(record, weights.tau, weights.raise_band or 0.0, weights.raise_tau or 0.0, line)

    sets = [r for r in records if not r["set"].startswith("public-")]
    missed = [r for r in sets if r["label"] == 1 and not flags(r)]
    place = {id(r): f"{r['lane']}: {where(r, shipped[r['lane']].raise_band or 0.0)}" for r in missed}
    places = collections.Counter(place.values())
    by_style_place: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in missed:
        by_style_place[r["style"]][place[id(r)]] += 1
    beyond: dict[str, list[dict[str, Any]]] = {}
    for lane, weights in shipped.items():
        far = [r for r in records if r["lane"] == lane and not r["flagged_by_model"]]
        far = [r for r in far if r["gap"] > (weights.raise_band or 0.0) and r["verifier"] is not None]
        beyond[lane] = [
            {
                "raise_line": raise_line,
                "requests_raised": sum(
                    1
                    for r in far
                    if r["label"] == 1 and r["verifier"] >= raise_line and not r["set"].startswith("public-")
                ),
                "benign_raised": sum(
                    1
                    for r in far
                    if r["label"] == 0 and r["verifier"] >= raise_line and not r["set"].startswith("public-")
                ),
                "public_raised": dict(
                    collections.Counter(
                        r["set"].removeprefix("public-")
                        for r in far
                        if r["set"].startswith("public-") and r["verifier"] >= raise_line
                    )
                ),
            }
            for raise_line in RAISE_LINES
        ]
    return {
        "sets": list(SETS),
        "rows": len(sets),
        "requests": sum(1 for r in sets if r["label"] == 1),
        "requests_missed": len(missed),
        "missed_by_style": dict(collections.Counter(r["style"] for r in missed).most_common()),
        "missed_by_place": dict(sorted(places.items())),
        "missed_by_style_and_place": {style: dict(sorted(c.items())) for style, c in by_style_place.items()},
        "raised_beyond_the_band": beyond,
    }


def table(summary: dict[str, Any]) -> str:
    """The summary as Markdown."""
    lines = [
        f"requests missed: {summary['requests_missed']}/{summary['requests']} over {len(summary['sets'])} read sets",
        "",
        "| style | missed |",
        "|---|---|",
        *(f"| {style} | {n} |" for style, n in summary["missed_by_style"].items()),
        "",
        "| lane: where | missed |",
        "|---|---|",
        *(f"| {place} | {n} |" for place, n in summary["missed_by_place"].items()),
        "",
        "| lane | raise line beyond the band | requests raised | benign raised | public benign raised |",
        "|---|---|---|---|---|",
    ]
    for lane, points in summary["raised_beyond_the_band"].items():
        lines += [
            f"| {lane} | {p['raise_line']} | {p['requests_raised']} | {p['benign_raised']} | "
            f"{sum(p['public_raised'].values())} {p['public_raised'] or ''} |"
            for p in points
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = ir.reading_parser(__doc__, OUT.name).parse_args(argv)
    if args.rows.exists():
        records = list(json.loads(args.rows.read_text()))
    else:
        if not (args.data / "queries").exists():
            raise SystemExit(f"{args.data} has no queries/: the sets' unseen rows need ../shared/data")
        records = read(args.data)
        qs.write_json(args.rows, records)
    summary = summarise(records)
    print(table(summary))
    qs.write_json(args.out, summary)


if __name__ == "__main__":
    main()
