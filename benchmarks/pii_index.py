"""Throughput of the index-time PII pass (`ragshield index`, `pii_spans.jsonl`) on real chunks.

For HealthcareMagic dialogues and Enron emails (from `--data`, e.g. ../shared/data), chunked as
`ragshield index` chunks them by default (one record per chunk), this measures:

* the index-time pass (`PiiAnalyzer.find_many` + digests), patterns only and with spaCy NER:
  chunks/s and characters/s over `--limit` chunks, timed per batch of 32 chunks (95% CI of
  chunks/s by bootstrap over the batches);
* the request-time path (`ChunkPiiStore` without stored spans): milliseconds to analyse one
  chunk on its own (p50/p95), what a guard pays per retrieved chunk on an old index;
* what was found: the share of chunks with PII (95% Wilson CI) and spans per kind;
* recall on the synthetic corpus, whose PII inventory is known exactly: the share of
  inventory values (per kind) whose digest is among the digests found in their record
  (95% Wilson CI); names also counted without a title or suffix ("Dr.", "DDS"), since the
  NER span is the name itself.

No PII value is printed or written: counts only. Writes benchmarks/results/pii_index.json and
prints a table.

    nice .venv/bin/python benchmarks/pii_index.py [--data ../shared/data --limit 400]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ragshield.datasets.base import load_corpus
from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.metrics.intervals import wilson
from ragshield.pii import PiiAnalyzer, ner_available, pii_digest
from ragshield.pii.spans import spans_of
from ragshield.rag.chunking import RecordChunker

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
BATCH = 32
SINGLE = 60  # chunks analysed one by one for the request-time latency
_TITLE = re.compile(r"^(?:Dr|Mr|Mrs|Ms|Miss)\.?\s+|\s+(?:MD|DDS|DVM|PhD|Jr\.?|Sr\.?|II|III|IV|V)$")


def _bootstrap_rate(batches: list[tuple[int, float]], *, rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of sum(chunks) / sum(seconds), resampling batches."""
    rng = random.Random(seed)
    rates = []
    for _ in range(rounds):
        sample = [rng.choice(batches) for _ in batches]
        rates.append(sum(n for n, _ in sample) / sum(s for _, s in sample))
    rates.sort()
    return rates[int(0.025 * rounds)], rates[int(0.975 * rounds) - 1]


def measure_pass(texts: list[str], analyzer: PiiAnalyzer) -> dict[str, Any]:
    """The index-time pass over `texts` in batches: throughput and what it found."""
    analyzer.find_many(texts[:4])  # load presidio and spaCy outside the timing
    batches: list[tuple[int, float]] = []
    with_pii = 0
    kinds: Counter[str] = Counter()
    for start in range(0, len(texts), BATCH):
        batch = texts[start : start + BATCH]
        began = time.perf_counter()
        spans = [spans_of(matches) for matches in analyzer.find_many(batch)]
        batches.append((len(batch), time.perf_counter() - began))
        with_pii += sum(1 for row in spans if row)
        kinds.update(span.kind for row in spans for span in row)
    seconds = sum(s for _, s in batches)
    low, high = _bootstrap_rate(batches)
    share_low, share_high = wilson(with_pii, len(texts))
    return {
        "chunks": len(texts),
        "seconds": round(seconds, 2),
        "chunks_per_s": round(len(texts) / seconds, 1),
        "chunks_per_s_ci95": [round(low, 1), round(high, 1)],
        "chars_per_s": round(sum(map(len, texts)) / seconds),
        "chunks_with_pii": with_pii,
        "share_with_pii": round(with_pii / len(texts), 4),
        "share_with_pii_ci95": [round(share_low, 4), round(share_high, 4)],
        "spans_by_kind": dict(sorted(kinds.items())),
    }


def measure_single(texts: list[str], analyzer: PiiAnalyzer) -> dict[str, Any]:
    """Milliseconds to analyse one chunk on its own (the request-time store's cost per chunk)."""
    times = []
    for text in texts[:SINGLE]:
        began = time.perf_counter()
        analyzer.find(text)
        times.append((time.perf_counter() - began) * 1e3)
    times.sort()
    return {
        "n": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
    }


