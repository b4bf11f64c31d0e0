"""Properties of CanaryRAG through RagPipeline.stream (hypothesis), with FAKE parts: a hashing-embedder
retriever over synthetic records and a generator that streams a given text in given deltas.

* for any surrounding text, any supported form and any split into deltas, no character of the
  canary's form reaches the client: in halt mode the stream halts; in redact mode (the default) the
  form is withheld and the text around it is released; the verdict names the leaked chunk;
* benign text without canaries is never flagged and reaches the client unchanged;
* with several chunks leaked in different forms, every leaked chunk (and no other) is named;
* a canary with any one edit (drop, insertion, substitution, adjacent swap) in any skeleton form,
  split into any deltas, is found; random text is not;
* `per_chunk: auto` leaves no window of `cover_chars` + canary length characters without a canary.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragshield.guards.base import WITHHELD_MARKER, Defense
from ragshield.guards.canary import CanaryGuard, CanaryInjector, CanaryMatcher, new_canaries
from ragshield.guards.canary.forms import FORMS, obfuscate
from ragshield.guards.canary.injector import PLACEMENTS
from ragshield.pipeline import RagPipeline
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
    compose: Callable[[RetrievalResult], str],
    cuts: list[int],
    query: str = "tell me about the chest pain record",
    on_violation: str = "redact",
) -> tuple[str, Response, str]:
    injector = RecordingInjector()
    generator = SplitGenerator(injector, compose, cuts)
    guard = CanaryGuard(on_violation=on_violation)
    defense = Defense(name="canary-rag", decorators=(injector,), output_guards=(guard,))
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
def test_halt_mode_stops_before_any_canary_form_for_any_split(
    prefix: str, suffix: str, form: str, seed: int, chunk_index: int, canary_index: int, cuts: list[int]
) -> None:
    chosen: dict[str, str] = {}

    def compose(retrieval: RetrievalResult) -> str:
        chunk_id = retrieval.hits[chunk_index].chunk.id
        chosen["chunk"] = chunk_id
        canary = retrieval.markers[chunk_id][canary_index]
        chosen["form_start"] = str(len(prefix))
        return prefix + obfuscate(canary, form, random.Random(seed)) + suffix

    client, response, written = _run(compose, cuts, on_violation="halt")
    assert response.finish_reason == "blocked"
    assert written.startswith(client)  # the client got a prefix of the output, nothing rewritten
    assert len(client) <= int(chosen["form_start"])  # not one character of the canary's form
    verdict = next(v for v in response.verdicts if v.blocked)
    assert verdict.evidence["leaked_chunk_ids"] == [chosen["chunk"]]
    assert response.text == client


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
def test_redact_mode_withholds_every_canary_form_and_goes_on_for_any_split(
    prefix: str, suffix: str, form: str, seed: int, chunk_index: int, canary_index: int, cuts: list[int]
) -> None:
    chosen: dict[str, object] = {}

    def compose(retrieval: RetrievalResult) -> str:
        chunk_id = retrieval.hits[chunk_index].chunk.id
        chosen["chunk"] = chunk_id
        chosen["canaries"] = [canary for canaries in retrieval.markers.values() for canary in canaries]
        return prefix + obfuscate(retrieval.markers[chunk_id][canary_index], form, random.Random(seed)) + suffix

    client, response, _ = _run(compose, cuts)
    assert response.finish_reason == "stop" and not response.blocked and response.text == client
    assert CanaryMatcher(chosen["canaries"]).find(client) == []  # type: ignore[arg-type]
    assert WITHHELD_MARKER in client
    verdict = next(v for v in response.verdicts if v.guard == "canary-rag")
    assert verdict.action.value == "redact" and verdict.evidence["leaked_chunk_ids"] == [chosen["chunk"]]
    # the answer goes on: the text after the form reaches the client (only its unfolded edge may be held)
    assert client.rstrip().endswith(suffix.strip()[-20:])


@PROPERTY_SETTINGS
@given(
    kind=st.sampled_from(("deletion", "insertion", "substitution", "swap")),
    at=st.integers(0, 11),
    symbol=st.sampled_from("abcdefghjkmnpqrstuvwxyz23456789"),
    form=st.sampled_from(("plain", "case", "separators", "zero-width", "homoglyph", "reversed")),
    around=st.text(alphabet=" .,;:!?\n-()'\"", max_size=30),
    seed=st.integers(0, 2**32 - 1),
    cuts=st.lists(st.integers(0, 10**6), max_size=30),
)
def test_a_canary_one_edit_away_is_found_for_any_split(
    kind: str, at: int, symbol: str, form: str, around: str, seed: int, cuts: list[int]
) -> None:
    canaries = new_canaries(6)
    canary = canaries[seed % 6]
    if kind == "deletion":
        near = canary[:at] + canary[at + 1 :]
    elif kind == "insertion":
        near = canary[:at] + symbol + canary[at:]
    elif kind == "substitution":
        near = canary[:at] + symbol + canary[at + 1 :]
    else:
        near = canary[: min(at, 10)] + canary[min(at, 10) + 1] + canary[min(at, 10)] + canary[min(at, 10) + 2 :]
    text = around + obfuscate(near, form, random.Random(seed)) + around
    points = sorted({cut % (len(text) + 1) for cut in cuts} | {0, len(text)})
    scanner = CanaryMatcher(canaries).scanner()
    hits = [hit for start, end in itertools.pairwise(points) for hit in scanner.feed(text[start:end])]
    hits += scanner.flush()
    assert [hit.canary for hit in hits] == [canary]
    if near != canary and canary not in near:  # an edit that left the canary whole is an exact hit
        assert hits[0].form.endswith("one-edit")


@PROPERTY_SETTINGS
@given(text=st.text(max_size=2000), n=st.integers(1, 30))
def test_random_text_holds_no_canary_even_one_edit_away(text: str, n: int) -> None:
    assert CanaryMatcher(new_canaries(n)).find(text) == []


@PROPERTY_SETTINGS
@given(
    text=st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")), max_size=1500)
    | st.text(alphabet="ab .\n", max_size=1500),
    cover=st.integers(26, 300),
    placement=st.sampled_from(PLACEMENTS),
)
def test_auto_density_covers_every_window_longer_than_the_allowance(text: str, cover: int, placement: str) -> None:
    decorated, canaries = CanaryInjector(placement=placement, per_chunk="auto", cover_chars=cover).decorate_text(text)
    starts = sorted(decorated.index(canary) for canary in canaries)
    # a window [x, x + cover + 12) holds canary s exactly when x <= s <= x + cover
    gaps = [starts[0], *(b - a for a, b in itertools.pairwise(starts)), len(decorated) - starts[-1] - 12]
    assert gaps[0] <= cover and all(gap <= cover for gap in gaps[1:])


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
