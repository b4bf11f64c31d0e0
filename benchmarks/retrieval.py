"""Vector stores behind the retrieval seam: FAISS (exact) and embedded Chroma (HNSW), per HNSW setting.

Measures, per store, knowledge base and Chroma setting (`--max-neighbors` x `--ef-search`):
* index build time (create + add + commit through the seam, as `build_index` does after embedding);
* open time, the first search after opening (Chroma loads its graph then), and retrieval latency
  p50/p95 of `index.search(vector, k)` (the query already embedded);
* Chroma's recall@3 and recall@10 against FAISS's exact top-k (with a Wilson 95% interval over
  queries x k), and the largest score difference on shared hits;
* the added cost of the seam itself: FAISS called directly (`IndexFlatIP.search` + the chunk lookup
  every caller needs) against the index `open_index` returns, interleaved query by query.

Chroma's graph is built once per `max_neighbors`; each `ef_search` is then set on the collection
(`modify`), the manifest rewritten to match, and the index reopened in a fresh Chroma client.

Two knowledge bases (`--data`):
* `random`: random unit vectors of MiniLM's dimension (384) at `--sizes`; queries are corpus vectors
  plus noise: each has a clear nearest neighbour (cosine about 0.65), while ranks 2..k are near-ties
  among unrelated vectors (cosine about 0.2), the hardest case for an approximate (HNSW) store;
* `real`: all-MiniLM-L6-v2 vectors of real text from RAGSHIELD_SHARED_DATA: the HealthcareMagic,
  iCliniq and GenMedGPT dialogues one record per chunk, and the Enron emails in the project's
  overlapping `recursive` windows, in a fixed shuffled order, embedded on one thread; each run
  embeds the next chunks for `--embed-seconds` and adds them to its cache under `--cache` (0: use
  what is cached); queries are the patient questions of records held out of the knowledge base.

Writes benchmarks/results/retrieval*.json and prints a table.

    PYTHONPATH=src python benchmarks/retrieval.py --data random --sizes 20000 50000 --queries 200 \\
        --max-neighbors 16 32 --ef-search 10 50 100 200 400 --faiss-threads 1 \\
        --out benchmarks/results/retrieval_sweep.json
    PYTHONPATH=src RAGSHIELD_SHARED_DATA=... python benchmarks/retrieval.py --data real --queries 198 \\
        --max-neighbors 16 32 --ef-search 10 50 100 200 400 --faiss-threads 1 --embed-seconds 1440 \\
        --out benchmarks/results/retrieval_real.json
    PYTHONPATH=src python benchmarks/retrieval.py --table benchmarks/results/retrieval_*.json
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.metrics.intervals import wilson
from ragshield.rag.backends.chroma import DEFAULTS
from ragshield.rag.index import IndexManifest, read_manifest, write_manifest
from ragshield.rag.store import StoredIndex, backend_settings, create_index, open_index
from ragshield.types import Chunk, Document, ScoredChunk

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


@dataclass(frozen=True)
class Workload:
    """A knowledge base and its queries, as vectors."""

    name: str
    chunks: list[Chunk]
    vectors: np.ndarray
    queries: np.ndarray
    described: str


def random_workload(size: int, queries: int, seed: int) -> Workload:
    chunks, vectors = knowledge_base(size, seed)
    return Workload(
        f"random-{size}",
        chunks,
        vectors,
        near_queries(vectors, queries, seed),
        f"random unit vectors, dimension {DIMENSION} (MiniLM's); queries: corpus vectors + noise",
    )


def real_workload(args: argparse.Namespace) -> Workload:
    """MiniLM vectors of the shared data (module docstring), cached by chunk hash and embedder."""
    from ragshield.datasets.loaders import load_enron, load_healthcaremagic
    from ragshield.rag.chunking import make_chunker
    from ragshield.rag.embedding import SentenceTransformerEmbedder

    data = Path(os.environ.get("RAGSHIELD_SHARED_DATA", ""))
    medical = ["healthcaremagic.jsonl", "icliniq_chatdoctor.jsonl", "genmedgpt5k_synthetic.jsonl"]
    held_each = args.queries // len(medical)
    records: list[Document] = []
    questions: list[str] = []
    for name in medical:
        documents = load_healthcaremagic(str(data / name)).documents
        records.extend(documents[:-held_each])
        questions.extend(str(document.metadata["question"]) for document in documents[-held_each:])
    emails = load_enron(str(data / "enron.jsonl")).documents
    chunks = list(make_chunker("record").split(records)) + list(make_chunker("recursive").split(emails))
    # interleave the two sources so that a time-capped embedding keeps both
    rng = np.random.default_rng(args.seed)
    chunks = [chunks[i] for i in rng.permutation(len(chunks))]
    import torch

    torch.set_num_threads(1)  # the budget is "what one core embeds in --embed-seconds"
    embedder = SentenceTransformerEmbedder()
    digest = hashlib.sha256("\0".join(c.id + c.text for c in chunks).encode()).hexdigest()[:12]
    cache = args.cache / f"real-{digest}.npz"
    parts, query_vectors = [np.zeros((0, embedder.dimension), dtype=np.float32)], None
    if cache.exists():  # resume: each run embeds the next chunks for its --embed-seconds
        saved = np.load(cache)
        parts, query_vectors = [saved["vectors"]], saved["queries"]
    done, started = len(parts[0]), time.perf_counter()
    for start in range(done, len(chunks), 64):
        if time.perf_counter() - started > args.embed_seconds:
            break
        parts.append(embedder.embed([c.text for c in chunks[start : start + 64]]))
    vectors = np.vstack(parts)
    if query_vectors is None:
        query_vectors = embedder.embed(questions)
    print(f"embedded {len(vectors) - done} more chunks in {time.perf_counter() - started:.0f} s", flush=True)
    args.cache.mkdir(parents=True, exist_ok=True)
    np.savez(cache, vectors=vectors, queries=query_vectors)
    kept = chunks[: len(vectors)]
    return Workload(
        f"real-{len(kept)}",
        kept,
        vectors.astype(np.float32),
        query_vectors.astype(np.float32),
        f"{embedder.name} vectors of {len(kept)} real chunks (of {len(chunks)}: medical records one per chunk, "
        f"Enron emails in recursive 1500/100 windows); queries: {len(questions)} held-out patient questions",
    )


def build(store: str, folder: Path, chunks: list[Chunk], vectors: np.ndarray, params: dict[str, Any]) -> float:
    started = time.perf_counter()
    index = create_index(folder, int(vectors.shape[1]), backend=store, params=params)
    for start in range(0, len(chunks), BATCH):
        index.add(chunks[start : start + BATCH], vectors[start : start + BATCH])
    index.commit()
    elapsed = time.perf_counter() - started
    manifest = IndexManifest(
        "benchmark",
        int(vectors.shape[1]),
        len(chunks),
        "benchmark",
        "benchmark",
        backend=store,
        backend_params=backend_settings(store, params),
    )
    write_manifest(folder, manifest)
    return elapsed


def set_ef_search(folder: Path, ef_search: int) -> None:
    """Change a built Chroma index's search breadth, and its manifest to match. An embedded Chroma
    client keeps a loaded graph with its old setting, so the clients are dropped too."""
    from chromadb.api.client import SharedSystemClient

    index, manifest = open_index(folder)
    index._collection.modify(configuration={"hnsw": {"ef_search": ef_search}})  # type: ignore[attr-defined]
    params = {**manifest.backend_params, "ef_search": ef_search}
    write_manifest(folder, replace(manifest, backend_params=params))
    del index
    gc.collect()
    SharedSystemClient.clear_system_cache()


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


def agreement(exact: list[list[ScoredChunk]], approximate: list[list[ScoredChunk]], k: int) -> dict[str, Any]:
    """Recall@k of `approximate` against the exact top-k (Wilson 95% CI over queries x k hits)."""
    pairs = [(a[:k], e[:k]) for a, e in zip(approximate, exact, strict=True)]
    found = sum(len({h.chunk.id for h in a} & {h.chunk.id for h in e}) for a, e in pairs)
    wanted = sum(len(e) for _, e in pairs)
    same_order = sum([h.chunk.id for h in a] == [h.chunk.id for h in e] for a, e in pairs)
    gaps = [
        abs(mine.similarity - theirs.similarity)
        for a, e in pairs
        for mine in a
        for theirs in e
        if mine.chunk.id == theirs.chunk.id
    ]
    # what a miss costs a guard that reads the top-k scores: how far the returned scores fall short
    # of the exact ones (mean over queries of the top-k mean similarity, exact - approximate)
    shortfall = [
        float(np.mean([h.similarity for h in e]) - np.mean([h.similarity for h in a])) for a, e in pairs if a and e
    ]
    low, high = wilson(found, wanted)
    return {
        f"score_shortfall_at_{k}_mean": float(np.mean(shortfall)),
        f"score_shortfall_at_{k}_max": float(np.max(shortfall)),
        f"recall_at_{k}": found / wanted,
        f"recall_at_{k}_ci95": [low, high],
        f"recall_at_{k}_n": wanted,
        f"same_top_{k}_share": same_order / len(pairs),
        f"max_score_gap_at_{k}": max(gaps) if gaps else None,
    }


def measure(folder: Path, queries: np.ndarray, k: int, deepest: int) -> tuple[dict[str, Any], list[list[ScoredChunk]]]:
    """Open, first search, latency at `k`, and the top-`deepest` hits of every query (untimed)."""
    started = time.perf_counter()
    index, _ = open_index(folder)
    opened = time.perf_counter()
    index.search(queries[0], k)
    row: dict[str, Any] = {"open_s": opened - started, "first_search_s": time.perf_counter() - opened}
    timing, _ = latency(index, queries, k)
    row.update(timing)
    deep = [index.search(query, deepest) for query in queries]
    del index
    return row, deep


def run_workload(work: Workload, args: argparse.Namespace, scratch: Path, seam: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    size, deepest = len(work.chunks), max(args.recall_k)
    exact: list[list[ScoredChunk]] | None = None
    for store in args.stores:
        if store != "faiss" and args.approx_max is not None and size > args.approx_max:
            rows.append({"data": work.name, "store": store, "chunks": size, "skipped": "over --approx-max"})
            continue
        grid = (
            [{}]
            if store == "faiss"
            else [{"max_neighbors": m, "ef_construction": args.ef_construction} for m in args.max_neighbors]
        )
        for params in grid:
            folder = scratch / f"{store}-{work.name}-{params.get('max_neighbors', 0)}"
            searches = [None] if store == "faiss" else args.ef_search
            print(f"{store} {work.name} {params}: building ...", flush=True)
            build_s = build(
                store,
                folder,
                work.chunks,
                work.vectors,
                {**params, **({"ef_search": searches[0]} if searches[0] else {})},
            )
            for ef_search in searches:
                if ef_search is not None and ef_search != searches[0]:
                    set_ef_search(folder, ef_search)
                timing, deep = measure(folder, work.queries, args.k, deepest)
                row = {
                    "data": work.name,
                    "store": store,
                    "chunks": size,
                    "params": read_manifest(folder).backend_params,
                    "build_s": build_s,
                    **timing,
                }
                if store == "faiss":
                    exact = deep
                    if size <= args.seam_max:
                        seam[work.name] = seam_overhead(folder, work.queries, args.k, args.rounds)
                elif exact is not None:
                    for k in args.recall_k:
                        row.update(agreement(exact, deep, k))
                rows.append(row)
                print(f"  {describe(row)}", flush=True)
            gc.collect()
    return rows


def describe(row: dict[str, Any]) -> str:
    recalls = ", ".join(f"recall@{k} {row[key]:.3f}" for k in (3, 10) if (key := f"recall_at_{k}") in row)
    return f"build {row['build_s']:.1f}s, p50 {row['p50_ms']:.2f} ms, p95 {row['p95_ms']:.2f} ms {recalls}"


def run(args: argparse.Namespace) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    seam: dict[str, Any] = {}
    described: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ragshield-retrieval-") as scratch:
        works = (
            [real_workload(args)]
            if args.data == "real"
            else (random_workload(size, args.queries, args.seed) for size in args.sizes)
        )
        for work in works:
            described.append(f"{work.name}: {work.described}")
            rows.extend(run_workload(work, args, Path(scratch), seam))
    return {
        "meta": {
            "data": described,
            "k": args.k,
            "recall_k": args.recall_k,
            "queries": args.queries,
            "seed": args.seed,
            "ef_construction": args.ef_construction,
            "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}; shared 2-core host",
            "load_average": os.getloadavg(),
        },
        "rows": rows,
        "seam_overhead": seam,
    }


def print_table(results: dict[str, Any]) -> None:
    print(
        f"\n{'data':14} {'store':7} {'M':>3} {'ef_s':>5} {'build s':>8} {'first s':>7} {'p50 ms':>7} {'p95 ms':>7}"
        f" {'recall@3 (95% CI)':>20} {'recall@10 (95% CI)':>20} {'short@3':>8}"
    )
    for row in results["rows"]:
        data = row.get("data", f"random-{row['chunks']}")  # rows from before --data
        if "skipped" in row:
            print(f"{data:14} {row['store']:7}  skipped: {row['skipped']}")
            continue
        params = row.get("params", {})
        cells = [recall_cell(row, k) for k in (3, 10)]
        shortfall = row.get("score_shortfall_at_3_mean")
        first = row.get("first_search_s")
        print(
            f"{data:14} {row['store']:7} {params.get('max_neighbors', '-'):>3} {params.get('ef_search', '-'):>5} "
            f"{row['build_s']:>8.1f} {'-' if first is None else f'{first:.2f}':>7} {row['p50_ms']:>7.2f} "
            f"{row['p95_ms']:>7.2f} {cells[0]:>20} {cells[1]:>20} {'-' if shortfall is None else f'{shortfall:.4f}':>8}"
        )
    for size, cost in results["seam_overhead"].items():
        print(
            f"seam cost at {size}: direct {cost['direct_median_us']:.0f} us, "
            f"seam {cost['seam_median_us']:.0f} us "
            f"(paired median {cost['paired_median_pct']:+.2f}%, 95% CI {cost['paired_median_pct_ci95'][0]:+.2f}.."
            f"{cost['paired_median_pct_ci95'][1]:+.2f}%; mean {cost['overhead_mean_pct']:+.2f}%; "
            f"n = {cost['calls_each']} calls each)"
        )


def recall_cell(row: dict[str, Any], k: int) -> str:
    if f"recall_at_{k}" in row:
        low, high = row[f"recall_at_{k}_ci95"]
        return f"{row[f'recall_at_{k}']:.3f} ({low:.3f}-{high:.3f})"
    if k == 3 and "recall_at_k" in row:  # rows from before recall@10, measured at k = 3
        return f"{row['recall_at_k']:.3f}"
    # FAISS is the exact reference; another store without FAISS in the same run has no recall
    return "exact" if row["store"] == "faiss" else "missing"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["random", "real"], default="random")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000], help="random knowledge bases")
    parser.add_argument("--max-neighbors", type=int, nargs="+", default=[DEFAULTS["max_neighbors"]])
    parser.add_argument("--ef-search", type=int, nargs="+", default=[DEFAULTS["ef_search"]])
    parser.add_argument("--ef-construction", type=int, default=DEFAULTS["ef_construction"])
    parser.add_argument("--recall-k", type=int, nargs="+", default=[3, 10])
    parser.add_argument(
        "--embed-seconds",
        type=int,
        default=600,
        help="real data: seconds of embedding on one thread this run (resumes from --cache)",
    )
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "ragshield-retrieval-cache")
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
    parser.add_argument("--seam-max", type=int, default=20_000, help="largest knowledge base for the seam comparison")
    parser.add_argument("--faiss-threads", type=int, default=None, help="OpenMP threads for FAISS (default: its own)")
    parser.add_argument("--table", type=Path, nargs="+", help="only print the tables of these results files")
    args = parser.parse_args()
    if args.table:
        for path in args.table:
            print(f"\n{path.name}: {json.loads(path.read_text())['meta']}")
            print_table(json.loads(path.read_text()))
        return
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
