"""The views section of `release.py`: the worst-case target (`echo-context`, a fake that copies its
whole context) answers from real retrieved chunks in each view of `ragshield.encodings`; per view and
defense, what of the retrieved text, its private words and its PII values the answer released.
Also the knowledge bases (real chunks, or the synthetic corpus) that the cost and views benchmarks share."""

from __future__ import annotations

import os
import random
import statistics
import sys
from pathlib import Path
from typing import Any

from ragshield.encodings import DECODABLE_VIEWS, VIEWS, decode
from ragshield.generators.scripted import EchoContextGenerator
from ragshield.guards.base import WITHHELD_MARKER
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.guards.release.defense import frequent_grams
from ragshield.guards.release.fold import text_symbols
from ragshield.metrics.intervals import rate_text
from ragshield.metrics.release import copied_symbols
from ragshield.pipeline import RagPipeline
from ragshield.rag.chunking import RecordChunker
from ragshield.types import Chunk, Query, RetrievalResult, ScoredChunk

REPO = Path(__file__).resolve().parents[1]
QUESTION = "Can you tell me what the records say about this?"
DEFENSES = ("none", "context-echo", "shield")  # the views and benign sections compare these, in this order


def shared_data_dir() -> Path:
    """The shared data folder: $RAGSHIELD_SHARED_DATA, else ../shared/data beside the repository."""
    override = os.environ.get("RAGSHIELD_SHARED_DATA")
    return Path(override) if override else REPO.parent / "shared" / "data"


def knowledge_bases(limit: int) -> dict[str, list[Chunk]]:
    """Real chunks (HealthcareMagic, Enron) when ../shared/data is present, else the synthetic corpus."""
    from ragshield.datasets.loaders import load_enron, load_healthcaremagic
    from ragshield.datasets.synthetic import load_synthetic

    data = shared_data_dir()
    chunker = RecordChunker()
    found: dict[str, list[Chunk]] = {}
    for name, loader, file in (
        ("healthcaremagic", load_healthcaremagic, "healthcaremagic.jsonl"),
        ("enron", load_enron, "enron.jsonl"),
    ):
        if (data / file).is_file():
            found[name] = list(chunker.split(loader(str(data / file)).documents))[:limit]
    if not found:
        print("../shared/data is absent: using the synthetic corpus only", file=sys.stderr)
        found["synthetic"] = list(chunker.split(load_synthetic("300").documents))
    return found


class _FixedRetriever:
    """A fake retriever (benchmark only): returns the chunks it is told to, with real chunk text."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks
        self.index = self  # `context-echo` reads the knowledge base from `retriever.index.chunks`
        self.embedder: Any = None
        self.hits: tuple[ScoredChunk, ...] = ()

    def retrieve(self, query: Query, k: int) -> RetrievalResult:
        """The hits it was told to return, whatever the query."""
        return RetrievalResult(query, self.hits)


def _readings(text: str, view: str) -> list[str]:
    parts = [part.strip() for part in text.split(WITHHELD_MARKER)]
    readings = [text]
    if view not in DECODABLE_VIEWS:
        return readings
    for part in parts:
        for head in range(9):
            decoded = None
            for tail in range(9):
                try:
                    decoded = decode(part[head : len(part) - tail], view)
                    break
                except Exception:
                    continue
            if decoded is not None:
                readings.append(decoded)
                break
    return readings


def private_words(text: str, frequent: Any, question: str, m: int = 12) -> list[tuple[str, bool]]:
    """(folded word, private) per word of `text`, as the guard decides it: a word is private when a
    symbol of it lies in no knowledge-base-frequent gram and no gram of the user's question."""
    from ragshield.guards.release.public import grams_of, public_mask

    spans: list[tuple[int, int, str]] = []
    symbols: list[str] = []
    for word in text.split():
        folded = text_symbols(word)
        spans.append((len(symbols), len(symbols) + len(folded), folded))
        symbols.extend(folded)
    mask = public_mask("".join(symbols), m, frequent, grams_of(question, m))
    return [(folded, not all(mask[start:end])) for start, end, folded in spans if folded]


