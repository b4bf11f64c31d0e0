"""Pipeline performance on the embedded defaults (real MiniLM, FAISS, SmolLM2 via llama.cpp).

Measures, in one run:
* indexing throughput (chunks/s: chunking + embedding + FAISS add) on the synthetic corpus;
* retrieval latency p50/p95 (query embedding + FAISS search) at 2k and 20k chunks;
* generation throughput (tokens/s) of the local model;
* the share of one answer's latency spent in each stage (retrieve, generate, other).

Writes benchmarks/results/pipeline.json and prints a table.

    .venv/bin/python benchmarks/pipeline.py [--small 2000 --large 20000 --queries 50 --answers 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.generators.llama_cpp import LlamaCppGenerator
from ragshield.pipeline import RagPipeline
from ragshield.rag.build import build_index
from ragshield.rag.embedding import SentenceTransformerEmbedder
from ragshield.rag.prompting import PromptBuilder
from ragshield.rag.retriever import open_retriever
from ragshield.types import GenerationRequest, Query

RESULTS = Path(__file__).resolve().parent / "results"
QUESTIONS = [
    "What should I do about persistent headaches?",
    "Who asked about a rash on the forearm?",
    "Is the board meeting moving?",
    "What is the plan for pipeline capacity in winter?",
    "How do I treat knee swelling after running?",
    "What was wrong with my payslip?",
]


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def index_and_time(records: int, embedder: SentenceTransformerEmbedder, folder: Path) -> dict[str, float]:
    corpus = make_synthetic_corpus(records, seed=0)
    started = time.perf_counter()
    manifest, _ = build_index(corpus, embedder, folder, corpus_spec=f"synthetic:{records}")
    elapsed = time.perf_counter() - started
    return {"chunks": manifest.count, "seconds": elapsed, "chunks_per_s": manifest.count / elapsed}


def retrieval_latency(folder: Path, embedder: SentenceTransformerEmbedder, n_queries: int) -> dict[str, float]:
    retriever, _ = open_retriever(folder, embedder)
    retriever.retrieve(Query("warm up"), 3)
    latencies = []
    for i in range(n_queries):
        query = Query(f"{QUESTIONS[i % len(QUESTIONS)]} ({i})")
        started = time.perf_counter()
        retriever.retrieve(query, 3)
        latencies.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95), "queries": n_queries}


def generation_speed(generator: LlamaCppGenerator, max_tokens: int) -> dict[str, float]:
    request = GenerationRequest(
        messages=(), prompt="Write a short story about a lighthouse keeper.\n", max_tokens=max_tokens
    )
    "".join(generator.stream(GenerationRequest(messages=(), prompt="Hi", max_tokens=4)))  # load + warm up
    started = time.perf_counter()
    text = "".join(generator.stream(request))
    elapsed = time.perf_counter() - started
    tokens = generator.count_tokens(text)
    return {"tokens": tokens, "seconds": elapsed, "tokens_per_s": tokens / elapsed if elapsed else float("nan")}


def stage_shares(folder: Path, embedder: SentenceTransformerEmbedder, generator: LlamaCppGenerator, n: int) -> dict:
    retriever, _ = open_retriever(folder, embedder)
    pipeline = RagPipeline(retriever, generator, prompt_builder=PromptBuilder(max_tokens=64))
    totals: dict[str, list[float]] = {"retrieve": [], "first_token": [], "generate": [], "total": []}
    for i in range(n):
        timings = pipeline.answer(Query(QUESTIONS[i % len(QUESTIONS)])).timings_ms
        for key in totals:
            totals[key].append(timings.get(key, 0.0))
    median = {key: statistics.median(values) for key, values in totals.items()}
    total = median["total"]
    other = max(total - median["retrieve"] - median["generate"], 0.0)
    return {
        "median_ms": median,
        "share": {
            "retrieve": median["retrieve"] / total,
            "generate": median["generate"] / total,
            "prefill (first token, part of generate)": median["first_token"] / total,
            "other (prompt, guards, bookkeeping)": other / total,
        },
        "answers": n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--large", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--answers", type=int, default=5)
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--out", type=Path, default=RESULTS / "pipeline.json")
    args = parser.parse_args()

    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    generator = LlamaCppGenerator()
    results: dict[str, object] = {"cpu_count": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        small, large = Path(tmp) / "small", Path(tmp) / "large"
        results["indexing"] = index_and_time(args.small, embedder, small)
        results["retrieval_small"] = retrieval_latency(small, embedder, args.queries)
        results["indexing_large"] = index_and_time(args.large, embedder, large)
        results["retrieval_large"] = retrieval_latency(large, embedder, args.queries)
        results["generation"] = generation_speed(generator, args.gen_tokens)
        results["stages"] = stage_shares(small, embedder, generator, args.answers)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))

    print(f"{'measure':<44} value")
    idx, idx_large = results["indexing"], results["indexing_large"]
    print(f"{'indexing throughput, ' + str(args.small) + ' chunks':<44} {idx['chunks_per_s']:.1f} chunks/s")  # type: ignore[index]
    print(f"{'indexing throughput, ' + str(args.large) + ' chunks':<44} {idx_large['chunks_per_s']:.1f} chunks/s")  # type: ignore[index]
    for label, key in (("retrieval", "retrieval_small"), ("retrieval", "retrieval_large")):
        size = args.small if key.endswith("small") else args.large
        r = results[key]
        print(f"{label + f' p50 / p95 at {size} chunks':<44} {r['p50_ms']:.1f} / {r['p95_ms']:.1f} ms")  # type: ignore[index]
    print(f"{'generation':<44} {results['generation']['tokens_per_s']:.1f} tokens/s")  # type: ignore[index]
    for stage, share in results["stages"]["share"].items():  # type: ignore[index]
        print(f"{'share of answer latency: ' + stage:<44} {share:.1%}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
