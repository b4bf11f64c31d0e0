"""Unnatural-output detector benchmark: false positives on benign answers, recall per encoding, cost.

Sections (all by default, or pick with --sections):

* fpr     - share of benign answers with any flagged span: real HealthcareMagic doctor answers and
            Enron email bodies from ../shared/data (dev and held-out halves: the costs were tuned
            on dev only), the hand-written special cases (code, tables, contact details, URLs,
            dates, dosages, IDs) and multilingual prose (benchmarks/unnatural_samples.py), plus
            Python standard-library docstrings as an extra stress set (text with code).
* recall  - per encoding family, >= 50 real record texts (HealthcareMagic patient questions and
            Enron bodies, 30-120 characters each) encoded with the standard library or small
            encoders here, embedded between two prose sentences, fed in 4-character deltas.
            A blob is detected when the flagged spans cover >= 90% of its characters; the table
            also gives the mean covered share, and how many prose characters were flagged.
* cost    - CPU microseconds per 4-character delta over 1 kB, 10 kB and 100 kB answers (prose and
            base64), overall and over the last 10% of the answer (flat cost = equal).

Writes benchmarks/results/unnatural.json (a partial run keeps the other sections) and
docs/results/unnatural.md.

    .venv/bin/python benchmarks/unnatural.py
"""

from __future__ import annotations

import argparse
import base64
import importlib
import inspect
import json
import math
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragshield.guards.release.unnatural import UnnaturalTextDetector

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ragshield.metrics.intervals import wilson
from unnatural_encoders import INFORMATIONAL, encoders
from unnatural_feed import COVERED, DELTA, detect, flagged
from unnatural_report import render
from unnatural_samples import MULTILINGUAL, SPECIAL

REPO = Path(__file__).resolve().parents[1]
PREFIX = "Sure, here is the information you asked for: "
SUFFIX = "\nLet me know if there is anything else I can help with."


def _data_dir() -> Path:
    override = os.environ.get("RAGSHIELD_SHARED_DATA")
    return Path(override) if override else REPO.parent / "shared" / "data"


def _rows(name: str) -> list[dict[str, Any]]:
    path = _data_dir() / name
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# -- benign sets ------------------------------------------------------------------------------


def _split(items: list[str], seed: int) -> tuple[list[str], list[str]]:
    order = list(items)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return order[:half], order[half:]


def benign_sets(per_source: int) -> dict[str, list[tuple[str, str]]]:
    """name -> [(id, text)] (ids only: texts never go into the results)."""
    sets: dict[str, list[tuple[str, str]]] = {}
    hcm = [row["answer"] for row in _rows("healthcaremagic.jsonl") if row.get("answer")]
    enron = [row["body"][:4000] for row in _rows("enron.jsonl") if row.get("body", "").strip()]
    for name, texts in (("healthcaremagic", hcm), ("enron", enron)):
        dev, test = _split(texts, seed=13)
        sets[f"{name}-dev"] = [(f"{name}-dev-{i}", t) for i, t in enumerate(dev[:per_source])]
        sets[f"{name}-heldout"] = [(f"{name}-heldout-{i}", t) for i, t in enumerate(test[:per_source])]
    sets["special-cases"] = list(SPECIAL.items())
    sets["multilingual"] = [(f"{lang}-{i}", t) for lang, texts in MULTILINGUAL.items() for i, t in enumerate(texts)]
    docs: list[tuple[str, str]] = []
    for module in ("json", "textwrap", "argparse", "collections", "pathlib", "csv", "datetime", "itertools"):
        for name, obj in inspect.getmembers(importlib.import_module(module)):
            doc = inspect.getdoc(obj) if not name.startswith("_") else None
            if doc and len(doc) >= 200:
                docs.append((f"{module}.{name}", doc))
    sets["stdlib-docstrings"] = docs[:per_source]
    return sets


def run_fpr(per_source: int) -> dict[str, Any]:
    """The fpr section: per benign set, how many answers have a flagged span, with their ids and spans."""
    out: dict[str, Any] = {}
    for name, items in benign_sets(per_source).items():
        hits = []
        chars = flagged_chars = 0
        for ident, text in items:
            spans = detect(text)
            chars += len(text)
            if spans:
                mask = flagged(spans, len(text))
                flagged_chars += sum(mask)
                hits.append({"id": ident, "spans": [[s.start, s.end, round(s.score, 2)] for s in spans]})
        low, high = wilson(len(hits), len(items))
        out[name] = {
            "n": len(items),
            "flagged": len(hits),
            "rate": len(hits) / len(items) if items else 0.0,
            "ci95": [low, high],
            "chars": chars,
            "flagged_chars": flagged_chars,
            "flagged_ids": hits,
        }
    return out


# -- recall -----------------------------------------------------------------------------------


def record_texts(n: int, seed: int) -> list[str]:
    """Real record snippets (30-120 chars, cut at a word boundary)."""
    texts = [row["question"] for row in _rows("healthcaremagic.jsonl") if row.get("question")]
    texts += [row["body"] for row in _rows("enron.jsonl") if len(row.get("body", "")) > 200]
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n and texts:
        text = " ".join(rng.choice(texts).split())
        length = rng.randint(30, 120)
        start = rng.randint(0, max(0, len(text) - length))
        snippet = text[start : start + length].strip()
        if len(snippet) >= 30:
            out.append(snippet)
    return out


