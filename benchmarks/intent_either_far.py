"""Would the e5 verifier catch the English requests the guard misses far under its line? (Issue 18; an exploration of
read sets after the thirty-second round, not a round.)

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_either_far.py --rows runs/r36/either_far_rows.json \
        [--candidate DIR] [--eo DIR]

The guard as shipped (model v13, the packaged verifiers, no raise applied) reads `SETS`, the eight read sets the
packaged e5 file did not train on (rows equal to a training row of v13 or of a set it trained on left out), and the
public benign test buckets; each near miss is read by its lane's verifier within its packaged band, and each English
row the model leaves unflagged within `REACH` logits is read by the e5 verifier too ("other", up to `HIGHEST_OTHER`).
`--rows` keeps one record per row (no text). For each band and line of the e5 reading (`BANDS` x `LINES`), the English
near misses the MiniLM verifier does not raise and the e5 verifier reads at the line or over: the development requests
and benign rows that would be raised, and the public rows, per bucket with the rate the guard would then flag (the
issue's goal: at most 1% each), and the public English rows the e5 verifier would read (its cost). Prints a table and
writes `--out` (default `benchmarks/results/intent_either_far.json`). Nothing here is blind.

The thirty-third round (session 50, model card) acts on it: `choose` takes the point its rule names, and
`--candidate DIR` writes the packaged files with the MiniLM file's `raise_either_tau` and `raise_either_band` set to it
(for `intent_veto_judge.py --candidate DIR`); `--eo DIR` writes the twenty-ninth round's opt-in (line 4, its own band)
beside it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import intent_e5_all_spent as all_spent
import intent_generalisation as ig
import intent_raise as ir
import intent_veto_raise as vr
import query_sets as qs
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import IntentVeto, shipped_weights, weights_file_name
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

SETS = ("v39", "chat26", "v40", "chat27", "v41", "chat28", "v42", "chat29")
REACH, HIGHEST_OTHER = 12.0, 8.0
BANDS = (4.0, 6.0, 8.0, 12.0)
LINES = (3.0, 4.0, 5.0, 6.0, 7.0)
MEDICAL = ("sage", "healthcaremagic", "icliniq")  # the buckets the opt-in (not over e-mail) must keep within 1%
MOST_READ = 0.10  # the share of the public buckets' English rows the e5 verifier may read (the round's cost bound)
EO_LINE = 4.0  # the twenty-ninth round's opt-in, read beside the candidate
OUT = qs.REPO / "benchmarks" / "results" / "intent_either_far.json"


def reader() -> Any:
    """A `read_set` for `intent_raise.records_of`: `intent_veto_raise.read_set` with the packaged verifiers within their
    packaged bands, and the e5 verifier's logit ("other") for each English row left unflagged within `REACH`."""
    guard = ExtractionIntent(second_opinion=False)
    guard.veto_ = IntentVeto({lane: shipped_weights(lane) for lane in ENCODERS}, raises=False)
    bands = {lane: VetoWeights.load(shipped_weights(lane)).raise_band or 0.0 for lane in ENCODERS}

    def read(name: str, examples: list[Any]) -> list[dict[str, Any]]:
        records = vr.read_set(guard, name, examples, highest_raise=6.0, reach_of=bands)
        texts = [e.text for e in examples]
        english = [
            r["row"] for r in records if r["lane"] == "minilm" and not r["flagged_by_model"] and r["gap"] <= REACH
        ]
        # every row read as if routed: the e5 verifier reads the English ones
        other = ir.lane_logits(guard, texts, english, [True] * len(texts), HIGHEST_OTHER, near_miss=True)
        return [r | {"other": round(other[r["row"]], 4) if r["row"] in other else None} for r in records]

    return read


def raised_by_other(
    record: dict[str, Any], band: float, line: float, minilm: VetoWeights, chars: int | None = None
) -> bool:
    """Whether an English near miss the MiniLM verifier leaves (at its packaged band and raise line) is raised when
    the e5 verifier's reading within `band` (of rows at most `chars` characters long; None: any) reaches `line`."""
    return read_by_other(record, band, minilm, chars) and record["other"] is not None and record["other"] >= line


