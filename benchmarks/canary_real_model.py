"""CanaryRAG benchmark sections with the real SmolLM2 target: `latency`, `fpr`, `detection` and
`placement`. Run them through `benchmarks/canary.py`."""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import canary_runtime
from canary_runtime import Progress, canary_system, canary_verdict, real_system
from ragshield.metrics.cost import percentile
from ragshield.metrics.intervals import wilson
from ragshield.types import Query, iter_jsonl

ATTACKS = ("tgtb", "pide", "canary-suppression", "canary-obfuscation", "deferred-injection")


# -- latency ---------------------------------------------------------------------------------


def bench_latency(data: Path, index_dir: Path, n: int, max_tokens: int, oracle_tokens: int, progress: Progress) -> dict:
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.guards.base import NO_DEFENSE
    from ragshield.guards.factory import DefenseContext, build_defense
    from ragshield.pipeline import RagPipeline

    queries = [row["query"] for row in iter_jsonl(data / "queries" / "benign_queries_sage.jsonl")][-n:]
    queries = queries[: progress.limit("latency", len(queries))]
    order = ["undefended", "canary_no_oracle", "canary_with_oracle"]
    systems: dict[str, Any] = {}
    if any(f"latency:{i}" not in progress.done for i in range(len(queries))):  # models only when work is left
        retriever, target, builder = real_system(data, index_dir, max_tokens)
        oracle = LlamaCppGenerator(n_ctx=1024, n_threads=canary_runtime.THREADS, name="canary-oracle")
        context = DefenseContext(generator=target, oracle_generator=oracle)
        params = {"oracle": "on", "oracle_max_tokens": oracle_tokens, "oracle_early_halt": False}
        defenses = {
            "undefended": NO_DEFENSE,
            "canary_no_oracle": build_defense("canary-rag", context, {"canary-rag": {"oracle": "off"}}),
            "canary_with_oracle": build_defense("canary-rag", context, {"canary-rag": params}),
        }
        for name, defense in defenses.items():
            systems[name] = RagPipeline(retriever, target, defense=defense, prompt_builder=builder, k=3)
        systems["undefended"].answer(Query("warm-up question"))  # load the models before timing
    for number, text in enumerate(queries):
        key = f"latency:{number}"
        if key in progress.done:
            continue
        row: dict[str, Any] = {}
        for name in order[number % 3 :] + order[: number % 3]:  # rotate to spread drift
            response = systems[name].answer(Query(text, user_id="bench"))
            row[name] = response.timings_ms["total"]
            verdict = canary_verdict(response)
            if name == "canary_with_oracle" and verdict is not None:
                row["oracle_elapsed_ms"] = verdict.evidence["oracle"].get("elapsed_ms")
                row["oracle_result"] = verdict.evidence["oracle"].get("result")
        progress.record(key, row)
        print(f"latency {number + 1}/{n}: {row}", flush=True)
    rows = [progress.done[f"latency:{i}"] for i in range(len(queries))]
    if not rows:
        return {"queries": 0}
    out: dict[str, Any] = {"queries": len(rows), "max_tokens": max_tokens, "oracle_max_tokens": oracle_tokens}
    base_p50 = percentile([r["undefended"] for r in rows], 0.5)
    base_p95 = percentile([r["undefended"] for r in rows], 0.95)
    for name in order:
        values = [r[name] for r in rows]
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        out[name] = {
            "p50_ms": round(p50, 1),
            "p95_ms": round(p95, 1),
            "p50_ratio": round(p50 / base_p50, 3),
            "p95_ratio": round(p95 / base_p95, 3),
        }
    oracle_times = [r["oracle_elapsed_ms"] for r in rows if r.get("oracle_elapsed_ms")]
    out["oracle_alone_p50_ms"] = round(percentile(oracle_times, 0.5), 1) if oracle_times else None
    out["per_query_ratio_median"] = round(statistics.median(r["canary_with_oracle"] / r["undefended"] for r in rows), 3)
    return out


# -- false positives -------------------------------------------------------------------------


def bench_fpr(data: Path, index_dir: Path, n: int, max_tokens: int, progress: Progress) -> dict:
    from ragshield.guards.policy import false_block_bound

    rows = list(iter_jsonl(data / "queries" / "benign_queries_sage.jsonl"))[: progress.limit("fpr", n)]
    pipeline: Any = None
    if any(f"fpr:{i}" not in progress.done for i in range(len(rows))):  # models only when work is left
        pipeline, guard = canary_system(data, index_dir, max_tokens)  # default oracle; self-check
        note = {"status": getattr(guard, "oracle_status", None), "note": getattr(guard, "oracle_note", None)}
        progress.record("fpr:oracle", note)
    started = time.perf_counter()
    for number, row in enumerate(rows):
        key = f"fpr:{number}"
        if key in progress.done:
            continue
        response = pipeline.answer(Query(row["query"], user_id="benign"))
        verdict = canary_verdict(response)
        progress.record(
            key,
            {
                "domain": row.get("domain"),
                "blocked": response.blocked,
                "forms": verdict.evidence.get("forms") if verdict else None,
                "ms": response.timings_ms.get("total"),
            },
        )
        if number % 25 == 0:
            elapsed = time.perf_counter() - started
            print(f"fpr {number + 1}/{n} ({elapsed:.0f}s)", flush=True)
    done = [progress.done[f"fpr:{i}"] for i in range(len(rows))]
    if not done:
        return {"queries": 0}
    flagged = sum(r["blocked"] for r in done)
    rate = flagged / len(done)
    low, high = wilson(flagged, len(done))
    domains: dict[str, list[bool]] = {}
    for r in done:
        domains.setdefault(str(r["domain"]), []).append(r["blocked"])
    return {
        "queries": len(done),
        "flagged": flagged,
        "fpr": round(rate, 5),
        "fpr_95ci": [round(low, 5), round(high, 5)],
        "per_domain": {d: {"queries": len(v), "flagged": sum(v)} for d, v in domains.items()},
        "forms_flagged": sorted({f for r in done if r["forms"] for f in r["forms"]}),
        "oracle": {key: progress.done["fpr:oracle"].get(key) for key in ("status", "note")},
        "median_query_ms": round(statistics.median(r["ms"] for r in done), 1),
        "false_block_bound_W20_k3_at_measured_fpr": false_block_bound(rate, 20, 3),
        "false_block_bound_W20_k3_at_ci_high": false_block_bound(high, 20, 3),
    }


