"""What the second opinion's reading costs when a query's pieces are batched by length (issue 18, cost goal).

    OMP_NUM_THREADS=1 nice .venv/bin/python benchmarks/intent_veto_batching.py [--data ../shared/data]

The second opinion reads a flag or a near miss piece by piece (`intent_veto_reading.verifier_logits`): the text, then
its sentences and clauses and its second reading. A batch pads every piece to its longest, and before session 41 the
pieces went in `pieces_of`'s order, 32 at a time, so a query's clauses were padded to its second reading or its
longest sentence. Since then they are read each once, shortest first, `BATCH` at a time. This measures both on the
queries the shipped guard reads twice: every flag and near miss (within its lane's raise band) of the public benign
test buckets, and the flags and near misses among a seeded sample of held-out extraction requests; each read as the
guard reads it (stopping at the lane's veto line for a flag, its raise line for a near miss), single-thread CPU
time, each variant measured once per text after a warm-up. It checks that both orders reach the same decision for
every text (and the same logit where both read a text to its end), so the saving changes no verdict. Writes
`benchmarks/results/intent_veto_batching.json` and prints a table.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import intent_sets as isets
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_arrays import logit
from ragshield.guards.intent_veto import shipped_veto
from ragshield.guards.intent_veto_reading import BATCH, verifier_logits

OUT = qs.REPO / "benchmarks" / "results" / "intent_veto_batching.json"
REQUESTS = 200  # held-out extraction requests sampled (seeded)
VARIANTS = {"before (in order, 32)": (False, 32), **{f"by length, {b}": (True, b) for b in (4, 8, 16, 32)}}


def asked(data: Path) -> list[dict[str, Any]]:
    """The queries the shipped guard reads twice, each with its lane and where its reading stops."""
    corpus = ti.build_corpus(data)
    texts = [e.text for name in ("sage", "healthcaremagic", "icliniq", "enron") for e in corpus.test[name]]
    requests = [e.text for e in isets.heldout(isets.HELDOUT) if e.label == 1]
    texts += random.Random(7).sample(requests, min(REQUESTS, len(requests)))
    guard = ExtractionIntent(second_opinion=False)
    model = guard._model()
    version = str(model.meta.get("model_version"))
    scores, lanes, line = guard.scores(texts), model.routes(texts), logit(model.threshold)
    out = []
    for text, score, routed in zip(texts, scores, lanes, strict=True):
        lane = "e5" if routed else "minilm"
        weights = shipped_veto().weights(lane, version)
        if weights is None:
            raise SystemExit(f"the packaged {lane} second opinion does not load: nothing to measure")
        gap = line - logit(score.probability)
        if gap <= 0:
            out.append({"text": text, "lane": lane, "kind": "flag", "stop_at": weights.tau})
        elif weights.raise_band is not None and weights.raise_tau is not None and gap <= weights.raise_band:
            out.append({"text": text, "lane": lane, "kind": "near miss", "stop_at": weights.raise_tau})
    return out


def measure(data: Path) -> dict[str, Any]:
    queries = asked(data)
    model = ExtractionIntent(second_opinion=False)._model()
    version = str(model.meta.get("model_version"))
    spent: dict[str, list[float]] = {name: [] for name in VARIANTS}
    found: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with qs.single_thread():
        for query in queries:
            verifier = shipped_veto().verifier(query["lane"], version)
            for name, (by_length, batch) in VARIANTS.items():
                read = functools.partial(
                    verifier_logits,
                    verifier.logits,
                    {0: query["text"]},
                    model.second_reading,
                    model.feature_version,
                    stop_at=query["stop_at"],
                    reading=verifier.weights.reading_for(query["kind"] == "near miss"),
                    batch=batch,
                    by_length=by_length,
                )
                value = read().get(0, float("nan"))  # also the warm-up
                spent[name].append(qs.cpu_time_us(read))
                found[name].append(value)
    before = found["before (in order, 32)"]
    stops = [q["stop_at"] for q in queries]
    agreement = {}
    for name, values in found.items():
        same = [(a >= s) == (b >= s) for a, b, s in zip(before, values, stops, strict=True) if a == a and b == b]
        both_read = [abs(a - b) for a, b, s in zip(before, values, stops, strict=True) if a < s and b < s]
        agreement[name] = {
            "same_decision": sum(same),
            "read": len(same),
            "largest_logit_difference": max(both_read, default=0.0),
        }
    base = float(np.sum(spent["before (in order, 32)"]))
    return {
        "queries": len(queries),
        "by_kind": dict(Counter(f"{q['lane']} {q['kind']}" for q in queries)),
        "batch_now": BATCH,
        "variants": {
            name: {
                "cpu_us_median": float(np.median(times)),
                "cpu_us_total": float(np.sum(times)),
                "total_over_before": float(np.sum(times)) / base if base else None,
                **agreement[name],
            }
            for name, times in spent.items()
        },
        "share": {name: ig.share(agreement[name]["same_decision"], agreement[name]["read"]) for name in VARIANTS},
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['queries']} queries read twice ({result['by_kind']}); single-thread CPU",
        "| reading | median ms | total s | total / before | same decision | largest logit difference |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in result["variants"].items():
        lines.append(
            f"| {name} | {row['cpu_us_median'] / 1000:.1f} | {row['cpu_us_total'] / 1e6:.2f} | "
            f"{row['total_over_before']:.2f} | {row['same_decision']}/{row['read']} | "
            f"{row['largest_logit_difference']:.1e} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    qs.run_on_data(__doc__, measure, table, OUT, argv)


if __name__ == "__main__":
    main()
