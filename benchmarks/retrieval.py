"""Vector stores behind the retrieval seam: FAISS (exact) and embedded Chroma (HNSW).

Measures, per store and knowledge-base size:
* index build time (create + add + commit through the seam, as `build_index` does after embedding);
* open time, and retrieval latency p50/p95 of `index.search(vector, k)` (the query already embedded);
* Chroma's recall@k against FAISS's exact top-k, and the largest score difference on shared hits;
* the added cost of the seam itself: FAISS called directly (`IndexFlatIP.search` + the chunk lookup
  every caller needs) against the index `open_index` returns, interleaved query by query.

Vectors are random unit vectors of MiniLM's dimension (384), and queries are corpus vectors plus
noise: each has a clear nearest neighbour (cosine about 0.65, as a record's own question has),
while ranks 2..k are near-ties among unrelated vectors (cosine about 0.2), the hardest case for an
approximate (HNSW) store. Embedding 200k texts with MiniLM on this 2-core machine would take
hours, and the stores only ever see vectors.

Writes benchmarks/results/retrieval.json and prints a table.

    PYTHONPATH=src python benchmarks/retrieval.py [--sizes 20000 200000 --queries 200 --k 3 --stores faiss chroma]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.rag.index import IndexManifest, write_manifest
from ragshield.rag.store import StoredIndex, create_index, open_index
from ragshield.types import Chunk, ScoredChunk

RESULTS = Path(__file__).resolve().parent / "results"
DIMENSION = 384  # all-MiniLM-L6-v2
BATCH = 5000
WORDS = ["fever", "cough", "rash", "knee", "pain", "pipeline", "invoice", "meeting", "payroll", "dose", "winter"]


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def knowledge_base(n: int, seed: int) -> tuple[list[Chunk], np.ndarray]:
    rng = np.random.default_rng(seed)
    words = rng.integers(0, len(WORDS), size=(n, 24))
    chunks = [Chunk(f"c{i}", f"d{i}", f"record {i}: " + " ".join(WORDS[w] for w in row)) for i, row in enumerate(words)]
    return chunks, unit_rows(rng, n)


def near_queries(vectors: np.ndarray, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    picked = vectors[rng.integers(0, len(vectors), size=n)]
    noisy = picked + 0.06 * rng.standard_normal(picked.shape, dtype=np.float32)
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def build(store: str, folder: Path, chunks: list[Chunk], vectors: np.ndarray) -> float:
    started = time.perf_counter()
    index = create_index(folder, DIMENSION, backend=store)
    for start in range(0, len(chunks), BATCH):
        index.add(chunks[start : start + BATCH], vectors[start : start + BATCH])
    index.commit()
    elapsed = time.perf_counter() - started
    manifest = IndexManifest("random-unit-384", DIMENSION, len(chunks), "benchmark", "random", backend=store)
    write_manifest(folder, manifest)
    return elapsed


def latency(index: StoredIndex, queries: np.ndarray, k: int) -> tuple[dict[str, float], list[list[ScoredChunk]]]:
    for query in queries[:5]:  # warm-up
        index.search(query, k)
    times, hits = [], []
    for query in queries:
        started = time.perf_counter()
        hits.append(index.search(query, k))
        times.append((time.perf_counter() - started) * 1000)
    return summary(times), hits


def summary(times_ms: list[float]) -> dict[str, float]:
    values = np.asarray(times_ms)
    return {
        "n": int(values.size),
        "p50_ms": float(np.percentile(values, 50)),
        "p95_ms": float(np.percentile(values, 95)),
        "mean_ms": float(values.mean()),
    }


def seam_overhead(folder: Path, queries: np.ndarray, k: int, rounds: int) -> dict[str, Any]:
    """FAISS directly vs through the seam, alternating which goes first, on the same index object."""
    seam, _ = open_index(folder)
    raw: Any = seam._index  # type: ignore[attr-defined]
    table: list[Chunk] = seam.chunks

    def direct(query: np.ndarray) -> list[ScoredChunk]:
        scores, ids = raw.search(query.reshape(1, -1), k)
        return [
            ScoredChunk(table[int(i)], float(s), r)
            for r, (s, i) in enumerate(zip(scores[0], ids[0], strict=True))
            if i >= 0
        ]

    timed: dict[str, list[float]] = {"direct": [], "seam": []}
    calls = {"direct": direct, "seam": lambda q: seam.search(q, k)}
    for turn in range(rounds):
        for number, query in enumerate(queries):
            order = ("direct", "seam") if (turn + number) % 2 == 0 else ("seam", "direct")
            for name in order:
                started = time.perf_counter()
                calls[name](query)
                timed[name].append((time.perf_counter() - started) * 1e6)
    direct_us, seam_us = float(np.median(timed["direct"])), float(np.median(timed["seam"]))
    # paired by query: bootstrap the median of (seam - direct) relative to the direct median
    paired = np.asarray(timed["seam"]) - np.asarray(timed["direct"])
    rng = np.random.default_rng(0)
    boot = np.median(rng.choice(paired, size=(1000, paired.size)), axis=1) / direct_us * 100
    direct_mean, seam_mean = float(np.mean(timed["direct"])), float(np.mean(timed["seam"]))
    return {
        "calls_each": len(timed["direct"]),
        "direct_median_us": direct_us,
        "seam_median_us": seam_us,
        "overhead_median_pct": 100 * (seam_us - direct_us) / direct_us,
        "overhead_mean_pct": 100 * (seam_mean - direct_mean) / direct_mean,
        "paired_median_pct": float(np.median(paired) / direct_us * 100),
        "paired_median_pct_ci95": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
    }


def agreement(exact: list[list[ScoredChunk]], approximate: list[list[ScoredChunk]], k: int) -> dict[str, float]:
    found = sum(len({h.chunk.id for h in a} & {h.chunk.id for h in e}) for a, e in zip(approximate, exact, strict=True))
    same_order = sum(
        [h.chunk.id for h in a] == [h.chunk.id for h in e] for a, e in zip(approximate, exact, strict=True)
    )
    gaps = [
        abs(mine.similarity - theirs.similarity)
        for a, e in zip(approximate, exact, strict=True)
        for mine in a
        for theirs in e
        if mine.chunk.id == theirs.chunk.id
    ]
    return {
        "recall_at_k": found / (k * len(exact)),
        "same_top_k_share": same_order / len(exact),
        "max_score_gap": max(gaps) if gaps else float("nan"),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    seam: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ragshield-retrieval-") as scratch:
        for size in args.sizes:
            chunks, vectors = knowledge_base(size, args.seed)
            queries = near_queries(vectors, args.queries, args.seed)
            exact: list[list[ScoredChunk]] | None = None
            for store in args.stores:
                if store != "faiss" and args.approx_max is not None and size > args.approx_max:
                    rows.append({"store": store, "chunks": size, "skipped": f"over --approx-max {args.approx_max}"})
                    continue
                folder = Path(scratch) / f"{store}-{size}"
                print(f"{store} {size}: building ...", flush=True)
                build_s = build(store, folder, chunks, vectors)
                started = time.perf_counter()
                index, _ = open_index(folder)
                open_s = time.perf_counter() - started
                timing, hits = latency(index, queries, args.k)
                row = {"store": store, "chunks": size, "build_s": build_s, "open_s": open_s, **timing}
                if store == "faiss":
                    exact = hits
                    if size <= args.seam_max:
                        seam[str(size)] = seam_overhead(folder, queries, args.k, args.rounds)
                elif exact is not None:
                    row.update(agreement(exact, hits, args.k))
                rows.append(row)
                print(
                    f"  build {build_s:.1f}s, p50 {timing['p50_ms']:.2f} ms, p95 {timing['p95_ms']:.2f} ms", flush=True
                )
                del index
    return {
        "meta": {
            "vectors": f"random unit vectors, dimension {DIMENSION} (MiniLM's); queries: corpus vectors + noise",
            "k": args.k,
            "queries": args.queries,
            "seed": args.seed,
            "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}; shared 2-core host",
        },
        "rows": rows,
        "seam_overhead": seam,
    }


def print_table(results: dict[str, Any]) -> None:
    print(f"\n{'store':8} {'chunks':>8} {'build s':>8} {'open s':>7} {'p50 ms':>8} {'p95 ms':>8} {'recall@k':>9}")
    for row in results["rows"]:
        if "skipped" in row:
            print(f"{row['store']:8} {row['chunks']:>8}  skipped: {row['skipped']}")
            continue
        # FAISS is the exact reference; another store without FAISS in the same run has no recall
        reference = "exact" if row["store"] == "faiss" else "missing"
        recall = f"{row['recall_at_k']:.3f}" if "recall_at_k" in row else reference
        print(
            f"{row['store']:8} {row['chunks']:>8} {row['build_s']:>8.1f} {row['open_s']:>7.2f} "
            f"{row['p50_ms']:>8.2f} {row['p95_ms']:>8.2f} {recall:>9}"
        )
    for size, cost in results["seam_overhead"].items():
        print(
            f"seam cost at {size} chunks: direct {cost['direct_median_us']:.0f} us, "
            f"seam {cost['seam_median_us']:.0f} us "
            f"(paired median {cost['paired_median_pct']:+.2f}%, 95% CI {cost['paired_median_pct_ci95'][0]:+.2f}.."
            f"{cost['paired_median_pct_ci95'][1]:+.2f}%; mean {cost['overhead_mean_pct']:+.2f}%; "
            f"n = {cost['calls_each']} calls each)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    parser.add_argument("--stores", nargs="+", default=["faiss", "chroma"])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries for the seam comparison")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument(
        "--approx-max",
        type=int,
        default=None,
        help="largest size to build on the non-FAISS stores (HNSW builds slowly)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "retrieval.json")
    parser.add_argument("--seam-max", type=int, default=20_000, help="largest size for the seam comparison")
    parser.add_argument("--faiss-threads", type=int, default=None, help="OpenMP threads for FAISS (default: its own)")
    args = parser.parse_args()
    if args.faiss_threads is not None:
        # on a shared, oversubscribed host FAISS's OpenMP threads spin against each other
        import faiss

        faiss.omp_set_num_threads(args.faiss_threads)
    results = run(args)
    results["meta"]["faiss_threads"] = args.faiss_threads
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print_table(results)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
