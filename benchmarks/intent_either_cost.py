"""What the either raise's opt-ins cost an English query (issue 18; session 50, after the thirty-third round).

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_either_cost.py [--n 300] [--sample short] [--out FILE]

The thirty-third round bounded its opt-in's cost by a count (the e5 verifier reads at most 10% of the public buckets'
English rows); this times it. A seeded sample of `--n` English questions of the public benign test buckets (SAGE,
HealthcareMagic, iCliniq, Enron: what most users send) is retrieved once each (MiniLM embedding and an exact FAISS
search of 2,000 vectors, as `intent_generalisation.cost`) and checked by each guard of `GUARDS` in turn on the same
retrieval: without the either raise (as shipped before session 51), the opt-ins of sessions 46 and 50 as they were
measured (any length), the thirty-fourth round's raise for short queries (shipped in session 51, read in pieces) and
the thirty-fifth round's two, read whole (session 52: the candidate, band 6, and WIDE, band 12).
`--sample short` draws instead from the read development sets' English benign rows (short chat turns and hard
questions: the queries that cap lets e5 read). Single-thread CPU time, one call each (a repeated call would read
the same near misses again). Writes `--out` (default `benchmarks/results/intent_either_cost.json`): per guard the
median, mean, 90th and 99th percentile of the check's time as a share of the retrieval's, and how many queries each
second-opinion state ended in; prints a table. `--vector-raise FILE` times the guard without a vector raise beside the
guard with FILE instead of `GUARDS` (session 57; each of `GUARDS` runs without one, as it was measured).
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.types import Query, RetrievalResult

PUBLIC = ("sage", "healthcaremagic", "icliniq", "enron")
# each guard spelt out in full, so that its name says the same whatever the packaged MiniLM file names (since session
# 51 it names the short either raise; 4,000 characters: any query a verifier reads; "pieces": as e5 reads its own)
IN_PIECES = {"raise_either_reading": "pieces", "vector_raise": False}
# (none with the vector raise of session 57: each stands for the guard as it was measured then)
GUARDS: dict[str, dict[str, float | int | str | bool]] = {
    "no either raise (before session 51)": {"raise_either_chars": 0, "vector_raise": False},
    "raise_either 4.0 (session 46)": {
        "raise_either": 4.0,
        "raise_either_band": 4.0,
        "raise_either_chars": 4000,
        **IN_PIECES,
    },
    "raise_either 5.0, band 8.0 (session 50)": {
        "raise_either": 5.0,
        "raise_either_band": 8.0,
        "raise_either_chars": 4000,
        **IN_PIECES,
    },
    "raise_either 3.0, band 5.0, at most 120 characters (session 51)": {
        "raise_either": 3.0,
        "raise_either_band": 5.0,
        "raise_either_chars": 120,
        **IN_PIECES,
    },
    "raise_either 2.0, band 6.0, at most 120 characters, read whole (session 52)": {
        "raise_either": 2.0,
        "raise_either_band": 6.0,
        "raise_either_chars": 120,
        "raise_either_reading": "whole",
        "vector_raise": False,
    },
    "raise_either 2.0, band 12.0, at most 120 characters, read whole (session 52, WIDE)": {
        "raise_either": 2.0,
        "raise_either_band": 12.0,
        "raise_either_chars": 120,
        "raise_either_reading": "whole",
        "vector_raise": False,
    },
}
OUT = qs.REPO / "benchmarks" / "results" / "intent_either_cost.json"


def english_sample(data: Path, n: int, guard: ExtractionIntent) -> list[str]:
    """`n` questions drawn (seed 50) from the public benign test buckets, less those the router sends elsewhere."""
    corpus = ti.build_corpus(data)
    return english_drawn([e.text for name in PUBLIC for e in corpus.test[name]], n, guard, seed=50)


def short_sample(data: Path, n: int, guard: ExtractionIntent) -> list[str]:
    """`n` benign rows drawn (seed 51) from the read development sets of the thirty-third and thirty-fourth rounds
    (`intent_either_far.SETS`: short chat turns and hard questions, what a chat user sends), less those the router
    sends elsewhere."""
    import intent_either_short as es

    rows = [e for examples in es.development_rows(data).values() for e in examples]
    return english_drawn(list(dict.fromkeys(e.text for e in rows if e.label == 0)), n, guard, seed=51)


def english_drawn(pool: list[str], n: int, guard: ExtractionIntent, seed: int) -> list[str]:
    """`n` texts of `pool` drawn with `random.Random(seed)`, less those the guard's router sends to the multilingual
    part."""
    routed = guard._model().routes(pool)
    english = [text for text, elsewhere in zip(pool, routed, strict=True) if not elsewhere]
    return random.Random(seed).sample(english, min(n, len(english)))


def summary(shares: np.ndarray, states: Counter[str]) -> dict[str, Any]:
    return {
        "median": float(np.median(shares)),
        "mean": float(np.mean(shares)),
        "p90": float(np.percentile(shares, 90)),
        "p99": float(np.percentile(shares, 99)),
        "second_opinion": dict(sorted(states.items())),
    }


def measure(texts: list[str], settings: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Each guard's check time (`settings`, default `GUARDS`) as a share of the same retrieval's, per query,
    interleaved so noise hits all alike."""
    from ragshield.rag.embedding import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    index = ig.random_index(embedder.dimension, 2000)
    settings = GUARDS if settings is None else settings
    guards = {name: ExtractionIntent(embedder=embedder, **options) for name, options in settings.items()}
    for guard in guards.values():
        guard.check(RetrievalResult(Query("warm up"), ()))
        guard.warm_up()  # verifiers load before the timing, not inside the first near miss
    retrieve_us: list[float] = []
    check_us: dict[str, list[float]] = {name: [] for name in guards}
    states: dict[str, Counter[str]] = {name: Counter() for name in guards}
    with qs.single_thread():
        embedder.embed(["warm up"])
        for text in texts:
            spent, result = ig.timed_retrieval(embedder, index, text)
            retrieve_us.append(spent)
            for name, guard in guards.items():
                check_us[name].append(qs.cpu_time_us(lambda g=guard, r=result: g.check(r)))
                states[name][guard.scores([text])[0].second_opinion] += 1
    base = np.array(retrieve_us)
    return {
        "queries": len(texts),
        "retrieve_us_median": float(np.median(base)),
        "guards": {name: summary(np.array(check_us[name]) / base, states[name]) for name in guards},
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['queries']} English {result.get('sample', 'public')} questions; retrieval median "
        f"{result['retrieve_us_median'] / 1000:.1f} ms",
        "",
        "| guard | median | mean | p90 | p99 | second opinion |",
        "|---|---|---|---|---|---|",
    ]
    for name, g in result["guards"].items():
        states = ", ".join(f"{state}: {count}" for state, count in g["second_opinion"].items())
        lines.append(f"| {name} | {g['median']:.1%} | {g['mean']:.1%} | {g['p90']:.1%} | {g['p99']:.1%} | {states} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--n", type=int, default=300, help="English public questions to time")
    parser.add_argument(
        "--sample",
        choices=("public", "short"),
        default="public",
        help="public: English questions of the public benign test buckets; short: English benign rows of the read "
        "development sets (chat turns and hard questions)",
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--vector-raise",
        type=Path,
        help="time the guard without a vector raise beside the guard with this file (session 57) instead of GUARDS",
    )
    args = parser.parse_args(argv)
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: the public test buckets need ../shared/data")
    sample = english_sample if args.sample == "public" else short_sample
    texts = sample(args.data, args.n, ExtractionIntent())
    settings = (
        None
        if args.vector_raise is None
        else {
            "without a vector raise": {"vector_raise": False},
            "with this vector raise": {"vector_raise": args.vector_raise},
        }
    )
    result = {"sample": args.sample} | measure(texts, settings)
    print(table(result))
    qs.write_json(args.out, result)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