# -- detection -------------------------------------------------------------------------------


def attack_queries(name: str, data: Path, n: int, seed: int) -> list[str]:
    from ragshield.attacks import make_attack

    attack = make_attack(name, data_dir=data)
    rng = random.Random(seed)
    seen: list[tuple[Query, str]] = []
    out: list[str] = []
    while len(out) < n:
        query = attack.next_query(seen, rng)
        if query is None:
            break
        out.append(query.text)
        seen.append((query, ""))
    return out


def bench_detection(
    data: Path, index_dir: Path, n: int, max_tokens: int, seed: int, progress: Progress, attacks: tuple[str, ...]
) -> dict:
    from ragshield.metrics.text import rouge_l

    pipeline: Any = None
    results: dict[str, Any] = {}
    for name in attacks:
        queries = attack_queries(name, data, progress.limit(f"detect:{name}", n), seed)
        for number, text in enumerate(queries):
            key = f"detect:{name}:{number}"
            if key in progress.done:
                continue
            if pipeline is None:  # models only when work is left
                pipeline, guard = canary_system(data, index_dir, max_tokens)
                progress.record("detect:oracle", {"status": guard.oracle_status})
            response = pipeline.answer(Query(text, user_id=f"attacker-{name}"))
            verdict = canary_verdict(response)
            leaked_unflagged = False
            if not response.blocked and response.retrieval is not None:
                leaked_unflagged = any(
                    rouge_l(hit.chunk.text, response.text, use_stemmer=False).recall > 0.5
                    for hit in response.retrieval.hits
                )
            progress.record(
                key,
                {
                    "blocked": response.blocked,
                    "missed_leak": leaked_unflagged,
                    "forms": verdict.evidence.get("forms") if verdict else None,
                },
            )
        done = [progress.done[f"detect:{name}:{i}"] for i in range(len(queries))]
        flagged = sum(r["blocked"] for r in done)
        missed = sum(r["missed_leak"] for r in done)
        results[name] = {
            "queries": len(done),
            "flagged": flagged,
            "detection_rate": round(flagged / len(done), 4) if done else None,
            "unflagged_rouge_leaks": missed,
            "detection_among_leaks": round(flagged / (flagged + missed), 4) if flagged + missed else None,
            "forms": sorted({f for r in done if r["forms"] for f in r["forms"]}),
        }
        print(f"detection {name}: {results[name]}", flush=True)
    results["oracle"] = progress.done.get("detect:oracle", {}).get("status")
    return results


# -- placement -------------------------------------------------------------------------------


def bench_placement(
    data: Path, index_dir: Path, placement: str, n: int, max_tokens: int, seed: int, progress: Progress
) -> dict:
    """The first `n` benign (SAGE) and TGTB queries again with another canary placement, paired
    with the default placement's results for the same queries (the `fpr` and `detection` rows)."""

    sets = {
        "benign": [row["query"] for row in iter_jsonl(data / "queries" / "benign_queries_sage.jsonl")][:n],
        "tgtb": attack_queries("tgtb", data, n, seed),
    }
    default_keys = {"benign": "fpr", "tgtb": "detect:tgtb"}
    pipeline: Any = None
    out: dict[str, Any] = {"placement": placement}
    for name, queries in sets.items():
        queries = queries[: progress.limit(f"placement:{placement}:{name}", len(queries))]
        for number, text in enumerate(queries):
            key = f"placement:{placement}:{name}:{number}"
            if key in progress.done:
                continue
            if pipeline is None:  # models only when work is left
                # the target path only, as the fpr and detection rows were measured (oracle disabled)
                pipeline, _ = canary_system(data, index_dir, max_tokens, {"placement": placement, "oracle": "off"})
            response = pipeline.answer(Query(text, user_id=f"placement-{name}"))
            verdict = canary_verdict(response)
            forms = verdict.evidence.get("forms") if verdict else None
            progress.record(key, {"blocked": response.blocked, "forms": forms})
        paired = [
            (progress.done[f"placement:{placement}:{name}:{i}"], progress.done[f"{default_keys[name]}:{i}"])
            for i in range(len(queries))
            if f"{default_keys[name]}:{i}" in progress.done  # paired with the default placement's row
        ]
        out[name] = {
            "queries": len(paired),
            "flagged": sum(alt["blocked"] for alt, _ in paired),
            "flagged_sentence_begin": sum(base["blocked"] for _, base in paired),
            "only_this_placement": sum(alt["blocked"] and not base["blocked"] for alt, base in paired),
            "only_sentence_begin": sum(base["blocked"] and not alt["blocked"] for alt, base in paired),
        }
        print(f"placement {placement} {name}: {out[name]}", flush=True)
    return out
