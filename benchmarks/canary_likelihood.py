"""CanaryRAG benchmark sections of the likelihood oracle with the real SmolLM2: `likelihood`
(separation of benign and adaptive queries), `likelihood-self-check` and `likelihood-latency`.
Run them through `benchmarks/canary.py`."""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import canary_runtime
from canary_likelihood_queries import LIKELIHOOD_FAMILIES, kb_split, likelihood_queries
from canary_likelihood_summary import summarise_likelihood
from canary_no_model import sample_chunks
from canary_runtime import Progress
from ragshield.metrics.cost import percentile
from ragshield.types import Query, iter_jsonl


def bench_likelihood(
    data: Path, n_benign: int, n_family: int, passages: int, seed: int, progress: Progress, kbs: tuple[str, ...]
) -> dict:
    """Violation scores of the likelihood oracle (real SmolLM2) for benign and adaptive queries.

    Knowledge base by knowledge base (in `kbs` order, so a run cut short finishes the first), each
    contributes `passages` real chunks of its indexed part, decorated once; queries are spread
    over them round-robin and each passage's neutral baseline is scored once (the oracle's own
    per-request cost is measured by the likelihood-latency section). Every scored query is
    appended to the progress file at once: a cut-off run keeps what it scored (`--resume`).
    """
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.guards.canary import CanaryInjector
    from ragshield.guards.canary.likelihood import (
        MAX_PASSAGE_FACTOR,
        LikelihoodConfig,
        cap_passage,
        clip_query,
        neutral_baseline,
        score_passage,
    )
    from ragshield.guards.canary.oracle import oracle_passage
    from ragshield.types import Chunk, RetrievalResult, ScoredChunk

    config = LikelihoodConfig()
    scorer: Any = None
    injector = CanaryInjector()
    counts = {"benign": n_benign, "suppression": n_family, "obfuscation": n_family, "deferred": n_family}
    if progress.finished_only:  # report what was scored, score nothing
        kbs = ()
    started = time.perf_counter()
    for kb in kbs:
        texts, holdout = kb_split(data, kb, passages, seed)
        queries = {family: likelihood_queries(data, kb, family, counts[family], seed, holdout) for family in counts}
        for slot in range(len(texts)):
            todo = [
                (family, i)
                for i in range(max(counts.values()))
                for family in LIKELIHOOD_FAMILIES
                if i < len(queries[family])
                and i % len(texts) == slot
                and f"likelihood:{kb}:{family}:{i}" not in progress.done
            ]
            if not todo:
                continue
            if scorer is None:  # the model only when work is left
                scorer = LlamaCppGenerator(n_ctx=1024, n_threads=canary_runtime.THREADS, name="likelihood-oracle")
            chunk = Chunk(id=f"{kb}-{slot}", doc_id=f"{kb}-{slot}", text=texts[slot])
            decorated = injector.decorate(RetrievalResult(Query("-"), (ScoredChunk(chunk, 1.0, 0),)))
            passage, canaries = cap_passage(
                *oracle_passage(decorated.hits[0].chunk.text, tuple(decorated.markers[chunk.id]), config.passage_chars),
                MAX_PASSAGE_FACTOR * config.passage_chars,
            )  # as `LikelihoodPath` cuts it
            baseline = neutral_baseline(scorer, passage, canaries, config.neutral_queries)
            for family, i in todo:
                item = queries[family][i]
                tick = time.perf_counter()
                query = clip_query(item["text"], config.max_query_chars)
                score = score_passage(scorer, passage, canaries, query, baseline=baseline)
                row = {
                    "kb": kb,
                    "family": family,
                    "index": i,
                    "variant": item["variant"],
                    "source": item["source"],
                    "passage": slot,
                    "canary_drop": score.canary_drop,
                    "copy_drop": score.copy_drop,
                    "canary_tokens": score.canary_tokens,
                    "copy_tokens": score.copy_tokens,
                    "query_chars": len(query),
                    "ms": round((time.perf_counter() - tick) * 1000.0, 1),
                }
                progress.record(f"likelihood:{kb}:{family}:{i}", row)
            elapsed = time.perf_counter() - started
            print(f"likelihood {kb} passage {slot + 1}/{len(texts)}: {len(todo)} scored ({elapsed:.0f}s)", flush=True)
    return summarise_likelihood([row for key, row in progress.done.items() if key.startswith("likelihood:")], seed)


def bench_likelihood_self_check() -> dict:
    """The likelihood oracle's own self-check (built-in probes, `DEFAULT_THRESHOLDS`) with the real
    SmolLM2: what decides whether `oracle: likelihood` runs at all."""
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.guards.canary.likelihood import likelihood_self_check

    tick = time.perf_counter()
    health = likelihood_self_check(
        LlamaCppGenerator(n_ctx=1024, n_threads=canary_runtime.THREADS, name="likelihood-oracle")
    )
    return {
        "healthy": health.healthy,
        "probes": health.probes,
        "separation_auroc": health.separation,
        "reason": health.reason,
        "seconds": round(time.perf_counter() - tick, 1),
    }


