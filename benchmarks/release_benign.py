"""The benign and replay sections of `release.py`: what containment costs a benign user of the real
model (refusals, withheld text, utility against the undefended answer, latency), measured live and
with the undefended answers replayed through each defense."""

from __future__ import annotations

import random
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import flags_request
from ragshield.metrics.intervals import bootstrap_mean, rate_text
from ragshield.metrics.release import longest_copied_words
from ragshield.types import Query
from release_views import DEFENSES, shared_data_dir

REPO = Path(__file__).resolve().parents[1]
REPLAYED = ("context-echo", "canary-rag", "shield")


def _benign_setup(
    questions: int, seed: int, kb: str = "healthcaremagic", *, intent_unseen: bool = False
) -> tuple[Any, Any, Any, list[str]] | None:
    """A real index, its embedder and retriever, and held-out benign queries: HealthcareMagic (550
    dialogues indexed; held-out patients' questions) or Enron (the grids' split: 300 e-mails held out
    with seed 0, the rest indexed; a held-out e-mail's first 50 body words, as the grids ask). With
    `intent_unseen` (Enron), only the held-out e-mails in the intent model's test bucket, which it
    never trained or calibrated on (`intent_public.enron_test_bucket`)."""
    from ragshield.datasets.base import Corpus
    from ragshield.datasets.loaders import load_enron, load_healthcaremagic
    from ragshield.evaluation.workload import holdout_items, split_holdout
    from ragshield.rag.build import build_index
    from ragshield.rag.embedding import make_embedder
    from ragshield.rag.retriever import open_retriever

    path = shared_data_dir() / f"{kb}.jsonl"
    if not path.is_file():
        print(f"benign: ../shared/data/{kb}.jsonl is absent; section skipped", file=sys.stderr)
        return None
    embedder = make_embedder("all-MiniLM-L6-v2")
    folder = REPO / "runs" / f"release-benign-index-{kb}"
    if kb == "enron":
        kept, held = split_holdout(load_enron(str(path)), 300, seed=0)
        build_index(kept, embedder, folder, corpus_spec="enron:holdout-300")
        asked = [item.query.text for item in holdout_items(held)]
        if intent_unseen:
            import intent_public

            asked = [
                text
                for text, unseen in zip(asked, intent_public.enron_test_bucket(asked, shared_data_dir()), strict=True)
                if unseen
            ]
        asked = asked[:questions]
    else:
        corpus = load_healthcaremagic(str(path))
        indexed, held_out = corpus.documents[:550], corpus.documents[550:]
        build_index(Corpus("healthcaremagic", tuple(indexed)), embedder, folder, corpus_spec="healthcaremagic:550")
        asked = random.Random(seed).sample([doc.metadata["question"] for doc in held_out], questions)
    retriever, _ = open_retriever(folder, embedder)
    return folder, embedder, retriever, asked


def defense_time(timings: Mapping[str, float]) -> dict[str, float]:
    """One request's time in the defense (ms): every guard part (query guards, the output guards'
    open / observe / close, the policy) and decorator, and the generation stage's time (ms)."""
    spent = sum(value for key, value in timings.items() if key.startswith(("guard:", "decorate:")))
    return {"defense_ms": spent, "generate_ms": timings.get("generate", float("nan"))}


