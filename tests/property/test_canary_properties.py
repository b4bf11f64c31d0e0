"""Properties of CanaryRAG through RagPipeline.stream (hypothesis), with FAKE parts: a hashing-embedder
retriever over synthetic records and a generator that streams a given text in given deltas.

* for any surrounding text, any supported form and any split into deltas, no character of the
  canary's form reaches the client, the stream halts, and the verdict names the leaked chunk;
* benign text without canaries is never flagged and reaches the client unchanged;
* with several chunks leaked in different forms, every leaked chunk (and no other) is named.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragshield.guards.base import Defense
from ragshield.guards.canary import CanaryGuard, CanaryInjector, CanaryMatcher
from ragshield.guards.canary.forms import FORMS, obfuscate
from ragshield.rag.pipeline import RagPipeline
from ragshield.rag.retriever import Retriever
from ragshield.types import GenerationRequest, Query, Response, RetrievalResult

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@lru_cache(maxsize=1)
def _retriever() -> Retriever:
    """FAKE retrieval stack (hashing embedder, numpy index) over 30 synthetic records."""
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.rag.chunking import RecordChunker
    from ragshield.rag.embedding import HashingEmbedder
    from ragshield.rag.index import NumpyIndex

    embedder = HashingEmbedder()
    chunks = list(RecordChunker().split(make_synthetic_corpus(30, seed=2).documents))
    index = NumpyIndex(embedder.dimension)
    index.add(chunks, embedder.embed([chunk.text for chunk in chunks]))
    return Retriever(embedder, index)


@dataclass
class RecordingInjector(CanaryInjector):
    """The real injector, remembering the last decorated retrieval so the fake model can quote it."""

    last: list[RetrievalResult] = field(default_factory=list)

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        decorated = super().decorate(retrieval)
        self.last[:] = [decorated]
        return decorated


@dataclass
class SplitGenerator:
    """FAKE target: writes `compose(markers)` and streams it cut at the given positions."""

    injector: RecordingInjector
    compose: Callable[[RetrievalResult], str]
    cuts: list[int]
    name: str = "split-fake"
    written: list[str] = field(default_factory=list)

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        text = self.compose(self.injector.last[0])
        self.written[:] = [text]
        points = sorted({cut % (len(text) + 1) for cut in self.cuts} | {0, len(text)})
        for start, end in itertools.pairwise(points):
            yield text[start:end]


def _run(
    compose: Callable[[RetrievalResult], str], cuts: list[int], query: str = "tell me about the chest pain record"
) -> tuple[str, Response, str]:
    injector = RecordingInjector()
    generator = SplitGenerator(injector, compose, cuts)
    defense = Defense(name="canary-rag", decorators=(injector,), output_guards=(CanaryGuard(),))
    pipeline = RagPipeline(_retriever(), generator, defense=defense, k=3)
    released: list[str] = []
    response: Response | None = None
    for item in pipeline.stream(query):
        if isinstance(item, Response):
            response = item
        else:
            released.append(item)
    assert response is not None
    return "".join(released), response, generator.written[0]


@PROPERTY_SETTINGS
@given(
    prefix=st.text(max_size=200),
    suffix=st.text(max_size=200),
    form=st.sampled_from(FORMS),
    seed=st.integers(0, 2**32 - 1),
    chunk_index=st.integers(0, 2),
    canary_index=st.integers(0, 1),
    cuts=st.lists(st.integers(0, 10**6), max_size=60),
)
def test_no_canary_form_reaches_the_client_for_any_split(
    prefix: str, suffix: str, form: str, seed: int, chunk_index: int, canary_index: int, cuts: list[int]
) -> None:
    chosen: dict[str, str] = {}

    def compose(retrieval: RetrievalResult) -> str:
        chunk_id = retrieval.hits[chunk_index].chunk.id
        chosen["chunk"] = chunk_id
        canary = retrieval.markers[chunk_id][canary_index]
        chosen["form_start"] = str(len(prefix))
        return prefix + obfuscate(canary, form, random.Random(seed)) + suffix

    client, response, written = _run(compose, cuts)
    assert response.finish_reason == "blocked"
    assert written.startswith(client)  # the client got a prefix of the output, nothing rewritten
    assert len(client) <= int(chosen["form_start"])  # not one character of the canary's form
    verdict = next(v for v in response.verdicts if v.blocked)
    assert verdict.evidence["leaked_chunk_ids"] == [chosen["chunk"]]
    assert response.text == client


@PROPERTY_SETTINGS
@given(text=st.text(max_size=600), cuts=st.lists(st.integers(0, 10**6), max_size=60))
def test_benign_text_is_never_flagged(text: str, cuts: list[int]) -> None:
    client, response, written = _run(lambda retrieval: text, cuts)
    assert not response.blocked and response.finish_reason == "stop"
    assert client == written == text


@PROPERTY_SETTINGS
@given(
    leaks=st.lists(st.tuples(st.integers(0, 2), st.sampled_from(FORMS)), min_size=1, max_size=4),
    filler=st.text(alphabet=st.characters(codec="ascii"), max_size=40),
    seed=st.integers(0, 2**32 - 1),
)
def test_attribution_names_exactly_the_leaked_chunks(leaks: list[tuple[int, str]], filler: str, seed: int) -> None:
    rng = random.Random(seed)
    retrieval = CanaryInjector().decorate(_retriever().retrieve(Query("cough"), 3))
    owner = {canary: chunk for chunk, canaries in retrieval.markers.items() for canary in canaries}
    leaked_chunks = set()
    pieces = []
    for chunk_index, form in leaks:
        chunk_id = retrieval.hits[chunk_index].chunk.id
        leaked_chunks.add(chunk_id)
        pieces.append(obfuscate(rng.choice(retrieval.markers[chunk_id]), form, rng))
    hits = CanaryMatcher(owner).find(f" {filler} ".join(pieces))
    assert {owner[hit.canary] for hit in hits} == leaked_chunks
