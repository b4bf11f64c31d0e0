"""What the real-model sections of the CanaryRAG benchmark share: the resumable progress file,
the llama.cpp thread count (`THREADS`, which `benchmarks/canary.py`'s `main` sets from --threads;
read it as `canary_runtime.THREADS`), and the real canary-rag system they answer with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragshield.types import Response, iter_jsonl


class Progress:
    """Append-only JSONL of finished items, so an interrupted run resumes where it stopped."""

    def __init__(self, path: Path, resume: bool, *, finished_only: bool = False) -> None:
        self.path = path
        self.finished_only = finished_only
        self.done: dict[str, dict[str, Any]] = {}
        if resume and path.exists():
            for row in iter_jsonl(path):
                self.done[row["key"]] = row
        elif path.exists():
            path.unlink()

    def limit(self, prefix: str, n: int) -> int:
        """`n`, or with `finished_only` the number of items 0, 1, ... already finished (at most `n`)."""
        if not self.finished_only:
            return n
        count = 0
        while count < n and f"{prefix}:{count}" in self.done:
            count += 1
        return count

    def record(self, key: str, row: dict[str, Any]) -> dict[str, Any]:
        row = {"key": key, **row}
        self.done[key] = row
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        return row


THREADS: int | None = None  # llama.cpp threads per model instance (--threads)


def real_system(data: Path, index_dir: Path, max_tokens: int) -> tuple[Any, Any, Any]:
    from ragshield.datasets.base import load_corpus
    from ragshield.generators.llama_cpp import LlamaCppGenerator
    from ragshield.rag.build import build_index
    from ragshield.rag.embedding import SentenceTransformerEmbedder
    from ragshield.rag.prompting import PromptBuilder
    from ragshield.rag.retriever import open_retriever

    embedder = SentenceTransformerEmbedder()
    corpus = load_corpus(f"healthcaremagic:{data / 'healthcaremagic.jsonl'}")
    build_index(corpus, embedder, index_dir, corpus_spec="healthcaremagic")  # reused when unchanged
    retriever, _ = open_retriever(index_dir, embedder)
    return retriever, LlamaCppGenerator(n_threads=THREADS), PromptBuilder(max_tokens=max_tokens)


def canary_system(data: Path, index_dir: Path, max_tokens: int, params: dict | None = None) -> tuple[Any, Any]:
    """The real system behind canary-rag (the models load here): (pipeline, its canary guard)."""
    from ragshield.guards.factory import DefenseContext, build_defense
    from ragshield.pipeline import RagPipeline

    retriever, target, builder = real_system(data, index_dir, max_tokens)
    defense = build_defense("canary-rag", DefenseContext(generator=target), {"canary-rag": params or {}})
    pipeline = RagPipeline(retriever, target, defense=defense, prompt_builder=builder, k=3)
    return pipeline, defense.output_guards[0]


def canary_verdict(response: Response) -> Any:
    return next((v for v in reversed(response.verdicts) if v.guard == "canary-rag"), None)
