"""CanaryRAG benchmark sections that need no model: `matcher` (cost of the incremental matcher
against naive rescans), `coverage` (share of copied spans holding a whole canary) and `benign`
(matcher false positives on real benign text). Run them through `benchmarks/canary.py`."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragshield.guards.canary import CanaryMatcher, CanaryMonitor, new_canaries
from ragshield.metrics.intervals import wilson
from ragshield.types import iter_jsonl

SIZES = (1_000, 10_000, 100_000)


# -- matcher ---------------------------------------------------------------------------------


def _benign_text(data: Path, size: int) -> str:
    source = data / "healthcaremagic.jsonl"
    if source.exists():
        parts = [f"{row['question']} {row['answer']}" for row in iter_jsonl(source)]
    else:  # synthetic English-like text when the shared data is absent
        from ragshield.datasets.synthetic import make_synthetic_corpus

        parts = [doc.text for doc in make_synthetic_corpus(400, seed=0).documents]
    text = " ".join(parts)
    while len(text) < size:
        text += " " + text
    return text[:size]


def _deltas(text: str, rng: random.Random) -> list[str]:
    """Token-sized pieces (1-8 characters, mean 4.5) as a model streams them."""
    out, start = [], 0
    while start < len(text):
        step = rng.randint(1, 8)
        out.append(text[start : start + step])
        start += step
    return out


def _best_of(repeats: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(repeats))


def _scan_seconds(matcher: CanaryMatcher, deltas: list[str]) -> float:
    """Seconds one streaming scanner of `matcher` takes over `deltas`."""
    scanner = matcher.scanner()
    started = time.perf_counter()
    for delta in deltas:
        scanner.feed(delta)
    scanner.flush()
    return time.perf_counter() - started


def bench_matcher(data: Path, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    canaries = new_canaries(6)  # k = 3 chunks x 2 canaries, the default
    matcher = CanaryMatcher(canaries)
    exact_matcher = CanaryMatcher(canaries, one_edit=False)  # A/B: the cost of the one-edit tolerance
    rows = []
    for size in SIZES:
        text = _benign_text(data, size)
        deltas = _deltas(text, rng)
        megabytes = len(text.encode("utf-8")) / 1e6

        def incremental(deltas: list[str] = deltas) -> float:
            return _scan_seconds(matcher, deltas)

        def exact_only(deltas: list[str] = deltas) -> float:
            return _scan_seconds(exact_matcher, deltas)

        def monitor(deltas: list[str] = deltas) -> float:
            watcher = CanaryMonitor({"chunk": canaries}, oracle_status="off")
            started = time.perf_counter()
            for delta in deltas:
                watcher.observe(delta)
            watcher.close()
            return time.perf_counter() - started

        def one_shot(text: str = text) -> float:
            started = time.perf_counter()
            matcher.find(text)
            return time.perf_counter() - started

        def naive_exact(deltas: list[str] = deltas) -> float:
            accumulated = ""
            started = time.perf_counter()
            for delta in deltas:
                accumulated += delta
                any(canary in accumulated for canary in canaries)
            return time.perf_counter() - started

        # rescanning with the normalising matcher is quadratic: at 100 kB time every 25th delta
        stride = 1 if size <= 10_000 else 25
        prefixes = []
        accumulated = ""
        for index, delta in enumerate(deltas):
            accumulated += delta
            if index % stride == 0:
                prefixes.append(accumulated)

        def naive_normalised(prefixes: list[str] = prefixes) -> float:
            started = time.perf_counter()
            for prefix in prefixes:
                matcher.find(prefix)
            return time.perf_counter() - started

        repeats = 3
        ours = _best_of(repeats, incremental)
        exact_ours = _best_of(repeats, exact_only)
        watched = _best_of(repeats, monitor)
        shot = _best_of(repeats, one_shot)
        exact = _best_of(repeats, naive_exact)
        normalised_sampled = _best_of(1 if size > 10_000 else repeats, naive_normalised)
        normalised_per_delta = normalised_sampled / len(prefixes)
        rows.append(
            {
                "output_chars": size,
                "deltas": len(deltas),
                "incremental_total_ms": round(ours * 1e3, 3),
                "incremental_MB_per_s": round(megabytes / ours, 2),
                "incremental_us_per_delta": round(ours / len(deltas) * 1e6, 2),
                "exact_only_us_per_delta": round(exact_ours / len(deltas) * 1e6, 2),
                "monitor_us_per_delta": round(watched / len(deltas) * 1e6, 2),
                "monitor_MB_per_s": round(megabytes / watched, 2),
                "one_shot_find_MB_per_s": round(megabytes / shot, 2),
                "naive_exact_rescan_us_per_delta": round(exact / len(deltas) * 1e6, 2),
                "naive_exact_rescan_total_ms": round(exact * 1e3, 3),
                "naive_normalised_rescan_us_per_delta": round(normalised_per_delta * 1e6, 2),
                "naive_normalised_rescan_total_ms_estimated": round(normalised_per_delta * len(deltas) * 1e3, 1),
                "naive_normalised_sampling_stride": stride,
            }
        )
        print(f"matcher {size:>7} chars: {rows[-1]}", flush=True)
    return {"canaries": len(canaries), "delta_chars": "uniform 1-8", "rows": rows}


# -- coverage and benign hits (no model) -----------------------------------------------------

SPAN_LENGTHS = (100, 200, 400)
COVER_CHARS = 120


def sample_chunks(data: Path, name: str, n: int, seed: int) -> list[str]:
    """`n` chunk texts of a real corpus (one chunk per record, as the grids index them), sampled."""
    from ragshield.datasets.base import load_corpus
    from ragshield.rag.chunking import RecordChunker

    corpus = load_corpus(f"{name}:{data / f'{name}.jsonl'}")
    texts = [chunk.text for chunk in RecordChunker().split(corpus.documents)]
    rng = random.Random(seed)
    return rng.sample(texts, min(n, len(texts)))


def _holds_canary(span: str, canaries: tuple[str, ...]) -> bool:
    return any(canary in span for canary in canaries)


def bench_coverage(data: Path, n: int, seed: int) -> dict[str, Any]:
    """One random span per chunk and span length (spans of one chunk would be correlated), for the
    default density and for `auto`; chunks shorter than a span length are counted apart."""
    from ragshield.guards.canary import CanaryInjector

    settings = {"per_chunk 2": CanaryInjector(), "auto": CanaryInjector(per_chunk="auto", cover_chars=COVER_CHARS)}
    out: dict[str, Any] = {"cover_chars": COVER_CHARS, "chunks_per_corpus": n, "rows": []}
    for corpus in ("enron", "healthcaremagic"):
        texts = sample_chunks(data, corpus, n, seed)
        for setting, injector in settings.items():
            rng = random.Random(seed)
            counts = {length: [0, 0] for length in SPAN_LENGTHS}  # length -> [with a canary, spans]
            canaries_per_chunk, added, original = [], 0, 0
            for text in texts:
                decorated, canaries = injector.decorate_text(text)
                canaries_per_chunk.append(len(canaries))
                added += len(decorated) - len(text)
                original += len(text)
                for length in SPAN_LENGTHS:
                    if len(decorated) < length:
                        continue
                    start = rng.randrange(len(decorated) - length + 1)
                    counts[length][1] += 1
                    counts[length][0] += _holds_canary(decorated[start : start + length], canaries)
            for length, (hits, total) in counts.items():
                low, high = wilson(hits, total)
                row = {
                    "corpus": corpus,
                    "setting": setting,
                    "span_chars": length,
                    "spans": total,
                    "with_canary": hits,
                    "share": round(hits / total, 4) if total else None,
                    "share_95ci": [round(low, 4), round(high, 4)],
                    "chunks_shorter_than_span": len(texts) - total,
                    "canaries_per_chunk_mean": round(statistics.mean(canaries_per_chunk), 2),
                    "added_chars_share": round(added / max(1, original), 4),
                    "median_chunk_chars": int(statistics.median(len(text) for text in texts)),
                }
                out["rows"].append(row)
                print(f"coverage {corpus} {setting} {length}: {hits}/{total}", flush=True)
    return out


def bench_benign(data: Path, rounds: int, canaries_per_round: int, seed: int) -> dict[str, Any]:
    """Hits of fresh canaries in real benign text (none are there): every hit is a false positive."""
    texts = sample_chunks(data, "healthcaremagic", 4000, seed) + sample_chunks(data, "enron", 4000, seed)
    text = "\n".join(texts)
    rng = random.Random(seed)
    out: dict[str, Any] = {"chars": len(text), "rounds": rounds, "canaries_per_round": canaries_per_round}
    for one_edit in (False, True):
        hits: list[str] = []
        started = time.perf_counter()
        for _ in range(rounds):
            matcher = CanaryMatcher(new_canaries(canaries_per_round), one_edit=one_edit)
            scanner = matcher.scanner()
            for delta in _deltas(text[: len(text) // 10], rng):  # a tenth streamed in token-sized deltas
                hits += [hit.form for hit in scanner.feed(delta)]
            hits += [hit.form for hit in scanner.flush()]
            hits += [hit.form for hit in matcher.find(text[len(text) // 10 :])]
        elapsed = time.perf_counter() - started
        scanned = rounds * len(text)
        low, high = wilson(len(hits), scanned)
        key = "one_edit" if one_edit else "exact_only"
        out[key] = {
            "hits": len(hits),
            "forms": sorted(set(hits)),
            "scanned_chars": scanned,
            "hits_per_char": len(hits) / scanned,
            "hits_per_char_95ci": [low, high],
            "hits_per_1kB_answer_95ci_high": high * 1000,
            "MB_per_s": round(scanned / 1e6 / elapsed, 2),
        }
        print(f"benign one_edit={one_edit}: {out[key]}", flush=True)
    return out
