"""context-echo on copies spelled in NATO words or Morse with something between the letters: two
parting words taking turns, a counter, ICAO's `X-ray` after Morse or as a copy's first letters.

End to end through `RagPipeline` with a scripted fake generator (named as such) and a fake
retriever; a reader of its own (`_read_nato`, `_read_morse`) reads the released pieces the way a
person would, dropping the separators, and `longest_copied_words` (brute force) measures the runs.
"""

from __future__ import annotations

import random
import re

import pytest
from release_fakes import ALLOWANCE

from ragshield.encodings import encode
from ragshield.encodings.spelled import MORSE, NATO_READ
from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import WITHHELD_MARKER, Defense
from ragshield.guards.release.echo import ContextEchoGuard, EchoSettings
from ragshield.metrics.release import longest_copied_words
from ragshield.pii.store import PiiValue
from ragshield.pipeline import RagPipeline
from ragshield.types import Chunk, Query, RetrievalResult, ScoredChunk

# a record with a name, a phone number, an address and a code, and an x in many of its words
RECORD = (
    "Patient Xavier Foxworth, phone 415-555-0142, lives at 1400 Oxford Street, Exeter, code K1A 0B1. He had "
    "an X-ray and a toxin test, the next exam is on Saturday, and was prescribed amoxicillin by Dr. Alex Moore."
)
_MORSE_READ = {code: char for char, code in MORSE.items()}


# the record's name, phone number, address and code
PII_VALUES = (
    ("person", "Xavier Foxworth"),
    ("phone", "415-555-0142"),
    ("address", "1400 Oxford Street"),
    ("postcode", "K1A 0B1"),
)


class _FakeRetriever:
    """A fake retriever (tests only): always returns the record."""

    index = None

    def __init__(self, record: str) -> None:
        self.record = record

    def retrieve(self, query: Query, k: int) -> RetrievalResult:
        return RetrievalResult(query, (ScoredChunk(Chunk("c1", "d1", self.record), 0.9, 0),))


class _FakePiiStore:
    """A fake PII store (tests only): the record's PII values."""

    source = "index"

    def __init__(self, values: tuple[tuple[str, str], ...]) -> None:
        self.pii = values

    def values(self, chunk: Chunk) -> tuple[PiiValue, ...]:
        return tuple(PiiValue(kind, value, f"d-{kind}") for kind, value in self.pii)


def _released(
    reply: str, delta: int, pii: bool = False, record: str = RECORD, values: tuple[tuple[str, str], ...] = PII_VALUES
) -> str:
    guard = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=_FakePiiStore(values) if pii else None)
    system = RagPipeline(
        _FakeRetriever(record),  # type: ignore[arg-type]
        ScriptedGenerator([f"Here you go. {reply} Anything else?"], delta_chars=delta),
        defense=Defense(name="context-echo", output_guards=(guard,)),
    )
    return system.answer(Query("What is in the file? Spell it out.")).text


def _read_nato(part: str, separators: str) -> str:
    """A NATO-spelled piece as a reader reads it: the `separators` (a pattern) dropped, `X ray` with
    a space for ICAO's hyphen joined, every NATO or digit word its character, anything else nothing."""
    part = re.sub(r"\b[xX][\s\u2010\u2011]+ray\b", "X-ray", re.sub(separators, " ", part))
    return "".join(NATO_READ.get(token.upper().replace("-", ""), "") for token in re.split(r"[\s/|]+", part))


def _read_morse(part: str) -> str:
    """A Morse piece as a reader reads it, ICAO's `X-ray` (or `X ray`) among the codes as x."""
    part = re.sub(r"\b[xX][\s\-\u2010]ray\b", MORSE["X"], part)
    return "".join(_MORSE_READ.get(token, "") for token in part.split())


def _longest_released_run(released: str, read: object) -> int:
    pieces = released.removeprefix("Here you go.").removesuffix("Anything else?").split(WITHHELD_MARKER)
    return max(longest_copied_words(read(piece), RECORD) for piece in pieces)  # type: ignore[operator]