def bench_likelihood_latency(data: Path, n: int, max_tokens: int, seed: int, progress: Progress) -> dict:
    """Answer latency with the likelihood oracle running concurrently against the undefended answer.

    The same real SmolLM2 target answers each benign question over 3 real HealthcareMagic chunks
    (the pipeline's prompt), once undefended and once with the likelihood oracle (a second
    instance) scoring a decorated chunk in its thread while the target answers; the defended
    time ends when both are done, as `CanaryMonitor.close` waits. Order alternates per query.
    """
    from ragshield.generators.base import complete
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.guards.canary import CanaryInjector
    from ragshield.guards.canary.likelihood import LikelihoodPath
    from ragshield.rag.prompting import PromptBuilder
    from ragshield.types import Chunk, RetrievalResult, ScoredChunk

    rows = list(iter_jsonl(data / "queries" / "benign_queries_sage.jsonl"))
    random.Random(seed + 7).shuffle(rows)
    texts = sample_chunks(data, "healthcaremagic", 3 * n, seed + 1)
    builder = PromptBuilder(max_tokens=max_tokens)
    injector = CanaryInjector()
    target = LlamaCppGenerator(n_threads=canary_runtime.THREADS)  # the models load on first use
    path = LikelihoodPath(LlamaCppGenerator(n_ctx=1024, n_threads=canary_runtime.THREADS, name="likelihood-oracle"))
    warmed = False
    n = progress.limit("likelihood-latency", n)
    for number in range(n):
        key = f"likelihood-latency:{number}"
        if key in progress.done:
            continue
        hits = tuple(
            ScoredChunk(Chunk(f"c{number}-{j}", f"d{number}-{j}", texts[3 * number + j]), 0.5, j) for j in range(3)
        )
        plain = RetrievalResult(Query(str(rows[number]["query"])[:600]), hits)
        decorated = injector.decorate(plain)
        if not warmed:  # load both models before timing
            complete(target, builder.build(plain))
            run = path.start(decorated)
            if run is not None:
                run.result()
            warmed = True
        row: dict[str, Any] = {}
        for mode in ("undefended", "likelihood") if number % 2 == 0 else ("likelihood", "undefended"):
            tick = time.perf_counter()
            if mode == "undefended":
                row["undefended_answer_chars"] = len(complete(target, builder.build(plain)))
            else:
                run = path.start(decorated)
                row["likelihood_answer_chars"] = len(complete(target, builder.build(decorated)))
                answered = time.perf_counter()
                outcome = run.result() if run is not None else None
                row["oracle_ms"] = outcome.elapsed_ms if outcome is not None else None
                row["oracle_error"] = outcome.error if outcome is not None else "timeout"
                row["waited_for_oracle_ms"] = round((time.perf_counter() - answered) * 1000.0, 1)
            row[mode] = round((time.perf_counter() - tick) * 1000.0, 1)
        progress.record(key, row)
        print(f"likelihood-latency {number + 1}/{n}: {row}", flush=True)
    done = [progress.done[f"likelihood-latency:{i}"] for i in range(n) if f"likelihood-latency:{i}" in progress.done]
    if not done:
        return {"queries": 0}
    base = percentile([r["undefended"] for r in done], 0.5)
    defended = percentile([r["likelihood"] for r in done], 0.5)
    return {
        "queries": len(done),
        "max_tokens": max_tokens,
        "undefended_p50_ms": round(base, 1),
        "likelihood_p50_ms": round(defended, 1),
        "added_p50_ratio": round(defended / base - 1.0, 3),
        "added_p50_ratio_95ci": _added_p50_ci(done, seed),
        "oracle_alone_p50_ms": round(percentile([r["oracle_ms"] for r in done if r.get("oracle_ms")], 0.5), 1),
        "waited_for_oracle_p50_ms": round(percentile([r["waited_for_oracle_ms"] for r in done], 0.5), 1),
        "per_query_ratio_median": round(statistics.median(r["likelihood"] / r["undefended"] for r in done), 3),
        "oracle_errors": sum(bool(r.get("oracle_error")) for r in done),
    }


def _added_p50_ci(rows: list[dict[str, Any]], seed: int, rounds: int = 2000) -> list[float]:
    """Percentile bootstrap 95% CI of p50(defended) / p50(undefended) - 1, queries resampled as pairs."""
    rng = random.Random(seed)
    values = []
    for _ in range(rounds):
        sample = rng.choices(rows, k=len(rows))
        defended = percentile([r["likelihood"] for r in sample], 0.5)
        values.append(defended / percentile([r["undefended"] for r in sample], 0.5) - 1)
    values.sort()
    return [round(values[int(0.025 * rounds)], 3), round(values[int(0.975 * rounds) - 1], 3)]
