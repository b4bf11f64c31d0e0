"""Garbage-collector pauses inside the guards, with and without the service's frozen warm-up.

    PYTHONPATH=src python benchmarks/gc_pauses.py [--requests 40]

Builds `shield` over the HealthcareMagic index of `benchmarks/release.py --sections benign`
(`runs/release-benign-index`; run that once first) with a scripted generator (a labelled FAKE:
the guards' time is what is measured, not the model's), answers held-out questions, and records
each request's defense time (ms: every guard part and decorator) and the time Python's full
(generation-2) collections took during it. Twice, each in a fresh interpreter: as a library user
gets it, and after the service's warm-up (`ragshield.service.app._warm_up`, as `warm_guards` and
`freeze_warmed_heap`: one guard pass on a warm-up record, then `gc.collect(); gc.freeze()`).
Writes benchmarks/results/gc_pauses.json and prints a table.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from release_benign import defense_time  # one definition of a request's time in the defense

REPO = Path(__file__).resolve().parent.parent
INDEX = REPO / "runs" / "release-benign-index"
OUT = REPO / "benchmarks" / "results" / "gc_pauses.json"
DATA = REPO.parent / "shared" / "data" / "healthcaremagic.jsonl"


def measure(requests: int, frozen: bool) -> dict[str, Any]:
    from ragshield.config import SystemConfig
    from ragshield.datasets.loaders import load_healthcaremagic
    from ragshield.generators.scripted import ScriptedGenerator
    from ragshield.integrations.shield import Shield
    from ragshield.rag.embedding import make_embedder
    from ragshield.rag.retriever import open_retriever
    from ragshield.service.app import freeze_warmed_heap, warm_guards
    from ragshield.system import build_system
    from ragshield.types import Query

    full_gc_s = [0.0]
    started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            full_gc_s[0] += time.perf_counter() - started[0]

    gc.callbacks.append(on_gc)
    embedder = make_embedder("all-MiniLM-L6-v2")
    retriever, _ = open_retriever(INDEX, embedder)
    questions = [d.metadata["question"] for d in load_healthcaremagic(str(DATA)).documents[550:]][:requests]
    generator = ScriptedGenerator(["The usual advice is rest, fluids and a check-up if it persists. " * 4])
    config = SystemConfig(index=str(INDEX), defenses=["shield"], max_tokens=64)
    system = build_system(config, retriever=retriever, generator=generator)
    if frozen:
        warm_guards(Shield(system.defense))
        freeze_warmed_heap()
    defense_ms, gc_ms = [], []
    for number, question in enumerate(questions):
        before = full_gc_s[0]
        response = system.answer(Query(question, user_id=f"patient-{number}"))
        defense_ms.append(defense_time(response.timings_ms)["defense_ms"])
        gc_ms.append((full_gc_s[0] - before) * 1000.0)
    return {
        "requests": len(defense_ms),
        "defense_ms_p50": statistics.median(defense_ms),
        "defense_ms_max": max(defense_ms),
        "requests_over_100_ms": sum(ms > 100 for ms in defense_ms),
        "full_gc_ms_total": sum(gc_ms),
        "full_gc_ms_max": max(gc_ms),
        "defense_ms_each": [round(ms, 3) for ms in defense_ms],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--worker", choices=("plain", "frozen"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(args.requests, args.worker == "frozen")))
        return
    if not INDEX.is_dir() or not DATA.is_file():
        sys.exit("gc_pauses: run `benchmarks/release.py --sections benign` first (it builds the index)")
    results: dict[str, Any] = {}
    for mode in ("plain", "frozen"):  # each in a fresh interpreter: the heap is what is measured
        command = [sys.executable, __file__, "--worker", mode, "--requests", str(args.requests)]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    print("| heap | requests | defense ms p50 | max | requests > 100 ms | full-GC ms, total / largest |")
    print("|---|---|---|---|---|---|")
    for mode, row in results.items():
        print(
            f"| {mode} | {row['requests']} | {row['defense_ms_p50']:.1f} | {row['defense_ms_max']:.1f} | "
            f"{row['requests_over_100_ms']} | {row['full_gc_ms_total']:.0f} / {row['full_gc_ms_max']:.0f} |"
        )
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
