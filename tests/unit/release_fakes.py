"""Fakes and shared helpers of the release-containment unit tests (unit tests only): one record and
one unrelated chunk as the retrieval, a fake retriever that always returns them, a scripted fake
generator behind `RagPipeline`, and a fake PII store holding the record's name and phone number.
"""

from __future__ import annotations

from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import Defense
from ragshield.guards.release.echo import ContextEchoGuard, EchoSettings
from ragshield.metrics.release import longest_copied_words as copied_words
from ragshield.pipeline import RagPipeline
from ragshield.types import Chunk, Query, RetrievalResult, ScoredChunk

RECORD = (
    "Patient John Smith, born 12/03/1961, lives at 42 Elm Street, Springfield. He reports chest pain "
    "radiating to the left arm since Tuesday and was prescribed aspirin 81 mg daily by Dr. Alice Moore."
)
OTHER = "The weather in the valley was mild, and the harvest of apples came early this year for most farms."
ALLOWANCE = 8


def retrieval(question: str = "What should I do about chest pain?", user: str = "alice") -> RetrievalResult:
    hits = (ScoredChunk(Chunk("c1", "d1", RECORD), 0.8, 0), ScoredChunk(Chunk("c2", "d2", OTHER), 0.5, 1))
    return RetrievalResult(Query(question, user_id=user), hits)


def guard(**changes: object) -> ContextEchoGuard:
    return ContextEchoGuard(settings=EchoSettings(unnatural=False, **changes))  # type: ignore[arg-type]


class FakeRetriever:
    """A fake retriever (unit tests only): always returns the same two chunks."""

    def __init__(self) -> None:
        self.index = None

    def retrieve(self, query: Query, k: int) -> RetrievalResult:
        return RetrievalResult(query, retrieval().hits)


def pipeline(reply: str, echo: ContextEchoGuard | None = None, delta_chars: int = 4) -> RagPipeline:
    defense = Defense(name="context-echo", output_guards=(echo or guard(),))
    return RagPipeline(FakeRetriever(), ScriptedGenerator([reply], delta_chars=delta_chars), defense=defense)  # type: ignore[arg-type]


def longest_copied_words(released: str, source: str = RECORD) -> int:
    return copied_words(released, source)


class FakePiiStore:
    """A fake PII store (unit tests only): the record's name and phone number."""

    source = "index"

    def values(self, chunk: Chunk) -> tuple[object, ...]:
        from ragshield.pii.store import PiiValue

        if chunk.id != "c1":
            return ()
        return (PiiValue("person", "John Smith", "d-name"), PiiValue("phone", "555-0142", "d-phone"))
