"""CanaryRAG benchmark: matcher cost, oracle-path latency, false positives and detection on real data.

Sections (run all by default, or pick with --sections):

* matcher   - throughput (MB/s) and per-delta overhead (us) of the incremental matcher against a
              naive rescan of the accumulated output (exact substring, the approach of existing
              guards; and our normalising matcher rescanning everything) at 1 kB, 10 kB, 100 kB.
* latency   - end-to-end answer latency p50/p95 with the real SmolLM2 target: undefended,
              canary-rag without oracle, canary-rag with the oracle path (a second SmolLM2 instance,
              forced on, never halting the target early, so its full cost is paid), as ratios to
              the undefended answer measured in the same run, same queries, interleaved.
* fpr       - false-positive rate of canary-rag (default settings: the oracle self-check decides)
              on benign queries from ../shared/data with the real model, HealthcareMagic index.
* detection - detection rate on TGTB, PIDE and the adaptive suppression / obfuscation / deferred
              queries (`make_attack`) with the real model; plus a clearly labelled WORST CASE with
              FAKE models that comply perfectly (a target and an oracle that follow the query's
              instruction exactly), which shows what each path catches when the model does comply.
* placement - the first --placement-queries benign and TGTB queries again with another canary
              placement (--placement, default sentence-end), target path only, paired with the
              default (sentence-begin) rows of fpr / detection for the same queries.
* coverage  - share of random 100-, 200- and 400-character spans of real decorated Enron and
              HealthcareMagic chunks that contain a whole canary: the default density
              (per_chunk 2) against per_chunk auto (cover_chars 120); canaries per chunk and the
              characters they add. No model.
* likelihood - the likelihood oracle (teacher-forced, real SmolLM2) on HealthcareMagic and Enron
              (--lik-kbs, in run order): AUROC (bootstrap 95% CI) of its two violation scores for
              benign held-out-record and SAGE queries against suppression, obfuscation (base64,
              rot13, reversed, spaced) and deferred injection (the attack module's wordings and
              held-apart ones), and TPR at thresholds calibrated at 1% FPR on one benign half, FPR
              on the other (--lik-benign, --lik-family, --lik-passages). Resumable per scored query
              (--resume --progress runs/<file>.jsonl). Not in the default sections.
* likelihood-self-check - the likelihood oracle's self-check with the real SmolLM2 (what
              `oracle: likelihood` runs before it trusts the model). Not in the default sections.
* likelihood-latency - added p50 latency of the likelihood oracle against the undefended answer,
              interleaved in one run (--lik-latency queries). Not in the default sections.
* benign    - matcher false positives on real benign text (HealthcareMagic dialogues and Enron
              emails): hits per scanned character with fresh canaries, with and without the
              one-edit tolerance. No model.

Writes benchmarks/results/canary.json and docs/results/canary.md. Real-model sections keep a
resumable progress file (benchmarks/results/canary.progress.tmp); run with `nice`.

    nice -n 10 .venv/bin/python benchmarks/canary.py --benign 500 --attack-queries 50
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import canary_runtime
from canary_likelihood import bench_likelihood, bench_likelihood_latency, bench_likelihood_self_check
from canary_no_model import bench_benign, bench_coverage, bench_matcher
from canary_real_model import ATTACKS, bench_detection, bench_fpr, bench_latency, bench_placement
from canary_report import write_report
from canary_runtime import Progress
from canary_worst_case import bench_worst_case

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--index", type=Path, default=REPO / "runs" / "canary-bench" / "hcm-index")
    parser.add_argument("--sections", default="matcher,coverage,benign,latency,fpr,detection,worst-case")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help="attacks for the detection section")
    parser.add_argument("--benign", type=int, default=500, help="benign queries for the FPR")
    parser.add_argument("--attack-queries", type=int, default=50, help="queries per attack")
    parser.add_argument("--latency-queries", type=int, default=30)
    parser.add_argument("--worst-case-queries", type=int, default=40, help="queries per set with the FAKE models")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--oracle-max-tokens", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--placement", default="sentence-end", help="the other canary placement (placement section)")
    parser.add_argument("--placement-queries", type=int, default=100, help="benign and TGTB queries each")
    parser.add_argument("--coverage-chunks", type=int, default=2000, help="chunks per corpus (coverage section)")
    parser.add_argument("--benign-rounds", type=int, default=5, help="fresh canary sets (benign section)")
    parser.add_argument("--benign-canaries", type=int, default=30, help="canaries per set (benign section)")
    parser.add_argument("--note", action="append", default=[], help="a caveat to print in the report (repeatable)")
    parser.add_argument(
        "--threads", type=int, default=1, help="llama.cpp threads per model (1: target and oracle share 2 cores)"
    )
    parser.add_argument("--lik-benign", type=int, default=200, help="benign queries per KB (likelihood section)")
    parser.add_argument("--lik-family", type=int, default=50, help="queries per adaptive family per KB (likelihood)")
    parser.add_argument("--lik-latency", type=int, default=10, help="queries (likelihood-latency section)")
    # odd: benign sources and wording sources alternate by query index, and queries go to passages
    # round-robin, so an even count would give every passage a single source (source = passage effect)
    parser.add_argument("--lik-passages", type=int, default=21, help="decorated chunks per KB (likelihood section)")
    parser.add_argument(
        "--lik-kbs", default="healthcaremagic,enron", help="knowledge bases of the likelihood section, in run order"
    )
    parser.add_argument("--resume", action="store_true", help="keep finished real-model items")
    parser.add_argument("--progress", type=Path, default=None, help="progress file (default: beside --out)")
    parser.add_argument(
        "--finished-only", action="store_true", help="with --resume: report only finished real-model items"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "canary.json")
    parser.add_argument("--report", type=Path, default=REPO / "docs" / "results" / "canary.md")
    args = parser.parse_args(argv)
    canary_runtime.THREADS = args.threads
    sections = set(args.sections.split(","))
    needs_data = sections - {"matcher"}  # coverage and benign read the real corpora
    if needs_data and not (args.data / "healthcaremagic.jsonl").exists():
        print(f"real data not found at {args.data}; give --data (sections {sorted(needs_data)} skipped)")
        sections = sections & {"matcher"}
    progress = Progress(
        args.progress or args.out.with_suffix(".progress.tmp"), args.resume, finished_only=args.finished_only
    )
    previous = json.loads(args.out.read_text()) if args.resume and args.out.exists() else {}
    results: dict[str, Any] = {key: value for key, value in previous.items() if key not in {"command", "machine"}}
    given = list(argv if argv is not None else sys.argv[1:])
    shown = [arg for i, arg in enumerate(given) if arg != "--note" and (i == 0 or given[i - 1] != "--note")]
    results["command"] = "python benchmarks/canary.py " + " ".join(shown)  # notes are printed on their own
    results["machine"] = f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at start"
    results["notes"] = args.note or results.get("notes", [])
    if "matcher" in sections:
        results["matcher"] = bench_matcher(args.data, args.seed)
    if "coverage" in sections:
        results["coverage"] = bench_coverage(args.data, args.coverage_chunks, args.seed)
    if "benign" in sections:
        results["benign"] = bench_benign(args.data, args.benign_rounds, args.benign_canaries, args.seed)
    if "latency" in sections:
        results["latency"] = bench_latency(
            args.data, args.index, args.latency_queries, args.max_tokens, args.oracle_max_tokens, progress
        )
    if "fpr" in sections:
        results["fpr"] = bench_fpr(args.data, args.index, args.benign, args.max_tokens, progress)
    if "detection" in sections:
        results["detection"] = bench_detection(
            args.data,
            args.index,
            args.attack_queries,
            args.max_tokens,
            args.seed,
            progress,
            tuple(args.attacks.split(",")),
        )
    if "placement" in sections:
        results["placement"] = bench_placement(
            args.data, args.index, args.placement, args.placement_queries, args.max_tokens, args.seed, progress
        )
    if "likelihood" in sections:
        results["likelihood"] = bench_likelihood(
            args.data,
            args.lik_benign,
            args.lik_family,
            args.lik_passages,
            args.seed,
            progress,
            tuple(args.lik_kbs.split(",")),
        )
    if "likelihood-self-check" in sections:
        results["likelihood_self_check"] = bench_likelihood_self_check()
    if "likelihood-latency" in sections:
        results["likelihood_latency"] = bench_likelihood_latency(
            args.data, args.lik_latency, args.max_tokens, args.seed, progress
        )
    if "worst-case" in sections:
        results["worst_case"] = bench_worst_case(args.data, args.index, args.worst_case_queries, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    write_report(results, args.report)
    print(f"wrote {args.out} and {args.report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