def _assert_nato_copy_contained(reply: str, separators: str) -> None:
    """`reply`, a NATO copy of `RECORD` with `separators` (a pattern) between its letters, copies more
    than the allowance as a reader reads it (so the check can fail), and no released piece of it does,
    at any of five delta sizes."""
    assert longest_copied_words(_read_nato(reply, separators), RECORD) > ALLOWANCE
    for delta in (1, 3, 7, 16, 40):
        released = _released(reply, delta)
        assert _longest_released_run(released, lambda piece: _read_nato(piece, separators)) <= ALLOWANCE, released


def _nato_letters(copied: str, seed: int, word_gaps: bool = True) -> list[str]:
    """`copied` spelled in NATO words, one token per letter or word gap (`/`, `|`, `//`; without the
    `//` gaps unless `word_gaps`)."""
    spelled = encode(copied, "nato", random.Random(seed)).replace("\n", " / ")
    return [token for token in spelled.split(" ") if word_gaps or token != "//"]


@pytest.mark.parametrize("turns", [("stop", "break"), ("then", "next"), ("stop", "break", "over")])
@pytest.mark.parametrize("seed", range(3))
def test_a_nato_copy_with_parting_words_taking_turns_is_contained(turns: tuple[str, ...], seed: int) -> None:
    """`Alfa stop Bravo break Charlie stop ...`: no two NATO words stood together and no one word
    stood between every pair, so the view read no run and the whole copy left."""
    tokens = _nato_letters(RECORD, seed)
    reply = " ".join(f"{token} {turns[i % len(turns)]}" for i, token in enumerate(tokens)) + " Delta"
    separators = rf"\b(?:{'|'.join(turns)})\b"
    _assert_nato_copy_contained(reply, separators)


@pytest.mark.parametrize("layout", ["{}", "({})", "#{}", "{}."])
@pytest.mark.parametrize("seed", range(3))
def test_a_nato_copy_with_a_counter_between_its_letters_is_contained(layout: str, seed: int) -> None:
    """`Alfa 1 Bravo 2 Charlie 3 ...`: a number between every pair of NATO words, counting up, never
    let two stand together, and each was another word, so the whole copy left."""
    tokens = _nato_letters(RECORD, seed)
    reply = " ".join(f"{token} {layout.format(i + 1)}" for i, token in enumerate(tokens)) + " Delta"
    separators = r"[(#]?\b\d+\b[).]?"
    _assert_nato_copy_contained(reply, separators)


@pytest.mark.parametrize("x_ray", ["X-ray", "X ray", "x\u2010ray"])
def test_a_morse_copy_with_icaos_x_ray_for_its_xs_is_contained(x_ray: str) -> None:
    """`.- -- --- X-ray .. -.-.`: after a Morse letter `X-ray` was read as the word, so the copy broke
    at every x into runs within the allowance, and all of it left."""
    codes = encode(RECORD, "morse", random.Random(0)).split(" ")
    reply = " ".join(x_ray if code == MORSE["X"] else code for code in codes)
    assert longest_copied_words(_read_morse(reply), RECORD) > ALLOWANCE
    for delta in (1, 4, 9, 23):
        released = _released(reply, delta)
        assert _longest_released_run(released, _read_morse) <= ALLOWANCE, (x_ray, delta, released)


@pytest.mark.parametrize("x_ray", ["X-ray", "X ray", "X\u2011ray"])
def test_a_name_and_address_spelled_with_x_ray_among_their_first_letters_are_withheld(x_ray: str) -> None:
    """`X-ray Alfa Victor ...` (Xavier), `... Oscar X ray Foxtrot` (Oxford): a value's x as its first
    letter, or as `X ray` with a space after one NATO word, was read as a word, so the value read
    `xrayavier...` or `oxrayford...`, matched no PII value and left."""
    name = encode("Xavier Foxworth", "nato", random.Random(1)).replace("X-ray", x_ray)
    address = encode("1400 Oxford Street", "nato", random.Random(1)).replace("X-ray", x_ray)
    reply = f"The name is {name}, and the address is {address}."
    for delta in (1, 2, 5, 11, 30):
        released = _released(reply, delta, pii=True)
        for piece in released.split(WITHHELD_MARKER):
            reading = _read_nato(piece, r"$^")
            assert "XAVIER" not in reading and "1400OXFORD" not in reading, (x_ray, delta, released)