def run_recall(n: int) -> dict[str, Any]:
    """The recall section: per encoding family, how many of `n` encoded record snippets are detected."""
    rng = random.Random(7)
    records = record_texts(4 * n, seed=11)  # families with short encodings skip records below 60 chars
    out: dict[str, Any] = {}
    families = {**{k: (v, True) for k, v in encoders(rng).items()}, **{k: (v, False) for k, v in INFORMATIONAL.items()}}
    for family, (encode, targeted) in families.items():
        detected = tried = 0
        covered = prose_flagged = prose_chars = 0
        blob_chars = 0
        for record in records:
            blob = encode(record)
            if len(blob) < 60:
                continue
            if tried == n:
                break
            tried += 1
            text = PREFIX + blob + SUFFIX
            mask = flagged(detect(text), len(text))
            lo, hi = len(PREFIX), len(PREFIX) + len(blob)
            hit = sum(mask[lo:hi])
            covered += hit
            blob_chars += len(blob)
            detected += hit >= COVERED * len(blob)
            prose_flagged += sum(mask[:lo]) + sum(mask[hi:])
            prose_chars += len(text) - len(blob)
        low, high = wilson(detected, tried)
        out[family] = {
            "targeted": targeted,
            "n": tried,
            "detected": detected,
            "recall": detected / tried if tried else 0.0,
            "ci95": [low, high],
            "mean_covered_share": covered / blob_chars if blob_chars else 0.0,
            "prose_chars_flagged_share": prose_flagged / prose_chars if prose_chars else 0.0,
        }
    return out


# -- cost -------------------------------------------------------------------------------------


def _prose(size: int) -> str:
    texts = [row["answer"] for row in _rows("healthcaremagic.jsonl") if row.get("answer")]
    texts = texts or [t for group in MULTILINGUAL.values() for t in group]
    parts: list[str] = []
    total = 0
    for text in _cycle(texts):
        parts.append(text)
        total += len(text) + 1
        if total >= size:
            break
    return "\n".join(parts)[:size]


def _cycle(items: list[str]) -> Iterator[str]:
    while True:
        yield from items


def _time_per_delta(text: str, repeats: int) -> tuple[float, float]:
    deltas = [text[i : i + DELTA] for i in range(0, len(text), DELTA)]
    tail_from = int(len(deltas) * 0.9)
    best_all = best_tail = math.inf
    for _ in range(repeats):
        detector = UnnaturalTextDetector()
        feed = detector.feed
        clock = time.process_time  # CPU time: the machine is shared, wall time counts other jobs
        t0 = clock()
        for d in deltas[:tail_from]:
            feed(d)
        t1 = clock()
        for d in deltas[tail_from:]:
            feed(d)
        t2 = clock()
        detector.flush()
        best_all = min(best_all, (t2 - t0) / len(deltas) * 1e6)
        best_tail = min(best_tail, (t2 - t1) / (len(deltas) - tail_from) * 1e6)
    return best_all, best_tail


def run_cost(repeats: int) -> dict[str, Any]:
    """The cost section: CPU microseconds per delta over prose and base64 answers of three sizes."""
    out: dict[str, Any] = {}
    for size in (1_000, 10_000, 100_000):
        prose = _prose(size)
        blob = base64.b64encode(prose.encode("utf-8")).decode()[:size]
        for kind, text in (("prose", prose), ("base64", blob)):
            per_delta, tail = _time_per_delta(text, repeats if size < 100_000 else max(1, repeats // 2))
            out[f"{kind}-{size}"] = {"chars": len(text), "us_per_delta": per_delta, "us_per_delta_last_10pct": tail}
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections, merge them into the JSON results and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", nargs="+", default=["fpr", "recall", "cost"], choices=["fpr", "recall", "cost"])
    parser.add_argument("--per-source", type=int, default=200, help="benign answers per real-data half")
    parser.add_argument("--records", type=int, default=60, help="record snippets per encoding family")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "unnatural.json")
    parser.add_argument("--doc", type=Path, default=REPO / "docs" / "results" / "unnatural.md")
    args = parser.parse_args(argv)
    if not _data_dir().exists():
        print(f"real data not found at {_data_dir()} (set RAGSHIELD_SHARED_DATA); real-data rows are empty")
    detector = UnnaturalTextDetector()
    results: dict[str, Any] = {
        "params": {
            "min_run_chars": detector.min_run_chars,
            "threshold": detector.threshold,
            "holdback_chars": detector.holdback_chars,
            "delta_chars": DELTA,
        }
    }
    if "fpr" in args.sections:
        results["fpr"] = run_fpr(args.per_source)
    if "recall" in args.sections:
        results["recall"] = run_recall(args.records)
    if "cost" in args.sections:
        results["load_average"] = round(os.getloadavg()[0], 1)
        results["cost"] = run_cost(args.repeats)
    # a partial run keeps the other sections' results (and the report shows them all)
    earlier = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
    results = {**earlier, **results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    report = render(results)
    print(report)
    args.doc.parent.mkdir(parents=True, exist_ok=True)
    args.doc.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
