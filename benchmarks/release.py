"""Release containment benchmark (issue 13): the worst-case target per view, and the guard's cost.

Sections (all by default, or pick with --sections):

* views - the labelled worst-case target (`echo-context`, a fake that copies its whole context)
          answers from real retrieved chunks (HealthcareMagic and Enron from ../shared/data, three
          chunks per request, or the synthetic corpus when the data is absent), writing its copy in
          each of the 46 views of `ragshield.encodings`. Per view and defense (`none`,
          `context-echo`, `shield`): released characters of retrieved text per answer (folded
          symbols in copied runs of >= 12, read as released and decoded in the view), the longest
          released run of a chunk in words (the allowance is 8), and the answers that released a
          retrieved PII value (found at request time by the project's analyzer) the user did not give.
* benign - the real SmolLM2-135M (chat layout, repetition penalty, 64-token answers) over a
          MiniLM + FAISS index of 550 HealthcareMagic dialogues, answering held-out patients'
          questions (records 551-850) undefended and under `context-echo` and `shield`, interleaved
          per question: refusals, withheld characters per answer, utility against the undefended
          answer (embedding cosine, ROUGE-L F), degenerate answers, p50 latency ratio, and how many
          words of a retrieved record the undefended answers copy (the data behind the allowance).
* replay - utility without the model's nondeterminism: the real model answers held-out questions
          once, undefended, and each answer is replayed through `context-echo`, `canary-rag` and
          `shield`: refusals, changed answers, withheld characters, embedding cosine and ROUGE-L F
          against the undefended answer (mean, and the share at >= 0.9).
* cost  - CPU microseconds per 4-character delta of `context-echo` (with and without the
          unnatural-output detector) over 1 kB, 10 kB and 100 kB answers of prose, and the
          per-request setup (`open`) time. With `--baseline REV` the code of git revision REV and
          the working tree are measured alternately in fresh interpreters, in one run.

Writes benchmarks/results/release.json and prints tables.

    .venv/bin/python benchmarks/release.py [--sections views cost] [--requests 10]
    .venv/bin/python benchmarks/release.py --sections cost --baseline main --rounds 3 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

from ragshield.encodings import VIEWS
from ragshield.guards.release.echo import ContextEchoGuard, EchoSettings
from ragshield.types import Chunk, Query, RetrievalResult, ScoredChunk
from release_benign import benign_section, replay_section
from release_report import REPORT, REPORT_HEADER, hand_written_notes, report
from release_views import views_section
from revisions import revision_src, run_worker

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "release.json"


def measure_cost(repeats: int) -> dict[str, Any]:
    """CPU microseconds per 4-character delta of the code on `sys.path`: the median and the lowest
    over at least `repeats` answers per size (more for short answers: at least 25,000 deltas)."""
    chunks = [
        Chunk("c1", "d1", "Patient John Smith, born 12/03/1961, lives at 42 Elm Street, Springfield. " * 6),
        Chunk("c2", "d2", "The weather in the valley was mild, and the harvest of apples came early. " * 6),
        Chunk("c3", "d3", "Please find attached the revised schedule for the pipeline maintenance. " * 6),
    ]
    retrieval = RetrievalResult(
        Query("What should I do about chest pain?"), tuple(ScoredChunk(c, 0.5, 0) for c in chunks)
    )
    vocabulary = (
        "the patient should rest and drink water if the pain or fever persists see your doctor who may "
        "consider tests of blood pressure heart and lungs take 400 mg twice daily with food"
    )
    words = vocabulary.split()
    rng = random.Random(0)
    prose = " ".join(rng.choice(words) for _ in range(30000))
    # clinical notes full of measurements: every piece near a digit takes the digit track's slower
    # path, and two short tokens with digits in a row go to the base-N decoders (they look like bytes)
    measured = " ".join(
        f"{rng.choice(words)} {rng.randint(1, 400)}/{rng.randint(40, 120)} {rng.randint(1, 99)}mg" for _ in range(3000)
    )
    texts = {**{f"{size}": prose[:size] for size in (1_000, 10_000, 100_000)}, "numbers|10000": measured[:10_000]}
    out: dict[str, Any] = {}
    for unnatural in (False, True):
        guard = ContextEchoGuard(settings=EchoSettings(unnatural=unnatural))
        started = time.process_time()
        for _ in range(20):
            guard.open(retrieval)
        open_ms = (time.process_time() - started) / 20 * 1e3
        for name, text in texts.items():
            deltas = [text[i : i + 4] for i in range(0, len(text), 4)]
            samples = []
            answers = max(repeats, -(-25_000 // len(deltas)))
            for _ in range(answers):
                monitor = guard.open(retrieval)
                started = time.process_time()
                for delta in deltas:
                    monitor.observe(delta)
                monitor.close()
                samples.append((time.process_time() - started) / len(deltas) * 1e6)
            key = f"{'echo+unnatural' if unnatural else 'echo'}|{name}"
            out[key] = {
                "us_per_delta_median": statistics.median(samples),
                "us_per_delta_min": min(samples),
                "repeats": answers,
                "deltas": len(deltas),
                "open_ms": open_ms,
            }
    return out


def _measure_in(src: Path, repeats: int) -> dict[str, Any]:
    """`measure_cost` in a fresh interpreter that imports ragshield from `src`."""
    measured: dict[str, Any] = run_worker(__file__, src, ["--cost-json", "--repeats", str(repeats)], timeout=1800)
    return measured


def cost_section(repeats: int, baseline: str | None = None, rounds: int = 3) -> dict[str, Any]:
    """The cost per delta; with `baseline` (a git revision), that revision's code and the working
    tree are measured alternately, `rounds` times each in fresh interpreters, on the same machine in
    one run (the machine is shared: alternating keeps the comparison fair); each figure is the
    lowest over all rounds and answers, with the lowest of the rounds' medians beside it."""
    if baseline is None:
        single = measure_cost(repeats)
        for key, row in single.items():
            median, opened = row["us_per_delta_median"], row["open_ms"]
            print(f"{key:22s} {median:6.2f} us/delta (median of {repeats}), open {opened:.2f} ms")
        return single
    load_before = os.getloadavg()[0]
    with revision_src(baseline) as (commit, baseline_src):
        runs: dict[str, list[dict[str, Any]]] = {"baseline": [], "current": []}
        for number in range(rounds):
            for label, src in (("baseline", baseline_src), ("current", REPO / "src")):
                runs[label].append(_measure_in(src, repeats))
                print(f"cost: round {number + 1}/{rounds} {label} done", flush=True)
    out: dict[str, Any] = {}
    for key, row in runs["current"][0].items():
        # the lowest over all rounds and answers: interference on a shared machine only adds time
        current = min(run[key]["us_per_delta_min"] for run in runs["current"])
        before = min(run[key]["us_per_delta_min"] for run in runs["baseline"])
        out[key] = {
            **row,
            "us_per_delta_median": min(run[key]["us_per_delta_median"] for run in runs["current"]),
            "us_per_delta_min": current,
            "baseline": commit,
            "baseline_us_per_delta": before,
            "baseline_us_per_delta_median": min(run[key]["us_per_delta_median"] for run in runs["baseline"]),
            "ratio": current / before,
            "rounds": rounds,
            "open_ms": min(run[key]["open_ms"] for run in runs["current"]),
            "baseline_open_ms": min(run[key]["open_ms"] for run in runs["baseline"]),
            "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        }
        print(
            f"{key:22s} {before:6.2f} -> {current:6.2f} us/delta ({current / before:.2f}x; lowest of {rounds} rounds x "
            f"{row['repeats']} answers), open {out[key]['baseline_open_ms']:.2f} -> {out[key]['open_ms']:.2f} ms"
        )
    return out


def main() -> None:
    """Run the chosen sections, merge their results into benchmarks/results/release.json, and with
    `--report` write docs/results/release.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sections = ["views", "cost", "benign", "replay"]
    parser.add_argument("--sections", nargs="*", default=["views", "cost"], choices=sections)
    parser.add_argument("--questions", type=int, default=30, help="benign questions (section benign)")
    parser.add_argument(
        "--kb", default="healthcaremagic", choices=["healthcaremagic", "enron"], help="sections benign and replay"
    )
    parser.add_argument(
        "--intent-unseen",
        action="store_true",
        help="section benign, Enron: only held-out e-mails in the intent model's test bucket",
    )
    parser.add_argument("--kbs", nargs="*", help="knowledge bases of the views section (default: all found)")
    parser.add_argument("--views", nargs="*", choices=VIEWS, help="views of the views section (default: all)")
    parser.add_argument("--report", action="store_true", help="also write docs/results/release.md")
    parser.add_argument("--requests", type=int, default=10, help="requests per view and knowledge base")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", help="section cost: also measure this git revision, alternating (e.g. main)")
    parser.add_argument("--rounds", type=int, default=3, help="section cost with --baseline: rounds per side")
    parser.add_argument("--cost-json", action="store_true", help=argparse.SUPPRESS)  # worker of --baseline
    args = parser.parse_args()
    if args.cost_json:
        print(json.dumps(measure_cost(args.repeats)))
        return
    measured: dict[str, Any] = {}
    if "cost" in args.sections:
        measured["cost"] = cost_section(args.repeats, args.baseline, args.rounds)
    if "views" in args.sections:
        measured["views"] = views_section(args.requests, args.seed, args.kbs, args.views)
    if "benign" in args.sections:
        key = "benign" if args.kb == "healthcaremagic" else f"benign_{args.kb}"
        if args.intent_unseen:
            if args.kb != "enron":
                parser.error("--intent-unseen applies to --kb enron")
            key += "_intent_unseen"
        measured[key] = benign_section(args.questions, args.seed, args.kb, intent_unseen=args.intent_unseen)
    if "replay" in args.sections:
        key = "replay" if args.kb == "healthcaremagic" else f"replay_{args.kb}"
        measured[key] = replay_section(args.questions, args.seed, args.kb)
    # read late: sections run as separate processes must not drop each other's results
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    if "views" in measured and "views" in results:  # a partial views run keeps the other rows
        measured["views"] = {
            kb: {**results["views"].get(kb, {}), **measured["views"].get(kb, {})}
            for kb in {**results["views"], **measured["views"]}
        }
    results.update(measured)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    if args.report:
        REPORT.write_text(REPORT_HEADER + hand_written_notes() + report(results))
        print(f"wrote {REPORT.relative_to(REPO)}")
    print(f"wrote {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
