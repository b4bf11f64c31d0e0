"""FAKE parts for the fast hardening tests: a hashing-embedder retriever, slow and llama-like
models, a keyword query guard and a holdback-only output guard. Also runnable as a server
(`python fakes.py SPEC.json PORT`) for tests that need a separate process (a crash, SIGTERM)."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragshield.generators.base import GenerationRequest
from ragshield.guards.base import AllowAllMonitor, Defense
from ragshield.guards.policy import SlidingWindowPolicy, make_store
from ragshield.pipeline import RagPipeline
from ragshield.types import Action, RetrievalResult, Verdict


def fake_retriever() -> Any:
    """Hashing embedder over 40 synthetic records, numpy index (as the `fake_retriever` fixture)."""
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.rag.chunking import RecordChunker
    from ragshield.rag.embedding import HashingEmbedder
    from ragshield.rag.index import NumpyIndex
    from ragshield.rag.retriever import Retriever

    embedder = HashingEmbedder()
    chunks = list(RecordChunker().split(make_synthetic_corpus(40, seed=1).documents))
    index = NumpyIndex(embedder.dimension)
    index.add(chunks, embedder.embed([chunk.text for chunk in chunks]))
    return Retriever(embedder, index)


class SlowWords:
    """FAKE model: `words` words, one every `delay_s` seconds."""

    name = "slow-fake"

    def __init__(self, words: int = 20, delay_s: float = 0.01) -> None:
        self.words = words
        self.delay_s = delay_s

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        for _ in range(self.words):
            time.sleep(self.delay_s)
            yield "word "


class FakeLlama:
    """FAKE llama_cpp.Llama: one token every `delay_s` seconds; counts generations started and
    tokens produced, and whether a generation is running now."""

    def __init__(self, tokens: int = 500, delay_s: float = 0.02) -> None:
        self.tokens = tokens
        self.delay_s = delay_s
        self.started = 0
        self.produced = 0
        self.active = 0
        self._lock = threading.Lock()

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = True) -> list[int]:
        return list(range(len(text.split()) + 1))

    def detokenize(self, tokens: list[int]) -> bytes:
        return b"x " * len(tokens)

    def reset(self) -> None:
        """The real model drops its prompt cache here; the fake has none."""

    def create_chat_completion(self, messages: Any, **settings: Any) -> Iterator[dict[str, Any]]:
        with self._lock:
            self.started += 1
            self.active += 1
        try:
            for _ in range(self.tokens):
                time.sleep(self.delay_s)
                with self._lock:
                    self.produced += 1
                yield {"choices": [{"delta": {"content": "tok "}, "finish_reason": None}]}
        finally:
            with self._lock:
                self.active -= 1


class KeywordGuard:
    """FAKE query guard: blocks queries that contain `word` (an "integrity violation")."""

    name = "keyword-fake"

    def __init__(self, word: str = "EXTRACT") -> None:
        self.word = word

    def check(self, retrieval: RetrievalResult) -> Verdict:
        hit = self.word in retrieval.query.text
        return Verdict(self.name, Action.BLOCK if hit else Action.ALLOW, float(hit), 1.0, "keyword")


class HoldbackGuard:
    """FAKE output guard that never blocks but withholds `holdback_chars` (like the canary
    monitor), so the pipeline releases text only after that many characters."""

    name = "holdback-fake"

    def __init__(self, holdback_chars: int = 400) -> None:
        self.holdback_chars = holdback_chars

    def open(self, retrieval: RetrievalResult) -> AllowAllMonitor:
        return AllowAllMonitor(self.name, holdback_chars=self.holdback_chars)


def fake_pipeline(
    generator: Any,
    *,
    query_guards: tuple[Any, ...] = (),
    output_guards: tuple[Any, ...] = (),
    decorators: tuple[Any, ...] = (),
    store: str | None = None,
    k: int = 3,
    retriever: Any = None,
) -> RagPipeline:
    """A pipeline over the fake retriever; `store` adds a blocking policy (window 10, `k` violations)."""
    policy = SlidingWindowPolicy(make_store(store), window=10, k=k) if store else None
    defense = Defense(name="fakes", query_guards=query_guards, output_guards=output_guards, decorators=decorators)
    return RagPipeline(retriever or fake_retriever(), generator, defense=defense, policy=policy)


def canary_pipeline(generator: Any, *, store: str | None = None) -> RagPipeline:
    """The real canary-rag defense (oracle off) over the fake retriever; `store` adds a policy."""
    from ragshield.integrations.shield import Shield

    shield = Shield.build("canary-rag", params={"canary-rag": {"oracle": "off"}})
    policy = SlidingWindowPolicy(make_store(store), window=10, k=3) if store else None
    return RagPipeline(fake_retriever(), generator, defense=shield.defense, policy=policy)


def main() -> None:
    """`python fakes.py SPEC.json PORT`: serve a fake pipeline with `run_server` (as `ragshield serve`).

    SPEC: {"serve": {ServeConfig fields}, "words": N, "delay_s": S, "canary": bool}.
    """
    from ragshield.service.app import create_app
    from ragshield.service.settings import ServeConfig

    try:
        from ragshield.service.server import run_server
    except ImportError:  # an older ragshield (the regression tests run against it too): plain uvicorn

        def run_server(app: Any, *, host: str, port: int, log_level: str = "info") -> None:
            import uvicorn

            uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)

    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    generator = SlowWords(int(spec.get("words", 20)), float(spec.get("delay_s", 0.01)))
    pipeline = canary_pipeline(generator) if spec.get("canary") else fake_pipeline(generator)
    app = create_app(ServeConfig.model_validate(spec["serve"]), pipeline=pipeline, warm_up=False)
    run_server(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")


if __name__ == "__main__":
    main()
