"""CanaryInjector: placements, markers, fresh canaries per request, knowledge base untouched."""

from __future__ import annotations

import pytest

from ragshield.errors import ConfigError
from ragshield.guards.base import ContextDecorator
from ragshield.guards.canary import CanaryInjector
from ragshield.guards.canary.injector import PLACEMENTS, sentence_spans
from ragshield.rag.retriever import Retriever
from ragshield.types import Chunk, Query, RetrievalResult, ScoredChunk

TEXT = "I have a cough. It is worse at night! Should I worry? Thanks for your help."


def _retrieval(*texts: str) -> RetrievalResult:
    hits = tuple(ScoredChunk(Chunk(f"c{i}", f"d{i}", text), 0.9 - i / 10, i) for i, text in enumerate(texts))
    return RetrievalResult(Query("what about my cough?"), hits)


def test_injector_is_a_context_decorator() -> None:
    assert isinstance(CanaryInjector(), ContextDecorator)


def test_sentence_begin_is_the_default_and_opens_sentences() -> None:
    decorated = CanaryInjector(per_chunk=2).decorate(_retrieval(TEXT))
    text = decorated.hits[0].chunk.text
    first, second = decorated.markers["c0"]
    assert text.startswith(f"{first} I have a cough.")
    assert f"{second} Should I worry?" in text  # spread: sentence 0 and sentence 2 of 4
    assert text.replace(f"{first} ", "").replace(f"{second} ", "") == TEXT


def test_sentence_end_goes_before_the_full_stop() -> None:
    decorated = CanaryInjector(placement="sentence-end", per_chunk=1).decorate(_retrieval(TEXT))
    (canary,) = decorated.markers["c0"]
    assert decorated.hits[0].chunk.text.endswith(f"your help {canary}.")


def test_intra_chunk_goes_between_words() -> None:
    for _ in range(20):
        decorated = CanaryInjector(placement="intra-chunk", per_chunk=2).decorate(_retrieval(TEXT))
        text = decorated.hits[0].chunk.text
        for canary in decorated.markers["c0"]:
            assert f" {canary} " in text
        assert " ".join(word for word in text.split() if word not in decorated.markers["c0"]) == TEXT


def test_every_chunk_gets_its_own_fresh_canaries_and_markers() -> None:
    retrieval = _retrieval(TEXT, "Second record. With two sentences.", "no punctuation at all")
    injector = CanaryInjector(per_chunk=2)
    first, second = injector.decorate(retrieval), injector.decorate(retrieval)
    assert set(first.markers) == {"c0", "c1", "c2"}
    for hit in first.hits:
        assert all(canary in hit.chunk.text for canary in first.markers[hit.chunk.id])
    all_first = {c for canaries in first.markers.values() for c in canaries}
    all_second = {c for canaries in second.markers.values() for c in canaries}
    assert len(all_first) == 6 and not all_first & all_second
    assert [hit.similarity for hit in first.hits] == retrieval.similarities
    assert first.query == retrieval.query


def test_the_knowledge_base_and_the_input_retrieval_are_never_modified(fake_retriever: Retriever) -> None:
    retrieval = fake_retriever.retrieve(Query("headache and chest pain"), 3)
    before = [hit.chunk.text for hit in retrieval.hits]
    decorated = CanaryInjector().decorate(retrieval)
    assert [hit.chunk.text for hit in retrieval.hits] == before and retrieval.markers == {}
    again = fake_retriever.retrieve(Query("headache and chest pain"), 3)
    assert [hit.chunk.text for hit in again.hits] == before
    assert all(hit.chunk.text != original for hit, original in zip(decorated.hits, before, strict=True))


def test_sentence_spans_cover_sentences_and_newlines() -> None:
    text = "One. Two!\nthree without stop\nFour?"
    assert [text[a:b] for a, b in sentence_spans(text)] == ["One.", "Two!", "three without stop\n", "Four?"]


LONG = (
    "Dear Dr. Smith, my father (78) has had a dry cough since March. He was given antibiotics twice, "
    "which did not help! His chest X-ray was clear, but his oxygen saturation drops to 91% at night; "
    "see https://example.org/records/a8f3e9b2c1d4e5f60718293a4b5c6d7e8f9012345678901234567890abcdef for "
    "the full report.\nShould we ask for a CT scan? He also takes lisinopril 10 mg and metformin 500 mg "
    "daily, and his blood pressure was 150/95 last week. Thank you for any advice you can give us."
)


def uncovered_windows(text: str, canaries: tuple[str, ...], cover: int) -> list[int]:
    """Starts of windows of `cover` + canary length characters of `text` that hold no whole canary."""
    width = cover + len(canaries[0])
    starts = [index for canary in canaries for index in [text.index(canary)]]
    return [x for x in range(len(text) - width + 1) if not any(x <= s <= x + cover for s in starts)]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("cover", [26, 60, 120, 400])
def test_auto_puts_a_whole_canary_in_every_window_longer_than_the_allowance(placement: str, cover: int) -> None:
    injector = CanaryInjector(placement=placement, per_chunk="auto", cover_chars=cover)
    for text in (LONG, LONG * 3, "short text.", "", "x" * 500, TEXT):
        decorated, canaries = injector.decorate_text(text)
        assert canaries and uncovered_windows(decorated, canaries, cover) == [], (placement, cover, text[:20])
        piece = " {}" if placement == "sentence-end" else "{} "
        stripped = decorated
        for canary in canaries:
            stripped = stripped.replace(piece.format(canary), "", 1)
        assert stripped == text  # the text itself is unchanged, the canaries only added


def test_auto_uses_word_boundaries_and_only_enough_canaries() -> None:
    injector = CanaryInjector(per_chunk="auto", cover_chars=120)
    decorated, canaries = injector.decorate_text(LONG)
    assert decorated.startswith(f"{canaries[0]} Dear")  # sentence-begin opens the chunk
    url = next(token for token in LONG.split() if token.startswith("https://"))
    for canary in canaries:
        at = decorated.index(canary)
        end = at + len(canary)
        inside_url = (
            LONG.index(url)
            <= at - sum(len(c) + 1 for c in canaries if decorated.index(c) < at)
            < (LONG.index(url) + len(url))
        )
        # a canary sits between words, unless one token (the 90-character URL) leaves no choice
        assert inside_url or ((at == 0 or decorated[at - 1].isspace()) and decorated[end] == " ")
    # greedy spacing: not many more canaries than the length needs
    assert len(canaries) <= len(LONG) // (120 - 13) + 2
    assert len(injector.decorate_text(LONG)[1]) > len(CanaryInjector().decorate_text(LONG)[1])


def test_auto_decorates_retrievals_and_records_every_canary() -> None:
    decorated = CanaryInjector(per_chunk="auto").decorate(_retrieval(LONG, "A short one."))
    assert len(decorated.markers["c0"]) >= 4 and len(decorated.markers["c1"]) == 1
    for hit in decorated.hits:
        assert all(canary in hit.chunk.text for canary in decorated.markers[hit.chunk.id])


@pytest.mark.parametrize(
    "params",
    [
        {"placement": "middle"},
        {"per_chunk": 0},
        {"per_chunk": "many"},
        {"per_chunk": True},
        {"length": 5},
        {"per_chunk": "auto", "cover_chars": 25},
    ],
)
def test_bad_settings_are_config_errors(params: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        CanaryInjector(**params)  # type: ignore[arg-type]
