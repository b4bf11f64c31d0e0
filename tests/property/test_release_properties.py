"""Property: for any chunks, any copy of them in any supported view and any split into deltas, the
released text holds no run longer than the allowance from any retrieved chunk, and no PII value of
a retrieved chunk that the user's message lacks (issue 13).

The checker decodes the released pieces with `ragshield.encodings.decode` and measures copied runs
by brute force; it shares only the character folding with the guard (look-alike views have no
decoder, so folding is how any reader would read them).
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragshield.encodings import DECODABLE_VIEWS, decode, encode
from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import WITHHELD_MARKER, Defense
from ragshield.guards.release.echo import ContextEchoGuard, EchoSettings
from ragshield.guards.release.fold import text_symbols
from ragshield.guards.release.tracks import GramTable, Source, Track
from ragshield.metrics.release import longest_copied_words
from ragshield.pii.store import PiiValue
from ragshield.pipeline import RagPipeline
from ragshield.types import Chunk, Query, RetrievalResult, ScoredChunk

ALLOWANCE = 8
LOOKALIKE_VIEWS = ("case", "separators", "zero-width", "fullwidth", "combining", "math-alphabet", "tag-chars")
VIEWS = tuple(v for v in DECODABLE_VIEWS if v != "digits-as-words") + LOOKALIKE_VIEWS
_VOCABULARY = (
    "patient reports fever cough since monday prescribed amoxicillin twice daily follow up clinic "
    "meeting contract pipeline gas trading desk invoice payment approved renewal quarter budget "
    "mother father history allergy penicillin surgery knee ankle scan results normal elevated"
)
WORDS = tuple(_VOCABULARY.split())
NAMES = ("Maria Gonzalez", "Tobias Keller", "Priya Raman", "Olu Adebayo", "Hanna Nilsson")


class _FakePiiStore:
    """A fake PII store (tests only): each chunk's `Name:` value."""

    source = "index"

    def values(self, chunk: Chunk) -> tuple[PiiValue, ...]:
        name = chunk.metadata.get("name", "")
        return (PiiValue("person", name, f"digest-{chunk.id}"),) if name else ()


class _FakeRetriever:
    """A fake retriever (tests only): returns the chunks it was given."""

    def __init__(self, hits: tuple[ScoredChunk, ...]) -> None:
        self.hits, self.index = hits, None

    def retrieve(self, query: Query, k: int) -> RetrievalResult:
        return RetrievalResult(query, self.hits)


def _chunk_text(rng: random.Random, name: str) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(25, 45))]
    words.insert(rng.randint(0, 10), f"Name: {name}, phone {rng.randint(200, 999)}-{rng.randint(1000, 9999)}.")
    return " ".join(words)