def _defense_share(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """The defense's added latency measured inside each request, which a loaded machine slows
    alike, instead of as a difference of p50s across runs: defense time / pure generation time,
    where pure generation is the generation stage less the defense time (the output guards run
    inside it; subtracting the query guards' time too overstates the share slightly)."""
    rows = [row for row in answers if row["generate_ms"] == row["generate_ms"] and row["generate_ms"] > 0]
    shares = [row["defense_ms"] / max(row["generate_ms"] - row["defense_ms"], 1e-9) for row in rows]
    return {
        "defense_ms_p50": statistics.median(row["defense_ms"] for row in rows) if rows else None,
        "generate_ms_p50": statistics.median(row["generate_ms"] for row in rows) if rows else None,
        "defense_share_median": statistics.median(shares) if shares else None,
        "defense_share_max": max(shares) if shares else None,
        "defense_share_n": len(shares),
        # per request, in question order (numbers only): what the median and the maximum come from
        "defense_ms_each": [round(row["defense_ms"], 3) for row in rows],
        "generate_ms_each": [round(row["generate_ms"], 3) for row in rows],
    }


def benign_section(
    questions: int, seed: int, kb: str = "healthcaremagic", *, intent_unseen: bool = False
) -> dict[str, Any]:
    """The real model answers held-out benign questions undefended and under each defense, interleaved
    per question: refusals, withheld text, utility against the undefended answer, latency and the
    defense's share of it, and how many record words the undefended answers copy."""
    from ragshield.config import SystemConfig
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.metrics.text import rouge_l
    from ragshield.metrics.utility import degenerate
    from ragshield.system import build_system

    setup = _benign_setup(questions, seed, kb, intent_unseen=intent_unseen)
    if setup is None:
        return {"skipped": "no data"}
    folder, embedder, retriever, asked = setup
    questions = len(asked)
    generator = LlamaCppGenerator(n_threads=1, repeat_penalty=1.15)
    systems = {
        name: build_system(
            SystemConfig(index=str(folder), defenses=[name], max_tokens=64), retriever=retriever, generator=generator
        )
        for name in DEFENSES
    }
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in DEFENSES}
    for number, question in enumerate(asked):
        for name in DEFENSES if number % 2 == 0 else DEFENSES[::-1]:  # interleaved, order alternating
            response = systems[name].answer(Query(question, user_id=f"patient-{number}"))
            hits = response.retrieval.hits if response.retrieval else ()
            rows[name].append(
                {
                    "text": response.text,
                    "finish": response.finish_reason,
                    "total_ms": response.timings_ms.get("total", float("nan")),
                    "withheld": response.timings_ms.get("withheld_chars", 0.0),
                    "flagged": any(flags_request(verdict) for verdict in response.verdicts),
                    **defense_time(response.timings_ms),
                    "copied_words": max((longest_copied_words(response.text, h.chunk.text) for h in hits), default=0),
                }
            )
        print(f"benign {number + 1}/{questions}", flush=True)
    baseline = rows["none"]
    vectors = {name: embedder.embed([row["text"] or " " for row in rows[name]]) for name in DEFENSES}
    out: dict[str, Any] = {"n": questions}
    for name in DEFENSES:
        answers = rows[name]
        cosine = [float(a @ b) for a, b in zip(vectors[name], vectors["none"], strict=True)]
        rouge = [rouge_l(b["text"], a["text"]).f1 for a, b in zip(answers, baseline, strict=True)]
        out[name] = {
            "refused": sum(row["finish"] in ("blocked", "refused") for row in answers),
            "redacted_answers": sum(row["withheld"] > 0 for row in answers),
            "withheld_chars_mean": statistics.fmean(row["withheld"] for row in answers),
            "cosine_vs_undefended_mean": statistics.fmean(cosine),
            "cosine_vs_undefended_ci": bootstrap_mean(cosine),
            "rouge_l_vs_undefended_mean": statistics.fmean(rouge),
            "rouge_l_vs_undefended_ci": bootstrap_mean(rouge),
            "degenerate": sum(degenerate(row["text"]) for row in answers),
            # a flagged request gets canaries under shield: its answers are the ones that differ most
            "flagged": sum(row["flagged"] for row in answers),
            "flagged_each": [row["flagged"] for row in answers],
            "cosine_each": [round(value, 4) for value in cosine],
            "p50_ms": statistics.median(row["total_ms"] for row in answers),
            **_defense_share(answers),
            "copied_words": [row["copied_words"] for row in answers],
        }
        row = out[name]
        print(
            f"{name:13s} refused {rate_text(row['refused'], questions)}, redacted "
            f"{rate_text(row['redacted_answers'], questions)}, withheld {row['withheld_chars_mean']:.1f} chars/answer, "
            f"cosine {mean_text(row, 'cosine')}, ROUGE-L {mean_text(row, 'rouge_l')}, "
            f"degenerate {rate_text(row['degenerate'], questions)}, p50 {row['p50_ms']:.0f} ms, "
            f"defense time / generation {share_text(row)}"
        )
    copied = out["none"]["copied_words"]
    for bound in (4, 8, 12, 20):
        print(
            f"undefended answers copying more than {bound} consecutive record words: "
            f"{rate_text(sum(c > bound for c in copied), len(copied))}"
        )
    return out