def synthetic_recall(records: int, analyzer: PiiAnalyzer) -> dict[str, Any]:
    """Per-kind recall of the synthetic corpus's known PII values (by digest, within their record)."""
    corpus = make_synthetic_corpus(records, seed=0)
    assert corpus.pii is not None
    found = analyzer.find_many([document.text for document in corpus.documents])
    digests = {
        document.id: {span.digest for span in spans_of(matches)}
        for document, matches in zip(corpus.documents, found, strict=True)
    }
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for item in corpus.pii:
        kinds = [item.kind] + (["name_without_title"] if item.kind == "name" else [])
        for kind in kinds:
            value = _TITLE.sub("", item.value) if kind == "name_without_title" else item.value
            totals[kind] += 1
            hits[kind] += pii_digest(value) in digests[item.doc_id]
    result: dict[str, Any] = {"records": records}
    for kind in sorted(totals):
        low, high = wilson(hits[kind], totals[kind])
        result[kind] = {
            "found": hits[kind],
            "n": totals[kind],
            "recall": round(hits[kind] / totals[kind], 4),
            "ci95": [round(low, 4), round(high, 4)],
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"), help="folder with the JSONL files")
    parser.add_argument("--limit", type=int, default=400, help="chunks per corpus (random sample, seed 0)")
    parser.add_argument("--synthetic", type=int, default=500, help="synthetic records for the recall check")
    parser.add_argument("--out", default=str(RESULTS / "pii_index.json"))
    args = parser.parse_args()
    data = Path(args.data)
    if not (data / "healthcaremagic.jsonl").is_file():
        raise SystemExit(f"real data not found at {data}; pass --data (see tests/conftest.py)")
    if not ner_available():
        raise SystemExit("the 'ner' extra is not installed: pip install 'ragshield[ner]'")
    analyzers = {"patterns": PiiAnalyzer(ner=False), "patterns+ner": PiiAnalyzer(ner=True)}
    out: dict[str, Any] = {
        # the machine is shared: throughput scales with the CPU left over, so the load is recorded
        "cpus": os.cpu_count(),
        "load_average_1min_at_start": round(os.getloadavg()[0], 1),
        "limit": args.limit,
        "batch": BATCH,
        "recognizers": {name: list(analyzer.recognizers) for name, analyzer in analyzers.items()},
        "corpora": {},
    }
    for corpus_name in ("healthcaremagic", "enron"):
        corpus = load_corpus(f"{corpus_name}:{data / (corpus_name + '.jsonl')}")
        chunks = list(RecordChunker().split(corpus.documents))
        rng = random.Random(0)
        sample = rng.sample(chunks, min(args.limit, len(chunks)))
        texts = [chunk.text for chunk in sample]
        row: dict[str, Any] = {
            "chunks_in_corpus": len(chunks),
            "mean_chunk_chars": round(statistics.mean(map(len, texts))),
        }
        for name, analyzer in analyzers.items():
            row[name] = measure_pass(texts, analyzer)
            row[name]["single_chunk"] = measure_single(texts, analyzer)
        out["corpora"][corpus_name] = row
    out["load_average_1min_at_end"] = round(os.getloadavg()[0], 1)
    out["synthetic_recall"] = {name: synthetic_recall(args.synthetic, analyzer) for name, analyzer in analyzers.items()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(
        f"{'corpus':16} {'analyzer':13} {'n':>5} {'chunks/s (95% CI)':>22} {'kchars/s':>9} "
        f"{'1 chunk p50/p95 ms':>19} {'with PII (95% CI)':>22}"
    )
    for corpus_name, row in out["corpora"].items():
        for name in analyzers:
            r = row[name]
            ci = r["chunks_per_s_ci95"]
            share = r["share_with_pii_ci95"]
            single = r["single_chunk"]
            print(
                f"{corpus_name:16} {name:13} {r['chunks']:>5} {r['chunks_per_s']:>8} ({ci[0]}-{ci[1]}){'':>3} "
                f"{r['chars_per_s'] / 1e3:>9.1f} {single['p50_ms']:>9}/{single['p95_ms']:<9} "
                f"{r['share_with_pii']:.2f} ({share[0]:.2f}-{share[1]:.2f})"
            )
        print(f"{'':16} spans by kind (with NER): {row['patterns+ner']['spans_by_kind']}")
    print(
        f"{out['cpus']} CPUs, 1-min load average {out['load_average_1min_at_start']} at start, "
        f"{out['load_average_1min_at_end']} at end"
    )
    print(f"recall on {args.synthetic} synthetic records (known inventory), found/n (95% CI):")
    for name, recall in out["synthetic_recall"].items():
        cells = [
            f"{kind} {row['found']}/{row['n']} ({row['ci95'][0]:.3f}-{row['ci95'][1]:.3f})"
            for kind, row in recall.items()
            if kind != "records"
        ]
        print(f"  {name:13} " + "; ".join(cells))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
