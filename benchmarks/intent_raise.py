"""The thirteenth round toward v14 (issue 18): a second opinion that can raise a near miss.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_raise.py --rows runs/rows.json [--candidate DIR] [--cost]

The guard as it was before this round (v13 with its second opinion, raising nothing) reads every development set
(`DEVELOPMENT`, each set's rows unseen by v13 and the verifiers' pairs, as `intent_veto_judge.unseen_rows` keeps
them) and the public benign test buckets (`PUBLIC`). Each query it leaves unflagged within `max(BANDS)` logits
under its line is read by its lane's verifier exactly as a flag is (`intent_veto_reading.verifier_logits`, the file's
reading and limits). `--rows` keeps one record per row (set, label, lane, the gap in logits under the line, the
verifier's logit; no text), so the grid can be swept again without reading. The sweep (`choose`) applies the
rule in the model card ("Toward v14, thirteenth round"): per lane, over `BANDS` x `RAISE_TAUS`, the points
raising at least twice as many requests as benign rows, the fewest errors, ties to the smaller band and then the
higher line. `--candidate DIR` writes the packaged veto files with the chosen settings into DIR, for
`intent_veto_judge.py --candidate DIR` (the packaged files' other settings as they are now: since the fourteenth
round e5's veto line is +2.0, not the +1.0 this round read; since the seventeenth round the packaged e5 file
trained on twelve of these development sets, so the script refuses to run: `refuse_fitted_reading`); `--cost`
measures what the raise adds per public benign query. Prints a table and writes the sweep as JSON (`--out`, default
`benchmarks/results/intent_raise.json`).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import intent_generalisation as ig
import intent_sets as isets
import intent_veto_judge as judge
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import (
    IntentVeto,
    SecondOpinion,
    reads_routed,
    shipped_veto,
    shipped_weights,
)
from ragshield.guards.intent_veto_reading import verifier_logits
from ragshield.guards.intent_veto_weights import ENCODERS, VetoWeights

DEVELOPMENT = (
    *("v19", "chat6", "v20", "chat7", "v22", "chat9", "v23", "chat10"),
    *("v24", "chat11", "v25", "chat12", "v26", "chat13"),
)
PUBLIC = ("sage", "healthcaremagic", "icliniq", "enron")  # the benign test buckets of the FPR goal
BANDS = (1.0, 2.0, 3.0)  # logits under the operating point's logit that the raise reads
RAISE_TAUS = (2.0, 4.0, 6.0, 8.0)  # the verifier's logit at or above which a near miss is raised


def read_set(guard: ExtractionIntent, name: str, examples: list[isets.Example]) -> list[dict[str, Any]]:
    """One record per example: its label, lane, whether the guard flags it, its gap under the line (logits;
    None when flagged) and, for a near miss within `max(BANDS)`, its lane verifier's logit (None: not read)."""
    model = guard._model()
    texts = [e.text for e in examples]
    scores = guard.scores(texts)
    lanes = model.routes(texts)
    line = logit(model.threshold)
    records: list[dict[str, Any]] = []
    for i, (example, score) in enumerate(zip(examples, scores, strict=True)):
        flagged = score.probability >= model.threshold
        unread = not flagged and score.second_opinion == SecondOpinion.NOT_ASKED
        records.append(
            {
                "set": name,
                "row": i,
                "label": example.label,
                "lane": "e5" if lanes[i] else "minilm",
                "flagged": bool(flagged),
                "gap": round(line - logit(score.probability), 4) if unread else None,
                "verifier": None,
            }
        )
    near = [r["row"] for r in records if r["gap"] is not None and r["gap"] <= max(BANDS)]
    for i, value in lane_logits(guard, texts, near, lanes, max(RAISE_TAUS), near_miss=True).items():
        records[i]["verifier"] = round(value, 4)
    return records


