"""Degenerate (looping) answers of the user-facing commands, before and after the chat settings.

`ragshield ask`, `serve` and `demo` used to answer with the TGTB completion layout, greedy
decoding, no repetition penalty and no stop sequences, and SmolLM2-135M then loops
("The answer to this question is: The answer to this question is: ..."). They now use the chat
layout (system prompt, `CHAT_STOP` stop sequences) and `repeat_penalty` 1.15. This benchmark
answers benign questions with both settings, interleaved (same question, same retrieval, order
alternating per question), with the real models (MiniLM index, SmolLM2-135M through llama.cpp),
and reports per setting:

* the share of degenerate answers (`ragshield.metrics.utility.degenerate`), with n and the
  Wilson 95% interval;
* empty answers, answers cut by the token limit, mean answer length (words), ROUGE-L F1
  against the doctor's reference answer, and p50 / p95 latency of the whole answer.

Questions: held-out HealthcareMagic patients (../shared/data, `RAGSHIELD_SHARED_DATA`): the corpus
is split as `configs/healthcaremagic.yaml` does (300 dialogues held out, seed 0; the other 550
are indexed), and the held-out patients' questions are the benign set: the first `--questions`
(50) are REPORTED, the next `--tuning` (20) are the TUNING set on which the settings' variants
(`--variants`) are compared. Settings are chosen on the tuning set only. Without the shared data
the synthetic corpus's dialogues stand in, and the output says so.

Nothing from the data is written: the JSON holds question ids, flags, lengths and timings (no
question or answer text). A resumable progress file keeps finished answers
(benchmarks/results/degenerate.progress.tmp).

    nice -n 10 .venv/bin/python benchmarks/degenerate.py --sections tune,report
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from ragshield.config import USER_REPEAT_PENALTY
from ragshield.metrics.cost import percentile
from ragshield.metrics.intervals import wilson
from ragshield.metrics.text import rouge_l
from ragshield.metrics.utility import degenerate
from ragshield.rag.prompting import CHAT_STOP

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
HOLDOUT = 300  # as configs/healthcaremagic.yaml: 550 of the 850 dialogues indexed
SYNTHETIC_RECORDS = 850
DEFAULT_MAX_TOKENS = 64  # the evaluation grids' answer budget; longer answers: --max-tokens (own set label)


@dataclass(frozen=True)
class Setting:
    """One way of answering: prompt layout, stop sequences (None: the layout's) and penalty."""

    layout: str
    repeat_penalty: float
    stop: tuple[str, ...] | None = None
    note: str = ""

    def describe(self) -> str:
        from ragshield.rag.prompting import PromptBuilder

        stops = PromptBuilder(layout=self.layout, stop=self.stop).stop_sequences
        named = "`CHAT_STOP`" if stops == CHAT_STOP else (repr(list(stops)) if stops else "no stops")
        return f"{self.layout} layout, repeat_penalty {self.repeat_penalty:g}, {named}"


OLD = Setting("tgtb", 1.0, note="before: the TGTB completion layout, greedy, no penalty, no stops")
NEW = Setting("chat", USER_REPEAT_PENALTY, note="after: the user-facing defaults of SystemConfig")
#: what the tuning set compares (the reported set runs only `old` and `new`)
VARIANTS: dict[str, Setting] = {
    "old": OLD,
    "new": NEW,
    "chat-no-penalty": Setting("chat", 1.0, note="chat layout and stops alone"),
    "chat-no-stops": Setting("chat", USER_REPEAT_PENALTY, stop=(), note="penalty without stops"),
    "chat-1.3": Setting("chat", 1.3, note="a stronger penalty"),
    "tgtb-1.15": Setting("tgtb", USER_REPEAT_PENALTY, note="penalty on the old layout"),
}


def shared_data_dir() -> Path:
    override = os.environ.get("RAGSHIELD_SHARED_DATA")
    return Path(override) if override else REPO.parent / "shared" / "data"


class Progress:
    """Finished answers (one JSON line each), so an interrupted run resumes where it stopped."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        self.path = path
        self.done: dict[str, dict[str, Any]] = {}
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            if lines and json.loads(lines[0]).get("settings") == settings:
                for line in lines[1:]:
                    row = json.loads(line)
                    self.done[row["key"]] = row
            else:
                path.unlink()
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")

    def record(self, row: dict[str, Any]) -> None:
        self.done[row["key"]] = row
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(row) + "\n")


def question_sets(data: Path, reported: int, tuning: int, seed: int) -> tuple[Any, list[Any], list[Any], str]:
    """(corpus to index, reported items, tuning items, source description)."""
    from ragshield.datasets.base import load_corpus
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.evaluation.workload import holdout_items, split_holdout

    source_file = data / "healthcaremagic.jsonl"
    if source_file.exists():
        corpus = load_corpus(f"healthcaremagic:{source_file}")
        total = len(corpus.documents)
        source = f"held-out HealthcareMagic patients ({HOLDOUT} of {total} dialogues held out, seed {seed})"
    else:
        print(f"shared data not found at {data}: using the SYNTHETIC corpus's dialogues instead", flush=True)
        corpus = make_synthetic_corpus(SYNTHETIC_RECORDS, seed=seed)
        source = f"SYNTHETIC corpus dialogues (shared data absent; {HOLDOUT} of {SYNTHETIC_RECORDS} held out)"
    kept, held = split_holdout(corpus, HOLDOUT, seed=seed)
    items = holdout_items(held)
    if len(items) < reported + tuning:
        raise SystemExit(f"only {len(items)} held-out questions; need {reported + tuning}")
    return kept, items[:reported], items[reported : reported + tuning], source


def build_pipelines(kept: Any, index_dir: Path, names: list[str], args: argparse.Namespace) -> tuple[dict, str]:
    """One pipeline per setting over one shared retriever; one generator per penalty."""
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.pipeline import RagPipeline
    from ragshield.rag.build import build_index
    from ragshield.rag.embedding import SentenceTransformerEmbedder
    from ragshield.rag.prompting import PromptBuilder
    from ragshield.rag.retriever import open_retriever

    embedder = SentenceTransformerEmbedder()
    manifest, _ = build_index(kept, embedder, index_dir, corpus_spec=kept.name)  # reused when unchanged
    retriever, _ = open_retriever(index_dir, embedder)
    generators: dict[float, LlamaCppGenerator] = {}
    pipelines = {}
    for name in names:
        setting = VARIANTS[name]
        if setting.repeat_penalty not in generators:
            generators[setting.repeat_penalty] = LlamaCppGenerator(
                n_threads=args.threads, repeat_penalty=setting.repeat_penalty
            )
        builder = PromptBuilder(layout=setting.layout, max_tokens=args.max_tokens, stop=setting.stop, seed=args.seed)
        pipelines[name] = RagPipeline(retriever, generators[setting.repeat_penalty], prompt_builder=builder, k=args.k)
    return pipelines, f"{manifest.count} chunks, {manifest.embedder}"


def answer_rows(
    label: str, items: list[Any], names: list[str], pipelines: dict, progress: Progress, first: int = 0
) -> None:
    """Answer every item with every setting, interleaved (the order rotates per question)."""
    from ragshield.types import Query

    for number, item in enumerate(items, start=first):
        order = names[number % len(names) :] + names[: number % len(names)]
        for name in order:
            key = f"{label}:{name}:{item.query.id}"
            if key in progress.done:
                continue
            started = time.perf_counter()
            response = pipelines[name].answer(Query(item.query.text, user_id="bench", id=item.query.id))
            wall_ms = (time.perf_counter() - started) * 1000.0
            text = response.text
            row = {
                "key": key,
                "set": label,
                "setting": name,
                "id": item.query.id,
                "degenerate": degenerate(text),
                "empty": not text.strip(),
                "words": len(text.split()),
                "chars": len(text),
                "finish_reason": response.finish_reason,
                "rouge_l": rouge_l(item.reference, text).f1 if item.reference and text.strip() else 0.0,
                "latency_ms": float(response.timings_ms.get("total", wall_ms)),
            }
            progress.record(row)
            print(
                f"{label} {number + 1}/{len(items)} {name}: degenerate={row['degenerate']} words={row['words']} "
                f"{row['latency_ms']:.0f} ms",
                flush=True,
            )


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    flagged = sum(row["degenerate"] for row in rows)
    low, high = wilson(flagged, n)
    latencies = [row["latency_ms"] for row in rows]
    return {
        "n": n,
        "degenerate": flagged,
        "degenerate_share": flagged / n if n else float("nan"),
        "degenerate_ci95": [low, high],
        "empty": sum(row["empty"] for row in rows),
        "cut_by_length": sum(row["finish_reason"] == "length" for row in rows),
        "mean_words": statistics.fmean(row["words"] for row in rows) if rows else float("nan"),
        "mean_rouge_l": statistics.fmean(row["rouge_l"] for row in rows) if rows else float("nan"),
        "latency_p50_ms": percentile(latencies, 0.5),
        "latency_p95_ms": percentile(latencies, 0.95),
    }


def paired(rows: list[dict[str, Any]], before: str, after: str) -> dict[str, int]:
    """Per question: loops fixed (old degenerate, new not) and loops introduced (the reverse)."""
    by_id: dict[str, dict[str, bool]] = {}
    for row in rows:
        by_id.setdefault(row["id"], {})[row["setting"]] = row["degenerate"]
    both = [flags for flags in by_id.values() if before in flags and after in flags]
    return {
        "questions": len(both),
        "fixed": sum(flags[before] and not flags[after] for flags in both),
        "introduced": sum(flags[after] and not flags[before] for flags in both),
    }


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}%"


def table(summary: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| setting | n | degenerate | share (95% CI) | empty | cut by limit | mean words | ROUGE-L | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summary.items():
        low, high = s["degenerate_ci95"]
        lines.append(
            f"| {name} | {s['n']} | {s['degenerate']} | {_pct(s['degenerate_share'])} ({_pct(low)}-{_pct(high)}) | "
            f"{s['empty']} | {s['cut_by_length']} | {s['mean_words']:.1f} | {s['mean_rouge_l']:.3f} | "
            f"{s['latency_p50_ms']:.0f} | {s['latency_p95_ms']:.0f} |"
        )
    return lines


def write_markdown(path: Path, results: dict[str, Any]) -> None:
    meta = results["settings"]
    lines = [
        "# Degenerate answers: user-facing settings before and after",
        "",
        "Generated by `benchmarks/degenerate.py` (JSON: `benchmarks/results/degenerate.json`).",
        "",
        f"- Questions: {results['source']}; reported set {meta['questions']} questions, separate tuning set "
        f"{meta['tuning']} questions (settings are compared on the tuning set only).",
        f"- System: {results['index']} index, k={meta['k']}, SmolLM2-135M-Instruct (Q4, llama.cpp, "
        f"{meta['threads'] or 'default'} thread(s)), greedy, no defense; answer budget per set below.",
        "- Degenerate (`ragshield.metrics.utility.degenerate`): some word 4-gram occurs 3+ times, or the second "
        "half of the answer repeats a run of its first half of at least 8 words and half its own length.",
        "- Rates with n and the Wilson 95% interval; latency is the whole answer (retrieval + generation), "
        "interleaved per question, on a shared 2-core machine.",
        "",
        "Settings:",
        "",
    ]
    used = {name for block in results["sets"].values() for name in block["summary"]}
    for name in (name for name in VARIANTS if name in used):
        setting = VARIANTS[name]
        lines.append(f"- `{name}`: {setting.describe()} ({setting.note})")
    lines.append(f"- chat stop sequences (`CHAT_STOP`): {', '.join(repr(s) for s in CHAT_STOP)}")
    for label in sorted(results["sets"], key=lambda name: (not name.startswith("report"), name)):
        block = results["sets"][label]
        title = "Reported set" if label.startswith("report") else "Tuning set"
        heading = f"## {title} ({block['questions']} questions, max_tokens={block['max_tokens']})"
        lines += ["", heading, "", *([block["note"], ""] if block.get("note") else []), *table(block["summary"])]
        if block.get("paired", {}).get("questions"):
            pair = block["paired"]
            lines.append("")
            lines.append(
                f"Paired per question (old -> new, {pair['questions']} questions): {pair['fixed']} loops fixed, "
                f"{pair['introduced']} introduced."
            )
    lines += ["", "## Reading", "", *results.get("reading", ["(not written yet)"]), ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sections", default="tune,report", help="tune, report or both (comma-separated); render: markdown only"
    )
    parser.add_argument("--questions", type=int, default=50, help="reported questions")
    parser.add_argument("--tuning", type=int, default=20, help="tuning questions (disjoint from the reported)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="settings compared on the tuning set")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: llama.cpp's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--slice", default=None, help="START:END: answer only these questions of each set (parallel workers)"
    )
    parser.add_argument("--data", type=Path, default=shared_data_dir())
    parser.add_argument("--work", type=Path, default=REPO / "runs" / "degenerate")
    parser.add_argument("--out", type=Path, default=RESULTS / "degenerate.json")
    parser.add_argument("--markdown", type=Path, default=REPO / "docs" / "results" / "degenerate.md")
    args = parser.parse_args()
    sections = args.sections.split(",")
    if sections == ["render"]:  # only rewrite the markdown from the JSON (e.g. after editing its reading)
        write_markdown(args.markdown, json.loads(args.out.read_text()))
        return
    variants = [name for name in args.variants.split(",") if name]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; known: {sorted(VARIANTS)}")

    kept, reported, tuning, source = question_sets(args.data, args.questions, args.tuning, args.seed)
    settings = {
        "questions": args.questions,
        "tuning": args.tuning,
        "max_tokens": args.max_tokens,
        "k": args.k,
        "threads": args.threads,
        "seed": args.seed,
        "source": source,
        "chat_stop": list(CHAT_STOP),
        "user_repeat_penalty": USER_REPEAT_PENALTY,
    }
    suffix = "" if args.max_tokens == DEFAULT_MAX_TOKENS else f".{args.max_tokens}"
    progress = Progress(RESULTS / f"degenerate.progress{suffix}.tmp", settings)
    tuned = sorted(set(variants), key=list(VARIANTS).index)
    names = sorted({*tuned, "old", "new"} if "report" in sections else set(tuned), key=list(VARIANTS).index)
    pipelines, index = build_pipelines(kept, args.work / "index", names, args)
    label_suffix = "" if args.max_tokens == DEFAULT_MAX_TOKENS else f"-{args.max_tokens}tok"
    plan = []
    if "tune" in sections:
        plan.append((f"tuning{label_suffix}", tuning, tuned))
    if "report" in sections:
        plan.append((f"report{label_suffix}", reported, ["old", "new"]))
    start, end = (int(part) if part else None for part in args.slice.split(":")) if args.slice else (None, None)
    for label, items, chosen in plan:
        answer_rows(label, items[start:end], chosen, pipelines, progress, first=start or 0)
    if args.slice:  # a worker: the run without --slice writes the summary from the progress file
        return

    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    results: dict[str, Any] = {
        "settings": settings,
        "source": source,
        "index": index,
        "sets": previous.get("sets", {}),  # each set says its own answer budget
        "reading": previous.get("reading", []),
    }
    for label, items, chosen in plan:
        rows = [row for row in progress.done.values() if row["set"] == label]
        block: dict[str, Any] = {
            "questions": len(items),
            "max_tokens": args.max_tokens,
            "summary": {name: summarise([r for r in rows if r["setting"] == name]) for name in chosen},
            "paired": paired(rows, "old", "new"),
            "rows": sorted(
                ({k: v for k, v in r.items() if k not in ("key", "set")} for r in rows),
                key=lambda r: (r["id"], r["setting"]),
            ),
        }
        results["sets"][label] = block
        print(f"\n{label} set ({len(items)} questions)")
        print("\n".join(table(block["summary"])))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    write_markdown(args.markdown, results)
    print(f"\nwrote {args.out} and {args.markdown}", file=sys.stderr)


if __name__ == "__main__":
    main()