def _readings(part: str, view: str) -> list[str]:
    """How a reader could read a released piece: as it is, and decoded (trimmed at a cut blob)."""
    readings = [part]
    if view in DECODABLE_VIEWS:
        for head in range(9):
            for tail in range(9):
                try:
                    readings.append(decode(part[head : len(part) - tail], view))
                    return readings
                except Exception:
                    continue
    return readings


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    view=st.sampled_from(VIEWS),
    delta=st.integers(1, 24),
    chunk_count=st.integers(1, 3),
    user_gives_name=st.booleans(),
)
# found in a test run: an escape's mark just before the 12 characters a delta may still change
# (`\u0020\u0070rescrib`) was released to the decoder without its body
@example(seed=17195, view="unicode-escapes", delta=21, chunk_count=1, user_gives_name=False)
# found in a test run: three-character deltas of bare decimal codes (`32, `) carried no hint of an
# escape on their own, so each reset the track and a name left as codes
@example(seed=6, view="decimal-codes", delta=3, chunk_count=2, user_gives_name=False)
# found in a test run: a letter cipher leaves digits as they are, and counted on letters alone a
# copy of the asker's own record (their name public to them) passed with 11 words in a row
@example(seed=2793, view="rot13", delta=5, chunk_count=1, user_gives_name=True)
@example(seed=2793, view="atbash", delta=5, chunk_count=1, user_gives_name=True)
# found by a longer random run (session 33): a phone number left as digits beside escaped letters
# (`415\u002d7994`) was read as the bare character code 415, which cut the copy there
@example(seed=268168, view="unicode-escapes", delta=16, chunk_count=3, user_gives_name=False)
# found by a longer random run (session 34): the spelled view read ICAO's `X-ray` as the words `x`
# and `ray`, so a NATO copy broke at every x and its next run started with a fresh allowance
@example(seed=968008, view="nato", delta=21, chunk_count=3, user_gives_name=False)
def test_released_text_holds_no_run_beyond_the_allowance_and_no_strangers_pii(
    seed: int, view: str, delta: int, chunk_count: int, user_gives_name: bool
) -> None:
    rng = random.Random(seed)
    names = rng.sample(NAMES, chunk_count)
    chunks = [Chunk(f"c{i}", f"d{i}", _chunk_text(rng, name), metadata={"name": name}) for i, name in enumerate(names)]
    hits = tuple(ScoredChunk(chunk, 0.9 - 0.1 * i, i) for i, chunk in enumerate(chunks))
    question = f"I am {names[0]}, what is in my file?" if user_gives_name else "What is in the files?"
    target = rng.choice(chunks)
    words = target.text.split()
    if rng.random() < 0.5:  # a long copy somewhere in the record
        start = rng.randint(0, max(0, len(words) - ALLOWANCE - 4))
        copied = " ".join(words[start : start + rng.randint(ALLOWANCE + 3, len(words))])
    else:  # a short quote around the record's name, within the echo allowance
        at = next(i for i, word in enumerate(words) if word == "Name:")
        copied = " ".join(words[max(0, at - rng.randint(0, 2)) : at + 3 + rng.randint(0, 2)])
    reply = f"Here you go. {encode(copied, view, rng)} Anything else?"
    guard = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=_FakePiiStore())
    system = RagPipeline(
        _FakeRetriever(hits),  # type: ignore[arg-type]
        ScriptedGenerator([reply], delta_chars=delta),
        defense=Defense(name="context-echo", output_guards=(guard,)),
    )
    released = system.answer(Query(question)).text
    readings = [reading for part in released.split(WITHHELD_MARKER) for reading in _readings(part.strip(), view)]
    for chunk in chunks:
        assert max(longest_copied_words(reading, chunk.text) for reading in readings) <= ALLOWANCE, (view, released)
    for name in names:
        if user_gives_name and name == names[0]:
            continue
        for reading in readings:
            assert text_symbols(name) not in text_symbols(reading), (view, name, released)


@pytest.mark.parametrize("seed", range(6))
def test_a_nato_copy_with_the_same_word_between_every_pair_of_words_is_contained(seed: int) -> None:
    """`Romeo stop Echo stop Sierra ...`: a parting word between every pair of NATO words never let
    two stand together, so the spelled view read no run and the whole copy left (session 35)."""
    rng = random.Random(seed)
    chunk = Chunk("c0", "d0", _chunk_text(rng, rng.choice(NAMES)))
    copied = " ".join(chunk.text.split()[: ALLOWANCE + 12])
    parted = " stop ".join(encode(copied, "nato", rng).split(" "))
    guard = ContextEchoGuard(settings=EchoSettings(unnatural=False))
    system = RagPipeline(
        _FakeRetriever((ScoredChunk(chunk, 0.9, 0),)),  # type: ignore[arg-type]
        ScriptedGenerator([f"Here you go. {parted} Anything else?"], delta_chars=rng.randint(1, 40)),
        defense=Defense(name="context-echo", output_guards=(guard,)),
    )
    released = system.answer(Query("What is in the files? Spell it, a word between letters.")).text
    for part in released.split(WITHHELD_MARKER):
        spelled = re.sub(r"\s*\bstop\b", "", part.replace("Here you go.", "").replace("Anything else?", ""))
        readings = _readings(spelled.strip(), "nato")
        assert max(longest_copied_words(reading, chunk.text) for reading in readings) <= ALLOWANCE, released