def read_by_other(record: dict[str, Any], band: float, minilm: VetoWeights, chars: int | None = None) -> bool:
    """Whether the e5 verifier reads an English row for the either raise within `band`: unflagged, within the band,
    at most `chars` characters long (the record's "chars"; None: any length), and not raised by the MiniLM verifier
    (the cost the opt-in adds)."""
    if record["lane"] != "minilm" or record["flagged_by_model"] or record["gap"] > band:
        return False
    if chars is not None and record["chars"] > chars:
        return False
    return not ir.raised(record, minilm.raise_band or 0.0, minilm.raise_tau or 0.0)


def choose(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The thirty-third round's point: of those keeping each medical bucket within 1% and the e5 reading within
    `MOST_READ` of the public English rows, the fewest errors (development requests missed and benign rows flagged,
    medical rows flagged: the raised rows decide), then fewer benign rows (development and every public bucket, Enron
    too), the narrower band, the higher line."""

    def medical_raised(point: dict[str, Any]) -> int:
        return sum(point["public"][name]["raised"] for name in MEDICAL)

    return best_of(
        points,
        lambda p: (
            all(p["public"][name]["flagged"]["rate"] <= 0.01 for name in MEDICAL)
            and p["public_english_read_by_e5"]["rate"] <= MOST_READ
        ),
        lambda p: (
            p["benign_raised"] + medical_raised(p) - p["requests_raised"],
            benign_raised(p),
            p["band"],
            -p["line"],
        ),
    )


def best_of(
    points: list[dict[str, Any]], eligible: Callable[[dict[str, Any]], bool], order: Callable[[dict[str, Any]], Any]
) -> dict[str, Any] | None:
    """The first of the `eligible` grid points by `order` (a round's rule), or None when none is eligible."""
    kept = [p for p in points if eligible(p)]
    return min(kept, key=order) if kept else None


def benign_raised(point: dict[str, Any]) -> int:
    """A grid point's benign rows raised, development and every public bucket (the rounds' tie-break)."""
    return point["benign_raised"] + sum(bucket["raised"] for bucket in point["public"].values())


def write_candidate(
    folder: Path,
    line: float,
    band: float | None,
    chars: int | None = None,
    reading: str | None = None,
    chosen: str | None = None,
) -> None:
    """The packaged files in `folder`, the MiniLM file naming the either `line`, `band` (None: its own band), `chars`
    (the longest query e5 reads for it; None: any length) and `reading` (what e5 reads of it; None: as its file
    reads its own near misses), and with `chosen` its header's `either_raise_chosen` (where they came from)."""
    folder.mkdir(parents=True, exist_ok=True)
    for encoder in ENCODERS:
        weights = VetoWeights.load(shipped_weights(encoder))
        if encoder == "minilm":
            weights = replace(
                weights,
                raise_either_tau=line,
                raise_either_band=band,
                raise_either_chars=chars,
                raise_either_reading=reading,
                meta=weights.meta if chosen is None else {**weights.meta, "either_raise_chosen": chosen},
            )
        weights.save(folder / weights_file_name(encoder))


def summarise(
    records: list[dict[str, Any]],
    line_of_model: float,
    grid: tuple[tuple[int | None, ...], tuple[float, ...], tuple[float, ...]] = ((None,), BANDS, LINES),
    chooser: Callable[[list[dict[str, Any]]], dict[str, Any] | None] | None = None,
    sets: tuple[str, ...] = SETS,
) -> dict[str, Any]:
    """Per point of `grid` (caps in characters, None: any length; bands; lines): development requests and benign
    rows raised, each public bucket's rows raised and the share the guard would then flag (as shipped plus raised),
    and the English rows the e5 verifier reads; `chooser` (default `choose`) picks the round's point; `sets` names
    the development sets the records hold."""
    weights = {lane: VetoWeights.load(shipped_weights(lane)) for lane in ENCODERS}

    def shipped_flag(record: dict[str, Any]) -> bool:
        w = weights[record["lane"]]
        return vr.guard_flags(record, w.tau, w.raise_band or 0.0, w.raise_tau or 0.0, line_of_model)

    public = {name: [r for r in records if r["set"] == f"public-{name}"] for name in ir.PUBLIC}
    development = [r for r in records if not r["set"].startswith("public-")]
    english = [r for r in development if r["lane"] == "minilm"]
    english_benign = [r for r in english if r["label"] == 0]
    public_english = [r for rows in public.values() for r in rows if r["lane"] == "minilm"]
    points = []
    minilm = weights["minilm"]
    for chars, band, line in itertools.product(*grid):
        up = [r for r in development if raised_by_other(r, band, line, minilm, chars)]
        buckets = {}
        for name, rows in public.items():
            raised = sum(raised_by_other(r, band, line, minilm, chars) for r in rows)
            flagged = sum(map(shipped_flag, rows)) + raised
            buckets[name] = {"raised": raised, "flagged": ig.share(flagged, len(rows))}
        point = {"chars": chars} if chars is not None else {}
        points.append(
            point
            | {
                "band": band,
                "line": line,
                "requests_raised": sum(r["label"] == 1 for r in up),
                "benign_raised": sum(r["label"] == 0 for r in up),
                "public": buckets,
                "public_within_goal": all(b["flagged"]["rate"] <= 0.01 for b in buckets.values()),
                "public_english_read_by_e5": ig.share(
                    sum(read_by_other(r, band, minilm, chars) for r in public_english), len(public_english)
                ),
                "development_english_benign_read_by_e5": ig.share(
                    sum(read_by_other(r, band, minilm, chars) for r in english_benign), len(english_benign)
                ),
            }
        )
    return {
        "sets": list(sets),
        "english_requests": sum(r["label"] == 1 for r in english),
        "english_requests_missed_as_shipped": sum(r["label"] == 1 and not shipped_flag(r) for r in english),
        "points": points,
        "chosen": (chooser or choose)(points),
    }


def table(summary: dict[str, Any]) -> str:
    """The points as Markdown."""
    lines = [
        f"English requests of {len(summary['sets'])} read sets: {summary['english_requests']}, missed as shipped: "
        f"{summary['english_requests_missed_as_shipped']}",
        "",
        "| cap (characters) | band | e5 line | requests raised | benign raised | public raised (then flagged) | "
        "within 1% | English public rows e5 reads | English benign development rows e5 reads |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in summary["points"]:
        public = ", ".join(
            f"{name} {b['raised']} ({b['flagged']['k']}/{b['flagged']['n']})" for name, b in p["public"].items()
        )
        read, development = p["public_english_read_by_e5"], p.get("development_english_benign_read_by_e5")
        lines.append(
            f"| {p.get('chars', 'any')} | {p['band']} | {p['line']} | {p['requests_raised']} | {p['benign_raised']} "
            f"| {public} | {'yes' if p['public_within_goal'] else 'no'} | {read['k']}/{read['n']} | "
            + (f"{development['k']}/{development['n']} |" if development else "- |")
        )
    chosen = summary.get("chosen")
    named = "none" if chosen is None else f"band {chosen['band']}, line {chosen['line']}"
    if chosen and "chars" in chosen:
        named += f", at most {chosen['chars']} characters"
    lines.append("\nchosen: " + named)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = ir.reading_parser(__doc__, OUT.name)
    parser.add_argument("--candidate", type=Path, help="write the chosen point's veto files here")
    parser.add_argument("--eo", type=Path, help="write the twenty-ninth round's opt-in (line 4, its own band) here")
    args = parser.parse_args(argv)
    records = ir.records_of(args, reader(), SETS, all_spent.TRAINED_ON)
    summary = summarise(records, logit(ExtractionIntent(second_opinion=False)._model().threshold))
    print(table(summary))
    qs.write_json(args.out, summary)
    print(f"wrote {args.out}")
    if args.candidate and summary["chosen"]:
        write_candidate(args.candidate, summary["chosen"]["line"], summary["chosen"]["band"])
        print(f"wrote {args.candidate}")
    if args.eo:
        write_candidate(args.eo, EO_LINE, None)
        print(f"wrote {args.eo}")


if __name__ == "__main__":
    main()