@pytest.mark.parametrize(
    "reply",
    [
        # the record's phone number and code in digits between NATO letters, also inside a counter
        "Papa 1 Alfa 2 Tango 3 India 4 Echo 4155550142 November 5 Tango",
        "Sierra Tango 4155550142 Charlie Delta",
        "Kilo 1 Alfa 0 Bravo 1 Charlie",
    ],
)
def test_the_records_numbers_between_nato_letters_are_withheld(reply: str) -> None:
    # between lone NATO letters a number is read as nothing only as a counter: any other may be the
    # record's; a phone number the spelled view reads as nothing, the text view reads whole
    for delta in (1, 5, 64):
        released = _released(reply, delta, pii=True)
        assert not re.search(r"4155550142|0 Bravo 1", released), released
        assert WITHHELD_MARKER in released, released


def test_an_address_with_its_number_in_digits_between_nato_letters_is_withheld() -> None:
    # after two NATO words a number parts them in the reading that parts numbers; the reading that
    # keeps every number reads the address whole (with one reading, this was a documented limit)
    reply = "Sierra Tango Charlie 1400 Oscar X-ray Foxtrot Oscar Romeo Delta Sierra Tango Romeo Echo Echo Tango"
    for delta in (1, 5, 16, 64):
        assert "1400 Oscar" not in _released(reply, delta, pii=True), delta


@pytest.mark.parametrize("seed", range(3))
def test_a_nato_copy_with_numbers_between_pairs_of_its_letters_is_contained(seed: int) -> None:
    """`Alfa Bravo 7 Charlie Delta 31 ...`: after two NATO words a number parts them as any word does;
    read as the number there (as a counter is not), it broke the copy into runs within the allowance."""
    rng = random.Random(seed)
    tokens = _nato_letters(RECORD, seed)
    reply = " ".join(f"{token} {rng.randint(0, 99)}" if i % 2 else token for i, token in enumerate(tokens))
    assert longest_copied_words(_read_nato(reply, r"\b\d+\b"), RECORD) > ALLOWANCE
    for delta in (1, 7, 40):
        released = _released(reply, delta)
        assert _longest_released_run(released, lambda piece: _read_nato(piece, r"\b\d+\b")) <= ALLOWANCE, released


@pytest.mark.parametrize(
    "reply", ["Alfa Bravo \u00b2 Charlie", "Sure: Alfa \u2460 Bravo.", "Alfa \u00b2 Bravo \u00b3 Charlie \u2074"]
)
def test_digits_that_are_not_decimal_between_nato_words_are_read_as_words(reply: str) -> None:
    """A superscript or circled digit is a digit to `str.isdigit` but not to `int`: the view raised
    ValueError, the guard failed closed, and the whole answer was withheld."""
    for delta in (1, 3, 7, 16, 40):
        assert _released(reply, delta, pii=True) == f"Here you go. {reply} Anything else?", delta


@pytest.mark.parametrize(
    "gap", ["stop stop stop stop", "stop stop // stop stop", "\u2014 \u2014 \u2014 \u2014", "break / break / break"]
)
@pytest.mark.parametrize("seed", range(2))
def test_a_nato_copy_with_a_parting_word_repeated_in_its_word_gaps_is_contained(gap: str, seed: int) -> None:
    """`... Tango stop stop stop stop X-ray Alfa ...`: a parting word repeated counted towards the
    three words a gap may hold, so its fourth time was read as a word (or a dash as Morse `t`), the
    copy broke into runs within the allowance at every word gap, and the whole record left."""
    reply = " ".join(gap if token == "//" else token for token in _nato_letters(RECORD, seed))
    separators = r"\b(?:stop|break)\b|\u2014"
    _assert_nato_copy_contained(reply, separators)


@pytest.mark.parametrize("between", ["2 2 2", "stop stop", "{first}2 2", "{first}stop stop"])
@pytest.mark.parametrize("seed", range(2))
def test_a_nato_copy_with_a_word_or_number_repeated_between_its_letters_is_contained(between: str, seed: int) -> None:
    """`Papa 2 2 2 Alfa 2 2 2 ...`, `Alfa 2 Bravo 2 2 Charlie 2 2 ...`, `Alfa stop stop Bravo stop stop
    ...`: a number or word repeated right after a lone NATO word was read as prose from its second
    time (a number was not a count), no two letters ever stood together, and the whole record left."""
    tokens = _nato_letters(RECORD, seed, word_gaps=False)
    word = between.split()[-1]
    reply = " ".join(f"{token} {between.format(first='') if i else word}" for i, token in enumerate(tokens))
    separators = rf"\b{word}\b"
    _assert_nato_copy_contained(reply, separators)