def lane_logits(
    guard: ExtractionIntent,
    texts: list[str],
    rows: list[int],
    lanes: list[bool],
    stop_at: float,
    reading: str | None = None,
    near_miss: bool = False,
) -> dict[int, float]:
    """Per row of `rows` its lane's verifier reads, the verifier's logit as the guard reads it (as the file reads a
    near miss or a flag, or as `reading` says, and its limits), reading stopped once a piece reaches `stop_at`;
    rows too long to read are left out."""
    model = guard._model()
    veto = guard.veto_ if hasattr(guard, "veto_") else shipped_veto(False)
    out: dict[int, float] = {}
    for encoder in ENCODERS:
        asked = {i: texts[i] for i in rows if lanes[i] == reads_routed(encoder)}
        verifier = veto.verifier(encoder, str(model.meta.get("model_version"))) if asked else None
        if verifier is not None:
            how = reading or verifier.weights.reading_for(near_miss)
            out |= verifier_logits(
                verifier.logits, asked, model.second_reading, model.feature_version, stop_at=stop_at, reading=how
            )
    return out


def read_all(
    data: Path,
    reader: Callable[[str, list[isets.Example]], list[dict[str, Any]]] | None = None,
    sets: tuple[str, ...] = DEVELOPMENT,
    also_trained: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """`reader` (default `read_set` with the guard as it was before this round, its near misses unread) over the
    development `sets` (their rows unseen by v13, the verifiers' pairs and the held-apart sets `also_trained`) and the
    public benign test buckets."""
    read = reader or functools.partial(read_set, ExtractionIntent(raise_near_misses=False))
    records: list[dict[str, Any]] = []
    for name in sets:
        written = isets.heldout(isets.HELDOUT_SETS[name])
        kept = judge.unseen_rows(written, data, also_trained)
        records += read(name, [written[i] for i in kept])
        print(f"read {name}: {len(kept)} rows", flush=True)
    corpus = ti.build_corpus(data)
    for name in PUBLIC:
        records += read(f"public-{name}", corpus.test[name])
        print(f"read public {name}: {len(corpus.test[name])} rows", flush=True)
    return records


def public_near_misses(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The public buckets' records as `raise_cost` reads them: a gap only for a row the model leaves under its line
    (a flag's verifier logit is its veto reading, not a raise)."""
    return [
        {**r, "gap": None if r["flagged_by_model"] else r["gap"]} for r in records if r["set"].startswith("public-")
    ]


def raised(record: dict[str, Any], band: float, raise_tau: float) -> bool:
    """Whether a near miss is raised at these settings (a row the verifier did not read is not)."""
    gap, value = record["gap"], record["verifier"]
    return gap is not None and gap <= band and value is not None and value >= raise_tau


def sweep(
    records: list[dict[str, Any]],
    lane: str,
    bands: tuple[float, ...] = BANDS,
    taus: tuple[float, ...] = RAISE_TAUS,
) -> list[dict[str, Any]]:
    """Per grid point (`bands` x `taus`), the development rows of `lane` raised (requests, benign) and the errors
    left."""
    rows = [r for r in records if r["lane"] == lane and not r["set"].startswith("public-")]
    base = sum(r["flagged"] != bool(r["label"]) for r in rows)
    out = []
    for band in bands:
        for tau in taus:
            up = [r for r in rows if raised(r, band, tau)]
            requests = sum(r["label"] == 1 for r in up)
            benign = len(up) - requests
            out.append(
                {
                    "band": band,
                    "raise_tau": tau,
                    "requests_raised": requests,
                    "benign_raised": benign,
                    "errors": base - requests + benign,
                    "errors_without": base,
                }
            )
    return out


def choose(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The rule's point: at least twice as many requests as benign rows raised, and more requests than benign
    rows; the fewest errors, ties to the smaller band, then the higher line. None: this lane raises nothing."""
    eligible = [p for p in points if p["requests_raised"] >= max(2 * p["benign_raised"], p["benign_raised"] + 1)]
    if not eligible:
        return None
    return min(eligible, key=lambda p: (p["errors"], p["band"], -p["raise_tau"]))


def public_check(records: list[dict[str, Any]], chosen: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    """Step 1: per public bucket, rows flagged with the raise (rate, Wilson interval) and the share read by it."""
    out = {}
    for name in PUBLIC:
        rows = [r for r in records if r["set"] == f"public-{name}"]
        settings = {lane: (point["band"], point["raise_tau"]) for lane, point in chosen.items() if point}
        up = sum(1 for r in rows if r["lane"] in settings and raised(r, *settings[r["lane"]]))
        read = sum(1 for r in rows if r["lane"] in settings and raised(r, settings[r["lane"]][0], -math.inf))
        flagged = sum(r["flagged"] for r in rows) + up
        out[name] = {
            "n": len(rows),
            "flagged_without": ig.share(sum(r["flagged"] for r in rows), len(rows)),
            "flagged": ig.share(flagged, len(rows)),
            "read_by_raise": ig.share(read, len(rows)),
        }
    return out


def raise_cost(
    records: list[dict[str, Any]],
    chosen: dict[str, dict[str, Any] | None],
    data: Path,
    readings: dict[str, str] | None = None,
    files: dict[str, Path] | None = None,
) -> dict[str, Any]:
    """Single-thread CPU time the raise adds per public benign query: each near miss it reads, read as the guard
    reads it (stopping at `raise_tau`; as the file reads flags, or as `readings` says per lane) by the packaged
    verifiers (or those of `files`, per encoder), summed over the buckets and divided by all their rows; against the
    median retrieval (MiniLM query embedding + exact search over 2,000 vectors) of a seeded sample of the same rows."""
    import random

    import numpy as np

    from ragshield.rag.embedding import SentenceTransformerEmbedder

    corpus = ti.build_corpus(data)
    texts = {f"public-{name}": [e.text for e in corpus.test[name]] for name in PUBLIC}
    guard = ExtractionIntent(raise_near_misses=False)
    model = guard._model()
    version = str(model.meta.get("model_version"))
    veto = IntentVeto(files) if files else shipped_veto()
    spent: list[float] = []
    with qs.single_thread():
        for record in records:
            point = chosen.get(record["lane"])
            if record["set"] not in texts or not point or not raised(record, point["band"], -math.inf):
                continue
            verifier = veto.verifier(record["lane"], version)
            if verifier is None:
                raise SystemExit(f"the {record['lane']} verifier does not load: the raise's cost cannot be measured")
            text = {0: texts[record["set"]][record["row"]]}
            read = functools.partial(
                verifier_logits,
                verifier.logits,
                text,
                model.second_reading,
                model.feature_version,
                stop_at=point["raise_tau"],
                reading=(readings or {}).get(record["lane"], verifier.weights.near_miss_reading),
            )
            read()  # warm
            spent.append(qs.cpu_time_us(read))
        embedder = SentenceTransformerEmbedder()
        index = ig.random_index(embedder.dimension, 2000)
        sample = random.Random(5).sample([t for rows in texts.values() for t in rows], 50)
        embedder.embed(["warm up"])
        retrieval = float(np.median([ig.timed_retrieval(embedder, index, t)[0] for t in sample]))
    queries = sum(len(rows) for rows in texts.values())
    return {
        "queries": queries,
        "near_misses_read": len(spent),
        "read_us_median": float(np.median(spent)) if spent else None,
        "added_us_per_query": sum(spent) / queries,
        "retrieve_us_median": retrieval,
        "added_share_of_retrieval": sum(spent) / queries / retrieval,
    }


def write_candidate(
    folder: Path,
    chosen: dict[str, dict[str, Any] | None],
    reading: str | None = None,
    files: dict[str, Path] | None = None,
) -> None:
    """The packaged veto files (or `files`, per encoder), each with its lane's chosen settings (none: the file as it
    is), in `folder`; a lane with settings reads its near misses as `reading` says (None: as its file does)."""
    folder.mkdir(parents=True, exist_ok=True)
    for encoder in ENCODERS:
        weights = VetoWeights.load((files or {}).get(encoder) or shipped_weights(encoder))
        point = chosen.get(encoder)
        if point:
            weights = weights.with_raise(point["band"], point["raise_tau"], reading)
        weights.save(folder / f"intent_veto_{encoder}.npz")


def reading_parser(doc: str | None, results: str) -> argparse.ArgumentParser:
    """The switches every script that reads sets row by row shares: `--data`, `--rows` (the per-row records, read
    once then reused) and `--out` (its results, default `benchmarks/results/<results>`)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--rows", type=Path, required=True, help="the per-row records (read once, then reused)")
    parser.add_argument("--out", type=Path, default=qs.REPO / "benchmarks" / "results" / results, help="the results")
    return parser


def round_parser(doc: str | None, results: str, refit: str | None = None) -> argparse.ArgumentParser:
    """A round's switches: `reading_parser`'s and `--candidate` (a folder for the veto files); with `refit` (its
    help), a round that reads a refitted file also takes `--refit` and `--calib-rows` (the calibration split's
    records)."""
    parser = reading_parser(doc, results)
    parser.add_argument("--candidate", type=Path, help="write the veto files with the chosen settings here")
    if refit is not None:
        parser.add_argument("--refit", type=Path, required=True, help=refit)
        parser.add_argument("--calib-rows", type=Path, required=True, help="the calibration split's per-row records")
    return parser


def add_before(parser: argparse.ArgumentParser, revision: str) -> None:
    """`--before` and `--before-e5` (both required): the MiniLM and e5 veto files a round compared with, which later
    rounds replaced in the package; `revision` names a commit that packaged that MiniLM file (the e5 file was packaged
    from session 40 until the seventeenth round, at c1ef095)."""
    parser.add_argument(
        "--before",
        type=Path,
        required=True,
        help=f"the MiniLM file the round compared with: git show {revision}:src/ragshield/data/intent_veto_minilm.npz "
        "(the session-29 file)",
    )
    parser.add_argument(
        "--before-e5",
        type=Path,
        required=True,
        help="the e5 file the round read with: git show c1ef095:src/ragshield/data/intent_veto_e5.npz (packaged until "
        "the seventeenth round)",
    )


def records_of(
    args: argparse.Namespace,
    reader: Callable[[str, list[isets.Example]], list[dict[str, Any]]] | None = None,
    sets: tuple[str, ...] = DEVELOPMENT,
    also_trained: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """The per-row records in `args.rows`, or `read_all` with `reader` over `sets` (less the rows of `also_trained`)
    written there when the file is absent."""
    if args.rows.exists():
        records = list(json.loads(args.rows.read_text()))
        wanted = {*sets, *(f"public-{name}" for name in PUBLIC)}
        if {record["set"] for record in records} != wanted:  # another round's rows would sweep the wrong reading
            raise SystemExit(f"{args.rows.name} holds other sets than this round reads: give a new --rows")
        return records
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: the development sets' unseen rows need ../shared/data")
    records = read_all(args.data, reader, sets, also_trained)
    qs.write_json(args.rows, records)
    return records


def refuse_fitted_reading(sets: tuple[str, ...], results: str) -> None:
    """Stop a round that reads with the packaged veto files once they trained on its development `sets` (the e5
    file since the seventeenth round): its figures would be fitted ones; the round's own are in `results`."""
    if fitted := [name for name in sets if name in judge.veto_trained_sets()]:
        raise SystemExit(
            f"the packaged second opinion trained on {', '.join(fitted)} (header `heldout_sets_trained_on`): this "
            f"round's reading of them would be fitted; its results as run are benchmarks/results/{results}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = round_parser(__doc__, "intent_raise.json")
    parser.add_argument("--cost", action="store_true", help="measure what the raise adds per public benign query")
    args = parser.parse_args(argv)
    refuse_fitted_reading(DEVELOPMENT, "intent_raise.json")
    records = records_of(args)
    points = {lane: sweep(records, lane) for lane in ENCODERS}
    chosen = {lane: choose(p) for lane, p in points.items()}
    result: dict[str, Any] = {"grid": points, "chosen": chosen, "public": public_check(records, chosen)}
    for lane in ENCODERS:
        print(f"{lane} (reads {'routed' if reads_routed(lane) else 'English'} queries)")
        print("band  tau  requests_up  benign_up  errors")
        for p in points[lane]:
            up = f"{p['requests_raised']:12d} {p['benign_raised']:10d}"
            print(f"{p['band']:4.0f} {p['raise_tau']:4.0f} {up} {p['errors']:7d}")
        print(f"chosen: {chosen[lane]}")
    for name, row in result["public"].items():
        without, read = row["flagged_without"]["k"], row["read_by_raise"]["k"]
        print(f"public {name}: flagged {row['flagged']['k']}/{row['n']} (without {without}), read by the raise {read}")
    if args.cost:
        result["cost"] = raise_cost(records, chosen, args.data)
        print(f"cost: {result['cost']}")
    finish(args, result, write_candidate)


def finish(args: argparse.Namespace, result: dict[str, Any], candidate: Callable[[Path, Any], None]) -> None:
    """Write a round's sweep to `--out` and, with `--candidate`, the veto files of its chosen settings."""
    qs.write_json(args.out, result)
    if args.candidate:
        candidate(args.candidate, result["chosen"])
        print(f"wrote {args.candidate}")


if __name__ == "__main__":
    main()