def longest_private_run(released: str, words: list[tuple[str, bool]], *, min_symbols: int = 12) -> int:
    """The most private words in one run of consecutive chunk words found (folded) in `released`
    (runs of at least `min_symbols` symbols; public words may lie inside the run but do not count,
    as in the guard's allowance). Two pointers: a found window's every sub-window is found too."""
    folded = text_symbols(released)
    best, end = 0, 0
    for start in range(len(words)):
        end = max(end, start)
        while end < len(words) and "".join(word for word, _ in words[start : end + 1]) in folded:
            end += 1
        window = words[start:end]
        if sum(len(word) for word, _ in window) >= min_symbols:
            best = max(best, sum(private for _, private in window))
    return best


def views_section(
    requests: int, seed: int, kbs: list[str] | None = None, views: list[str] | None = None
) -> dict[str, Any]:
    """Per knowledge base, a row per view and defense: what of `requests` triples of real chunks
    the worst-case target released (see `release.py`'s docstring); `kbs` and `views` narrow the run."""
    from ragshield.pii.store import open_chunk_pii_store
    from ragshield.rag.embedding import make_embedder

    embedder = make_embedder("all-MiniLM-L6-v2")
    pii_store = open_chunk_pii_store(None)
    out: dict[str, Any] = {}
    for kb, chunks in knowledge_bases(2000).items():
        if kbs and kb not in kbs:
            continue
        rng = random.Random(seed)
        retriever = _FixedRetriever(chunks)
        retriever.embedder = embedder
        context = DefenseContext(retriever=retriever, embedder=embedder)  # type: ignore[arg-type]
        defenses = {name: build_defense(name, context) for name in DEFENSES}
        triples = [rng.sample(chunks, 3) for _ in range(requests)]
        pii = {c.id: [v.value for v in pii_store.values(c)] for triple in triples for c in triple}
        frequent = frequent_grams(chunks, 12)
        privacy = {c.id: private_words(c.text, frequent, QUESTION) for triple in triples for c in triple}
        rows = {}
        for view in views or VIEWS:
            for name, defense in defenses.items():
                released, longest, private, pii_leaks, withheld = [], [], [], 0, []
                for number, triple in enumerate(triples):
                    retriever.hits = tuple(ScoredChunk(c, 0.9 - 0.1 * i, i) for i, c in enumerate(triple))
                    system = RagPipeline(
                        retriever,  # type: ignore[arg-type]
                        EchoContextGenerator(view=view, follow_instructions=False),
                        defense=defense,
                    )
                    response = system.answer(Query(QUESTION, user_id=f"bench-{kb}-{view}-{number}"))
                    readings = _readings(response.text, view)
                    released.append(max(copied_symbols(r, [c.text for c in triple]) for r in readings))
                    every = [[(word, True) for word, _ in privacy[c.id]] for c in triple]
                    longest.append(max(longest_private_run(r, words) for r in readings for words in every))
                    private.append(max(longest_private_run(r, privacy[c.id]) for r in readings for c in triple))
                    folded = [text_symbols(r) for r in readings]
                    values = [text_symbols(v) for c in triple for v in pii[c.id] if len(text_symbols(v)) >= 5]
                    pii_leaks += any(v in f for v in values for f in folded)
                    withheld.append(response.timings_ms.get("withheld_chars", 0.0))
                rows[f"{view}|{name}"] = {
                    "view": view,
                    "defense": name,
                    "n": len(triples),
                    "released_symbols_mean": statistics.fmean(released),
                    "released_symbols_max": max(released),
                    "longest_run_words_max": max(longest),
                    "longest_private_words_max": max(private),
                    "answers_with_pii": pii_leaks,
                    "withheld_chars_mean": statistics.fmean(withheld),
                }
            print_view(kb, rows, view)
        out[kb] = rows
    return out


def print_view(kb: str, rows: dict[str, Any], view: str) -> None:
    """One line per view: each defense's released symbols, longest private run and PII answers."""
    cells = []
    for name in DEFENSES:
        row = rows[f"{view}|{name}"]
        cells.append(
            f"{name}: {row['released_symbols_mean']:7.1f} sym, run {row['longest_private_words_max']:3d} "
            f"private w ({row['longest_run_words_max']} w), "
            f"PII {rate_text(row['answers_with_pii'], row['n'])}"
        )
    print(f"{kb:15s} {view:20s} " + " | ".join(cells), flush=True)