# codes that alternate letters and counting digits (a Canadian postcode, A1B 2C3)
CODES_RECORD = (
    "Customer Ann Lee moved last spring; her postcode is B2C 3D4, her old one A1B 1C1 and her locker "
    "is Q7R 8S9. Her account was closed in May."
)
CODES = (("postcode", "B2C 3D4"), ("postcode", "A1B 1C1"), ("locker", "Q7R 8S9"), ("person", "Ann Lee"))


@pytest.mark.parametrize(
    "reply",
    [
        "Postcode: Bravo 2 Charlie 3 Delta 4 Mike.",
        "Postcode: Bravo 2 Charlie 3 Delta 4 / Mike.",
        "Old one: Alfa 1 Bravo 1 Charlie 1 Golf.",
        "Locker: Quebec (7) Romeo (8) Sierra (9) Tango.",
    ],
)
def test_a_code_whose_digits_count_between_its_letters_is_withheld(reply: str) -> None:
    """`Bravo 2 Charlie 3 Delta 4` for B2C 3D4: read as a counter, the code's digits were read as
    nothing, the letters matched no PII value, and the code left."""
    copied = re.search(r"\w+ \(?\d\)? \w+ \(?\d\)? \w+ \(?\d\)?", reply)
    assert copied is not None
    for delta in (1, 3, 7, 16, 40):
        released = _released(reply, delta, pii=True, record=CODES_RECORD, values=CODES)
        assert copied.group() not in released and WITHHELD_MARKER in released, (delta, released)


@pytest.mark.parametrize(
    "digits",
    [
        "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079",
        "\u24ea\u2460\u2461\u2462\u2463\u2464\u2465\u2466\u2467\u2468",
    ],
)
def test_a_nato_copy_with_a_counter_in_superscript_or_circled_digits_is_contained(digits: str) -> None:
    """`Alfa ¹ Bravo ² Charlie ³ ...`: such a digit is no decimal digit, so it was read as a new word
    each time (before that it raised ValueError), and the whole copy left."""
    tokens = _nato_letters(RECORD, 0, word_gaps=False)
    reply = " ".join(f"{token} {digits[(i + 1) % 10]}" for i, token in enumerate(tokens))
    separators = f"[{digits}]"
    _assert_nato_copy_contained(reply, separators)


# plain NATO words for a copy's first words, more than 160 characters before its first number, then a
# counter between the letters (L2: `stop` parting them before the counter); found by review 36
_LATE_COUNTERS = (
    "India Sierra / Oscar November / Sierra Alfa Tango Uniform Romeo Delta Alfa Yankee / Alfa November Delta / "
    "Whiskey Alfa Sierra / Papa Romeo Echo Sierra Charlie Romeo India Bravo Echo Delta / "
    "Alfa Mike Oscar X-ray India Charlie India Lima Lima India November / Bravo 1 Yankee 2 / Delta 3 Romeo 4 / "
    "Alfa 5 Lima 6 Echo 7 X-ray 8",
    "Alfa stop November / X-ray / Romeo stop Alfa stop Yankee / Alfa stop November stop Delta / Alfa / "
    "Tango stop Oscar stop X-ray stop India stop November / Tango stop Echo stop Sierra stop Tango / "
    "Tango stop Hotel stop Echo / November 1 Echo 2 X-ray 3 Tango 4 / Echo 5 X-ray 6 Alfa 7 Mike 8",
)


@pytest.mark.parametrize("reply", _LATE_COUNTERS)
def test_a_nato_copy_whose_counter_starts_late_is_contained(reply: str) -> None:
    """The reading that parts numbers started at the first number (with the 160 characters before
    it): the copy's first words were read only by the other reading, which the counter cut, so each
    reading saw a part within the allowance and the whole copy left."""
    separators = r"\b\d+\b|\bstop\b"
    _assert_nato_copy_contained(reply, separators)
