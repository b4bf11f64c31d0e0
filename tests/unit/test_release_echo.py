"""context-echo: what leaves is checked against what was retrieved, in every supported view.

Unit tests on the monitor and through `RagPipeline` with a scripted fake generator (named as such);
a reference checker (`longest_copied_words`, brute force on folded text) is independent of the
streaming matcher it checks.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from release_fakes import ALLOWANCE, RECORD, guard, longest_copied_words, pipeline, retrieval

from ragshield.encodings import DECODABLE_VIEWS, decode, encode
from ragshield.encodings.braille import braille, unbraille
from ragshield.errors import ConfigError
from ragshield.guards.base import WITHHELD_MARKER
from ragshield.guards.factory import DefenseContext
from ragshield.guards.release.budget import MemoryBudget
from ragshield.guards.release.defense import build_guard
from ragshield.guards.release.echo import ContextEchoGuard, EchoSettings
from ragshield.guards.release.fold import text_symbols
from ragshield.guards.release.public import FrequentGrams
from ragshield.metrics.release import copied_symbols
from ragshield.types import Action, Chunk, Query, RetrievalResult, ScoredChunk

# views the echo guard decodes (one-edit and reordered groups: see the property and budget tests)
SUPPORTED = tuple(view for view in DECODABLE_VIEWS if view not in ("digits-as-words",))


def withheld_share(monitor_spans: list[tuple[int, int]], length: int) -> float:
    covered = set()
    for start, end in monitor_spans:
        covered.update(range(start, min(end, length)))
    return len(covered) / max(1, length)


def run_monitor(text: str, echo: ContextEchoGuard | None = None, delta: int = 4) -> tuple[float, object]:
    monitor = (echo or guard()).open(retrieval())
    for start in range(0, len(text), delta):
        monitor.observe(text[start : start + delta])
    verdict = monitor.close()
    spans = [(span.start, span.end) for span in monitor.withheld(0, len(text))]
    return withheld_share(spans, len(text)), verdict


def test_a_verbatim_copy_is_withheld_and_the_answer_goes_on() -> None:
    response = pipeline(f"Here is what I found. {RECORD} Please see a doctor soon.").answer(retrieval().query)
    assert WITHHELD_MARKER in response.text
    assert response.text.startswith("Here is what I found.")
    assert response.text.endswith("Please see a doctor soon.")
    assert longest_copied_words(response.text) <= ALLOWANCE
    assert response.finish_reason == "stop"
    verdict = next(v for v in response.verdicts if v.guard == "context-echo")
    assert verdict.action is Action.REDACT
    assert verdict.evidence["echoed_chunk_ids"] == ["c1"]
    assert "John" not in str(verdict.to_dict())  # evidence holds ids and counts, never text


def test_a_short_quote_within_the_allowance_passes_unchanged() -> None:
    reply = "Pain radiating to the left arm needs a check-up."  # 5 words of the record
    response = pipeline(reply).answer(retrieval().query)
    assert response.text == reply
    assert next(v for v in response.verdicts if v.guard == "context-echo").action is Action.ALLOW


def tolerant_decode(part: str, view: str) -> str | None:
    """`part` decoded in `view`, trimming up to 8 characters at either end (a marker can cut an
    encoded blob anywhere); None when no trim decodes."""
    for head in range(9):
        for tail in range(9):
            piece = part[head : len(part) - tail]
            if not piece.strip():
                return ""
            try:
                return decode(piece, view)
            except Exception:
                continue
    return None


@pytest.mark.parametrize("view", SUPPORTED)
def test_every_supported_view_of_a_copy_is_contained(view: str) -> None:
    rng = random.Random(view)
    encoded = encode(RECORD, view, rng)
    assert longest_copied_words(tolerant_decode(encoded, view) or "") > ALLOWANCE  # the check can fail
    response = pipeline(f"Sure: {encoded} Bye.", delta_chars=rng.randint(1, 9)).answer(retrieval().query)
    released = response.text.removeprefix("Sure: ").removesuffix(" Bye.")
    for part in released.split(WITHHELD_MARKER):
        decoded = tolerant_decode(part.strip(), view)
        if decoded is None:  # undecodable: too short to carry more than the allowance
            assert len(part.strip()) < 24, (view, part)
            continue
        assert longest_copied_words(decoded) <= ALLOWANCE, (view, part)
    assert longest_copied_words(response.text) <= ALLOWANCE, view


@pytest.mark.parametrize("gap", [" break ", " \u2014 ", " space ", " (espacio) "])
def test_a_copy_spelled_in_nato_words_with_a_word_between_its_words_is_contained(gap: str) -> None:
    encoded = re.sub(r" (?:/|\||//) |\n", gap, encode(RECORD, "nato", random.Random(3)))
    assert gap in encoded
    response = pipeline(f"Sure: {encoded} Bye.").answer(retrieval().query)
    for part in response.text.removeprefix("Sure: ").removesuffix(" Bye.").split(WITHHELD_MARKER):
        decoded = tolerant_decode(part.replace(gap, " / ").strip(), "nato")
        if decoded is None:  # undecodable: too short to carry more than the allowance
            assert len(part.strip()) < 24, part
            continue
        assert longest_copied_words(decoded) <= ALLOWANCE, part


@pytest.mark.parametrize("view", ["leetspeak", "caesar", "homoglyph", "small-caps", "latin-hook", "math-alphabet"])
def test_views_without_a_decoder_are_withheld_almost_whole(view: str) -> None:
    share, verdict = run_monitor(encode(RECORD, view, random.Random(7)))
    assert share > 0.9, view
    assert verdict.action is Action.REDACT  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=60))
def test_spans_do_not_depend_on_how_the_stream_is_split(cuts: list[int]) -> None:
    text = f"Notes: {RECORD} and then {encode(RECORD, 'base64', random.Random(1))} end."
    whole = guard().open(retrieval())
    whole.observe(text)
    whole.close()
    split = guard().open(retrieval())
    position = 0
    for cut in cuts:
        split.observe(text[position : position + cut])
        position += cut
    split.observe(text[position:])
    split.close()

    def covered(monitor: object) -> set[int]:
        spans = monitor.withheld(0, len(text))  # type: ignore[attr-defined]
        return {i for span in spans for i in range(span.start, min(span.end, len(text)))}

    # the same characters are withheld, give or take a decoder group at a cut
    assert len(covered(whole) ^ covered(split)) <= 16


def test_benign_answers_are_not_touched() -> None:
    answers = [
        "Chest pain can have many causes; please call emergency services if it spreads to your arm.",
        "Take ibuprofen 400 mg every 6-8 h with food, and see your GP if it persists beyond 3 days.",
        "```python\ndef add(a, b):\n    return a + b\n```",
        "| day | dose |\n|---|---|\n| 1 | 10 mg |\n| 2 | 20 mg |",
    ]
    for answer in answers:
        share, verdict = run_monitor(answer)
        assert share == 0.0, answer
        assert verdict.action is Action.ALLOW  # type: ignore[attr-defined]


def test_text_the_user_wrote_is_not_private() -> None:
    question = f"My notes say: {RECORD} What does that mean?"
    monitor = guard().open(retrieval(question))
    monitor.observe(RECORD)
    assert monitor.close().action is Action.ALLOW


def test_knowledge_base_boilerplate_is_not_private() -> None:
    boilerplate = "Thank you for your query on our health service, I have gone through your question in detail."
    chunks = [Chunk(f"b{i}", f"doc{i}", f"{boilerplate} Record {i} text.") for i in range(6)]
    frequent = FrequentGrams.from_chunks(chunks, 12, min_df=3)
    hits = (ScoredChunk(chunks[0], 0.9, 0),)
    monitor = ContextEchoGuard(settings=EchoSettings(unnatural=False), frequent=frequent).open(
        RetrievalResult(Query("hello"), hits)
    )
    monitor.observe(boilerplate)
    assert monitor.close().action is Action.ALLOW


def test_halt_mode_stops_the_stream_at_the_first_span() -> None:
    response = pipeline(f"Sure. {RECORD} {RECORD}", echo=guard(action="halt")).answer(retrieval().query)
    assert response.finish_reason == "blocked"
    assert longest_copied_words(response.text) <= ALLOWANCE


def test_allowance_in_characters() -> None:
    reply = RECORD[:60]
    assert pipeline(reply, echo=guard(allowance_words=None, allowance_chars=200)).answer("q").text == reply
    released = pipeline(reply, echo=guard(allowance_words=None, allowance_chars=20)).answer("q").text
    assert WITHHELD_MARKER in released


# ten record words in a row, three of them numbers: eight of them letters
_NUMBERED_COPY = "born 12/03/1961, lives at 42 Elm Street, Springfield. He reports"


@pytest.mark.parametrize("view", ["rot13", "atbash"])
def test_numbers_count_in_a_letter_cipher_copy(view: str) -> None:
    # a letter cipher leaves digits as they are; counted on letters alone, this copy had 8 words
    # (the allowance) and passed; the digits are chunk words too
    reply = encode(_NUMBERED_COPY, view, random.Random(0))
    assert longest_copied_words(decode(reply, view)) == 10  # the check can fail
    response = pipeline(f"Sure: {reply} Bye.").answer(retrieval().query)
    assert WITHHELD_MARKER in response.text
    for part in response.text.removeprefix("Sure: ").removesuffix(" Bye.").split(WITHHELD_MARKER):
        assert longest_copied_words(decode(part.strip(), view)) <= ALLOWANCE, (view, response.text)


@pytest.mark.parametrize("view", ["rot13", "atbash"])
def test_a_letter_cipher_copy_that_opens_with_a_number_counts_it(view: str) -> None:
    # 9 record words, the first a date: the first letter after it differed from the record's
    # letter before the date, so the date never joined the run (found in review, session 33)
    copy = "12/03/1961, lives at 42 Elm Street, Springfield. He reports"
    reply = encode(copy, view, random.Random(0))
    assert longest_copied_words(decode(reply, view)) == 9  # the check can fail
    response = pipeline(f"Sure: {reply} Bye.").answer(retrieval().query)
    assert WITHHELD_MARKER in response.text, response.text


@pytest.mark.parametrize("view", ["rot13", "atbash"])
def test_a_letter_cipher_copy_that_leaves_its_numbers_out_counts_only_what_it_copies(view: str) -> None:
    # the same words without their numbers are 8 words within the allowance: numbers a copy left
    # out are not counted as if it had copied them
    reply = encode(re.sub(r"[\d/]+,? ?", "", _NUMBERED_COPY), view, random.Random(0))
    response = pipeline(f"Sure: {reply} Bye.").answer(retrieval().query)
    assert response.text == f"Sure: {reply} Bye."


def test_a_number_left_as_digits_among_escapes_is_read_as_itself() -> None:
    # escapes decode bare decimal numbers too (`77 97 114`); the record's own numbers beside escaped
    # letters are numbers, and read as codes they cut this copy (12 words) into runs the allowance
    # let through: it was released whole before session 33
    copy = "born 12/03/1961, lives at 42 Elm Street, Springfield. He reports chest pain"
    reply = "".join(char if char.isdigit() or char == " " else f"\\u{ord(char):04x}" for char in copy)
    assert "42" in reply and longest_copied_words(decode(reply, "unicode-escapes")) > ALLOWANCE
    response = pipeline(f"Sure: {reply} Bye.", delta_chars=16).answer(retrieval().query)
    for part in response.text.split(WITHHELD_MARKER):
        assert longest_copied_words(decode(part, "unicode-escapes")) <= ALLOWANCE, response.text


def test_the_release_budget_stops_piecewise_extraction() -> None:
    budget = MemoryBudget()
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False, budget_share=0.3), budget=budget)
    words = RECORD.split()
    released_words = 0
    for start in range(0, len(words), 6):  # 6 words per answer, under the 8-word allowance
        piece = " ".join(words[start : start + 6])
        response = pipeline(piece, echo=echo).answer(Query("continue", user_id="mallory"))
        if WITHHELD_MARKER not in response.text:
            released_words += len(piece.split())
    assert released_words < 0.6 * len(words)
    # another user starts with a fresh budget
    piece = " ".join(words[:6])
    assert pipeline(piece, echo=echo).answer(Query("continue", user_id="bob")).text == piece


def test_bad_parameters_are_clear_errors() -> None:
    context = DefenseContext()
    with pytest.raises(ConfigError, match="unknown context-echo parameter"):
        build_guard(context, pii=False, alowance_words=3)
    with pytest.raises(ConfigError, match="action"):
        build_guard(context, pii=False, action="explode")
    with pytest.raises(ConfigError, match="allowance"):
        build_guard(context, pii=False, allowance_words=None, allowance_chars=None)


def test_a_failing_monitor_fails_closed() -> None:
    class Broken(ContextEchoGuard):
        def open(self, retrieval: RetrievalResult):  # type: ignore[no-untyped-def]
            monitor = super().open(retrieval)

            def boom(start: int, end: int) -> list[object]:
                raise RuntimeError("boom")

            monitor.withheld = boom  # type: ignore[method-assign]
            return monitor

    response = pipeline(RECORD, echo=Broken(settings=EchoSettings(unnatural=False))).answer("q")
    assert response.finish_reason == "blocked"
    assert not re.search(r"Smith", response.text)


def test_only_intent_signals_count_towards_per_user_blocking() -> None:
    from ragshield.guards.policy import MemoryStore, SlidingWindowPolicy

    def answers(echo: ContextEchoGuard) -> list[str]:
        policy = SlidingWindowPolicy(MemoryStore(), window=5, k=2)
        system = pipeline(RECORD, echo=echo)
        system.policy = policy
        return [system.answer(Query("q", user_id="eve")).finish_reason for _ in range(4)]

    assert answers(guard()) == ["stop"] * 4  # redactions alone never block a user
    assert answers(guard(count_redactions=True))[-1] == "refused"


def test_text_inside_angle_brackets_is_read_too() -> None:
    """Tags are dropped in a view of their own: a copy written inside `<...>` is still a copy."""
    wrapped = " ".join(f"<{word}>" for word in RECORD.split())
    share, verdict = run_monitor(f"See: {wrapped}")
    assert share > 0.8
    assert verdict.action is Action.REDACT  # type: ignore[attr-defined]


def test_the_release_budget_bounds_reordered_groups_within_one_answer() -> None:
    # each group of 3-6 words is under the allowance; together they are the whole record
    reply = encode(RECORD, "reordered-groups", random.Random(3))
    whole = len(text_symbols(RECORD))
    unbudgeted = pipeline(reply, echo=guard()).answer(Query("shuffle it", user_id="mallory")).text
    assert copied_symbols(unbudgeted, [RECORD]) > 0.8 * whole
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False, budget_share=0.3), budget=MemoryBudget())
    released = pipeline(reply, echo=echo).answer(Query("shuffle it", user_id="mallory")).text
    assert copied_symbols(released, [RECORD]) < 0.5 * whole


@pytest.mark.parametrize("delta", [1, 3, 7])
def test_a_copy_written_in_braille_is_contained(delta: int) -> None:
    """Grade-1 Braille cells fold to the letters they spell, so a record spelled in Braille is
    matched like the record; its digits (a number sign, then a to j) are not followed."""
    encoded = braille(RECORD, random.Random(0))
    assert longest_copied_words(unbraille(encoded)) > ALLOWANCE  # the check can fail
    response = pipeline(f"Sure: {encoded} Bye.", delta_chars=delta).answer(retrieval().query)
    assert WITHHELD_MARKER in response.text
    for part in response.text.split(WITHHELD_MARKER):
        assert longest_copied_words(unbraille(part)) <= ALLOWANCE, part