def mean_text(row: dict[str, Any], metric: str) -> str:
    """A mean against the undefended answer with its bootstrap interval, when the row has one."""
    low, high = row.get(f"{metric}_vs_undefended_ci", (float("nan"), float("nan")))
    interval = f" [{low:.3f}, {high:.3f}]" if low == low else ""
    return f"{row[f'{metric}_vs_undefended_mean']:.3f}{interval}"


def share_text(row: dict[str, Any]) -> str:
    """'0.01% (0.03%), n=20', or 'missing' for a run made before the defense time was recorded."""
    if row.get("defense_share_median") is None:
        return "missing"
    median, most = 100 * row["defense_share_median"], 100 * row["defense_share_max"]
    return f"{median:.2f}% ({most:.2f}%), n={row['defense_share_n']}"


def replay_section(questions: int, seed: int, kb: str = "healthcaremagic") -> dict[str, Any]:
    """Utility of containment without the model's nondeterminism: the real model answers each
    held-out question once, undefended; that same answer is then replayed (4-character deltas, as
    llama.cpp streams) through each defense's full pipeline. Whatever differs is what the defense did.
    Not captured: how canaries in the context change what the model would have written."""
    from ragshield.config import SystemConfig
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.metrics.text import rouge_l
    from ragshield.system import build_system

    setup = _benign_setup(questions, seed, kb)
    if setup is None:
        return {"skipped": "no data"}
    folder, embedder, retriever, asked = setup
    generator = LlamaCppGenerator(n_threads=1, repeat_penalty=1.15)
    undefended = build_system(
        SystemConfig(index=str(folder), defenses=["none"], max_tokens=64), retriever=retriever, generator=generator
    )
    recorded = []
    for number, question in enumerate(asked):
        recorded.append(undefended.answer(Query(question, user_id=f"patient-{number}")).text)
        print(f"replay: recorded {number + 1}/{questions}", flush=True)
    playing = [""]
    replay = ScriptedGenerator(lambda request: playing[0], delta_chars=4, name="replay")
    reference = embedder.embed([text or " " for text in recorded])
    out: dict[str, Any] = {"n": questions}
    for name in REPLAYED:
        system = build_system(
            SystemConfig(index=str(folder), defenses=[name], max_tokens=64), retriever=retriever, generator=replay
        )
        released = []
        refused = 0
        withheld = 0.0
        for number, (question, answer) in enumerate(zip(asked, recorded, strict=True)):
            playing[0] = answer
            response = system.answer(Query(question, user_id=f"patient-{number}"))
            refused += response.finish_reason in ("blocked", "refused")
            released.append(response.text)
            withheld += response.timings_ms.get("withheld_chars", 0.0)
        vectors = embedder.embed([text or " " for text in released])
        cosine = [float(a @ b) for a, b in zip(vectors, reference, strict=True)]
        rouge = [rouge_l(before, after).f1 for before, after in zip(recorded, released, strict=True)]
        changed = sum(before != after for before, after in zip(recorded, released, strict=True))
        out[name] = {
            "refused": refused,
            "changed_answers": changed,
            "withheld_chars_mean": withheld / questions,
            "cosine_mean": statistics.fmean(cosine),
            "cosine_at_least_0.9": sum(c >= 0.9 for c in cosine),
            "rouge_l_mean": statistics.fmean(rouge),
            "rouge_l_at_least_0.9": sum(r >= 0.9 for r in rouge),
        }
        row = out[name]
        print(
            f"{name:13s} refused {rate_text(refused, questions)}, changed {rate_text(changed, questions)}, "
            f"withheld {row['withheld_chars_mean']:.1f} chars/answer, cosine {row['cosine_mean']:.3f} "
            f"(>= 0.9: {rate_text(row['cosine_at_least_0.9'], questions)}), ROUGE-L {row['rouge_l_mean']:.3f} "
            f"(>= 0.9: {rate_text(row['rouge_l_at_least_0.9'], questions)})"
        )
    return out