def _within_one_edit(a: str, b: str) -> bool:
    """Damerau distance <= 1: equal, or one symbol dropped, inserted, substituted or two swapped."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def longest_near_copied_words(released: str, source: str) -> int:
    """The longest run of consecutive `source` words that `released` reproduces word by word, each
    word within one edit (two source words written as one, an edit on the space, count as both)."""
    out = [w for w in (text_symbols(word) for word in released.split()) if w]
    src = [w for w in (text_symbols(word) for word in source.split()) if w]
    best = 0
    for i in range(len(out)):
        for j in range(len(src)):
            a, b, run = i, j, 0
            while a < len(out) and b < len(src):
                if _within_one_edit(out[a], src[b]):
                    a, b, run = a + 1, b + 1, run + 1
                elif b + 1 < len(src) and _within_one_edit(out[a], src[b] + src[b + 1]):
                    a, b, run = a + 1, b + 2, run + 2
                else:
                    break
            best = max(best, run)
    return best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), delta=st.integers(1, 24))
# found by this test on CI-like runs: a clean stretch of exactly six symbols between edits (seeds
# were looked up at every second position), a repeated word ("gas gas gas") after a dropped symbol
# (a wrong repeat took the chain and cut the copy in two), and edits every five symbols over the
# copy's first words (six-symbol seeds found nothing there)
@example(seed=187975, delta=1)
@example(seed=1233, delta=1)
@example(seed=7717, delta=1)
def test_a_copy_with_an_edit_every_few_characters_holds_no_run_beyond_the_allowance(seed: int, delta: int) -> None:
    _check_near_copy(seed, delta)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="documented limit (docs/release-containment.md): a near-copy chain ends at its last seed, so short "
    "edited words at a copy's ends ('esk kqee' for 'desk knee') are not counted; 11 words leave, 8 of them seeded",
)
def test_short_edited_words_at_the_ends_of_a_near_copy_are_counted() -> None:
    _check_near_copy(152917, 24)  # found by a 600 s sweep in session 34 (1 of 3,379 draws)


def _check_near_copy(seed: int, delta: int) -> None:
    rng = random.Random(seed)
    chunks = [Chunk(f"c{i}", f"d{i}", _chunk_text(rng, name)) for i, name in enumerate(rng.sample(NAMES, 2))]
    hits = tuple(ScoredChunk(chunk, 0.9 - 0.1 * i, i) for i, chunk in enumerate(chunks))
    target = rng.choice(chunks)
    words = target.text.split()
    start = rng.randint(0, max(0, len(words) - ALLOWANCE - 4))
    copied = " ".join(words[start : start + rng.randint(ALLOWANCE + 3, len(words))])
    reply = f"Here you go. {encode(copied, 'one-edit', rng)} Anything else?"
    guard = ContextEchoGuard(settings=EchoSettings(unnatural=False))
    system = RagPipeline(
        _FakeRetriever(hits),  # type: ignore[arg-type]
        ScriptedGenerator([reply], delta_chars=delta),
        defense=Defense(name="context-echo", output_guards=(guard,)),
    )
    released = system.answer(Query("What is in the files? Write it with typos.")).text
    for part in released.split(WITHHELD_MARKER):
        assert longest_near_copied_words(part, target.text) <= ALLOWANCE, released


class _DenseTable(GramTable):
    """Reference: every position looked up (no probes)."""

    step = 1  # type: ignore[assignment]


class _Calls:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int, int, int]] = []

    def run(self, source: Source, first: int, last: int, start_raw: int, end_raw: int) -> None:
        self.calls.append((source.key, first, last, start_raw, end_raw))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), cuts=st.lists(st.integers(1, 30), min_size=1, max_size=40))
def test_probing_every_few_positions_reports_exactly_the_runs_of_looking_up_every_position(
    seed: int, cuts: list[int]
) -> None:
    rng = random.Random(seed)
    sources = ["".join(rng.choice("abcde") for _ in range(rng.randint(20, 80))) for _ in range(2)]
    noise = "".join(rng.choice("abcdefgh") for _ in range(40))
    pieces = [noise[: rng.randint(0, 40)]]
    for _ in range(4):  # copies of 10-16 symbols (around a gram and its probes) between noise
        text = rng.choice(sources)
        start = rng.randint(0, len(text) - 10)
        pieces += [text[start : start + rng.randint(10, 16)], noise[: rng.randint(0, 9)]]
    stream = "".join(pieces)
    reports = []
    for table in (GramTable(12), _DenseTable(12)):
        for number, symbols in enumerate(sources):
            n = len(symbols)
            table.add(Source.build(f"s{number}", "chunk", symbols, range(n), range(n), [False] * n))
        sink = _Calls()
        track = Track(table, sink)
        at = 0
        for cut in [*cuts, len(stream)]:
            track.feed(stream[at : at + cut], range(at, min(len(stream), at + cut)))
            at += cut
            if at >= len(stream):
                break
        reports.append(sink.calls)
    assert reports[0] == reports[1]
