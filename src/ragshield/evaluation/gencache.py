"""A replay cache of deterministic generations, shared by the attack cells of one evaluation.

Many attack cells send byte-identical generation requests: TGTB and PIDE send the same
queries against every defense, and a query-time guard (RAG-CT, rule-based, erase-check) that
lets a query through leaves its prompt exactly as undefended. With greedy decoding
(temperature 0) or a fixed sampling seed, the target model's answer to an identical request
is the same, so `CachingGenerator` answers a repeated request from the cache instead of
running the model again. Requests that can differ (temperature > 0 without a seed) are never
cached. Canary-decorated prompts carry fresh random canaries, so they never repeat.

Replay is switched OFF for benign cells that must measure their latency (`enabled = False`;
their answers are still recorded). Attack cells report leakage, not latency.

A stream cut by the token limit ends with the `StreamEnd("length")` marker, which the cache
stores (`end`) and replays; entries written before it was stored replay as `stop`.

The cache persists as JSONL (`OUT/generation_cache.jsonl`: generated text, so it holds
knowledge-base text; never commit it) so a resumed run keeps its hits.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path

from ragshield.generators.base import Generator, StreamEnd
from ragshield.types import GenerationRequest

DELTA_CHARS = 16  # replayed text is streamed in small deltas, as the model would stream it


def request_key(generator_name: str, request: GenerationRequest) -> str | None:
    """A hash of everything that decides the generated text; None when it is not deterministic."""
    if request.temperature > 0 and request.seed is None:
        return None
    payload = {
        "generator": generator_name,
        "prompt": request.prompt,
        "messages": [[message.role, message.content] for message in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "seed": request.seed,
        "stop": list(request.stop),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class CachingGenerator:
    """Wraps a generator; replays deterministic requests seen before (see the module docstring).

    `enabled` switches replay (answers are recorded either way); `hits` / `misses` count
    replayed and generated requests while enabled.
    """

    def __init__(self, inner: Generator, path: str | Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.enabled = True
        self.hits = 0
        self.misses = 0
        self._path = Path(path) if path is not None else None
        self._store: dict[str, tuple[str, str]] = {}  # key -> (text, end reason: "" or e.g. "length")
        self._lock = threading.Lock()
        if self._path is not None and self._path.is_file():
            for line in self._path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                    self._store[str(row["key"])] = (str(row["text"]), str(row.get("end", "")))
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut by a crash: the request is simply generated again

    def __getattr__(self, name: str) -> object:
        # expose the wrapped generator's attributes (model_path, count_tokens, ...) to defenses
        return getattr(self.inner, name)

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        key = request_key(self.inner.name, request)
        if key is not None and self.enabled:
            with self._lock:
                cached = self._store.get(key)
            if cached is not None:
                self.hits += 1
                return _replay(*cached)
            self.misses += 1
        # generated answers are stored even while replay is off (a measured benign cell), so
        # later cells with identical requests can replay them
        return self._generate(request, key)

    def _generate(self, request: GenerationRequest, key: str | None) -> Iterator[str]:
        parts: list[str] = []
        end = ""
        for delta in self.inner.stream(request):
            if isinstance(delta, StreamEnd):
                end = delta.reason
            parts.append(delta)
            yield delta
        # only a stream that ran to its end is stored (a halted stream is not the model's full answer)
        if key is not None:
            self._save(key, "".join(parts), end)

    def _save(self, key: str, text: str, end: str) -> None:
        with self._lock:
            self._store[key] = (text, end)
            if self._path is not None:
                row = {"key": key, "text": text, **({"end": end} if end else {})}
                with self._path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _replay(text: str, end: str) -> Iterator[str]:
    """A stored answer in small deltas, as the model streamed it, with its end marker (if any)."""
    yield from (text[i : i + DELTA_CHARS] for i in range(0, len(text), DELTA_CHARS))
    if end:
        yield StreamEnd(end)
