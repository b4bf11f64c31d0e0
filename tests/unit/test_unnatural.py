"""UnnaturalTextDetector: encoded runs are found with their offsets, benign answers pass, streaming
gives the same spans however the text is split."""

from __future__ import annotations

import base64
import binascii
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragshield.errors import ConfigError
from ragshield.guards.release.unnatural import UnnaturalSpan, UnnaturalTextDetector

RECORD = (
    "Patient Maria Lopez, born 12 March 1961, lives at 48 Elm Road, Leeds; she has type 2 diabetes "
    "and takes metformin 500 mg twice a day."
)
BEFORE = "Thank you for your question. Here is what I found in the notes: "
AFTER = " I hope this helps, and please see your doctor if the symptoms get worse."

MORSE = {
    "a": ".-", "b": "-...", "c": "-.-.", "d": "-..", "e": ".", "f": "..-.", "g": "--.", "h": "....",
    "i": "..", "j": ".---", "k": "-.-", "l": ".-..", "m": "--", "n": "-.", "o": "---", "p": ".--.",
    "q": "--.-", "r": ".-.", "s": "...", "t": "-", "u": "..-", "v": "...-", "w": ".--", "x": "-..-",
    "y": "-.--", "z": "--..",
}  # fmt: skip
NATO = [
    "Alfa",
    "Bravo",
    "Charlie",
    "Delta",
    "Echo",
    "Foxtrot",
    "Golf",
    "Hotel",
    "India",
    "Juliett",
    "Kilo",
    "Lima",
    "Mike",
    "November",
    "Oscar",
    "Papa",
    "Quebec",
    "Romeo",
    "Sierra",
    "Tango",
    "Uniform",
    "Victor",
    "Whiskey",
    "Xray",
    "Yankee",
    "Zulu",
]
SLACK = 3
LETTERS = "".join(c for c in RECORD.lower() if c.isalpha())

ENCODED = {
    "base64": base64.b64encode(RECORD.encode()).decode(),
    "base32": base64.b32encode(RECORD.encode()).decode(),
    "base85": base64.b85encode(RECORD.encode()).decode(),
    "hex": binascii.hexlify(RECORD.encode()).decode(),
    "binary": " ".join(f"{b:08b}" for b in RECORD.encode()),
    "decimal": " ".join(str(b) for b in RECORD.encode()),
    "octal": "".join(f"\\{b:03o}" for b in RECORD.encode()),
    "morse": " ".join(MORSE[c] for c in LETTERS),
    "char-per-line": "\n".join(RECORD[:60]),
    "numbered-lines": "\n".join(f"{i}. {c}" for i, c in enumerate(RECORD[:40], 1)),
    "html-tags": "".join(f"<b>{c}</b>" for c in RECORD[:40]),
    "filler": "".join(c + "x" for c in RECORD[:60]),
    "nato": " ".join(NATO[ord(c) - 97] for c in LETTERS[:30]),
    "regional-indicators": "".join(chr(0x1F1E6 + ord(c) - 97) for c in LETTERS),
    "tag-characters": "".join(chr(0xE0000 + ord(c)) for c in RECORD),
}

BENIGN = {
    "prose-en": (
        "A sore throat with a mild fever is most often caused by a virus and gets better on its own within "
        "a week. Rest, drink warm fluids and take paracetamol if the fever bothers you. It's fine to eat."
    ),
    "prose-es": (
        "El dolor de garganta con fiebre leve suele deberse a un virus y mejora solo en una semana. "
        "Descanse, beba líquidos tibios y tome paracetamol si la fiebre le molesta."
    ),
    "prose-de": (
        "Halsschmerzen mit leichtem Fieber werden meist von Viren verursacht und bessern sich innerhalb "
        "einer Woche. Die Arbeitsunfähigkeitsbescheinigung stellt Ihr Hausarzt aus."
    ),
    "prose-fr": (
        "Un mal de gorge avec une légère fièvre est le plus souvent d'origine virale et guérit seul en une "
        "semaine. Reposez-vous et prenez du paracétamol si besoin."
    ),
    "prose-zh": (
        "喉咙痛伴有轻微发烧，大多是病毒感染引起的，通常一周内会自行好转。"
        "请多休息，多喝温水，发烧不舒服时可以服用对乙酰氨基酚。"
    ),
    "prose-ja": (
        "軽い発熱を伴うのどの痛みは、ほとんどがウイルスによるもので、一週間ほどで自然に治ります。"
        "十分に休み、温かい飲み物をとってください。"
    ),
    "prose-ru": (
        "Боль в горле с небольшой температурой чаще всего вызвана вирусом и проходит сама за неделю. "
        "Я и брат в субботу были у врача, и он сказал, что всё в порядке."
    ),
    "python": (
        "```python\ndef mean(values: list[float]) -> float:\n    if not values:\n"
        '        raise ValueError("values is empty")\n    return sum(values) / len(values)\n```'
    ),
    "shell": "```bash\ngrep -rn 'TODO' src/ | wc -l\nfind . -name '*.log' -mtime +7 -exec rm {} \\;\n```",
    "table": (
        "| Year | Revenue ($M) | Growth |\n|------|--------------|--------|\n| 2019 | 1,234.5 | 3.2% |\n"
        "| 2020 | 1,310.0 | 6.1% |\n| 2021 | 1,402.7 | 7.1% |\n| 2022 | 1,520.3 | 8.4% |\n"
    ),
    "contact": (
        "I have noted your details: John Miller, 742 Evergreen Terrace, Springfield, IL 62704, phone "
        "+1 (555) 123-4567, email john.miller@example.com."
    ),
    "url": "Read it at https://www.example.org/guidelines/v2/hypertension.html?lang=en&page=3#dosage today.",
    "dates": "Your appointments are on 2024-03-15 at 09:30, on 15/04/2024 at 14:00 and on May 3, 2024.",
    "dosage": (
        "- ibuprofen 400 mg every 6-8 h with food (max 1200 mg/day)\n- paracetamol 500-1000 mg every 4-6 h\n"
        "- omeprazole 20 mg once daily before breakfast"
    ),
    "numbered-list": (
        "1. Rest as much as you can for the next two days.\n2. Drink at least two litres of water a day.\n"
        "3. Take paracetamol if the fever goes above 38.5 °C.\n4. Call your doctor if the cough lasts."
    ),
    "order-id": "Your order #A12-99812 was shipped on 12 March; the tracking number is 1Z999AA10123456784.",
}


def spans_of(text: str, sizes: list[int] | None = None, **params: object) -> list[UnnaturalSpan]:
    detector = UnnaturalTextDetector(**params)  # type: ignore[arg-type]
    out: list[UnnaturalSpan] = []
    if sizes is None:
        out.extend(detector.feed(text))
    else:
        i = 0
        for size in sizes:
            out.extend(detector.feed(text[i : i + size]))
            i += size
        out.extend(detector.feed(text[i:]))
    out.extend(detector.flush())
    return out


def covered(spans: list[UnnaturalSpan]) -> set[int]:
    return {i for span in spans for i in range(span.start, span.end)}


@pytest.mark.parametrize("family", sorted(ENCODED))
def test_blob_in_prose_is_covered_and_the_prose_is_not(family: str) -> None:
    blob = ENCODED[family]
    assert len(blob) >= 60
    text = BEFORE + blob + AFTER
    start, end = len(BEFORE), len(BEFORE) + len(blob)
    spans = spans_of(text)
    flagged = covered(spans)
    assert set(range(start, end)) <= flagged, f"{family}: blob not fully covered"
    # spans end where their cost peaked: at most a separator and a one-letter word ("I") of prose
    assert flagged <= set(range(start - SLACK, end + SLACK)), f"{family}: prose flagged"
    detector = UnnaturalTextDetector()
    assert all(span.score >= detector.threshold and span.start < span.end for span in spans)


@pytest.mark.parametrize("name", sorted(BENIGN))
def test_benign_answers_produce_no_span(name: str) -> None:
    assert spans_of(BENIGN[name]) == []
    assert spans_of(BENIGN[name], sizes=[3] * (len(BENIGN[name]) // 3)) == []


def test_two_blobs_give_two_spans_and_spare_the_prose_between() -> None:
    middle = " The second part of the note, which the doctor wrote a week later, reads as follows: "
    first, second = ENCODED["base64"], ENCODED["hex"]
    text = BEFORE + first + middle + second + AFTER
    flagged = covered(spans_of(text))
    a = len(BEFORE)
    b = a + len(first) + len(middle)
    assert set(range(a, a + len(first))) <= flagged
    assert set(range(b, b + len(second))) <= flagged
    assert not flagged & set(range(a + len(first) + SLACK, b - SLACK))


def test_offsets_count_from_the_first_delta_across_many_deltas() -> None:
    prose = (BENIGN["prose-en"] + " ") * 20
    text = prose + ENCODED["base64"]
    flagged = covered(spans_of(text, sizes=[7] * (len(text) // 7)))
    assert flagged == set(range(len(prose), len(text)))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(sorted(ENCODED) + sorted(BENIGN)), min_size=1, max_size=5),
    st.lists(st.integers(min_value=0, max_value=40), max_size=200),
)
def test_any_split_gives_the_same_spans_as_the_whole(parts: list[str], sizes: list[int]) -> None:
    text = " ".join(ENCODED.get(p) or BENIGN[p] for p in parts)
    whole = spans_of(text)
    split = spans_of(text, sizes=sizes)
    assert covered(split) == covered(whole)
    # the score a run reached does not depend on the split either
    assert max((s.score for s in split), default=0.0) == max((s.score for s in whole), default=0.0)


def test_holdback_bounds_when_a_character_is_decided() -> None:
    """A character more than holdback_chars behind the stream's end never becomes flagged later."""
    detector = UnnaturalTextDetector()
    text = BEFORE + ENCODED["base32"] + AFTER + BENIGN["prose-de"]
    decided_until = 0
    for i, ch in enumerate(text):
        for span in detector.feed(ch):
            assert span.start >= i + 1 - detector.holdback_chars
            assert span.start >= decided_until - detector.holdback_chars
        decided_until = i + 1


def test_empty_deltas_and_a_100kb_answer_do_not_raise() -> None:
    detector = UnnaturalTextDetector()
    assert detector.feed("") == []
    assert detector.flush() == []
    rng = random.Random(3)
    pieces = list(BENIGN.values()) + list(ENCODED.values())
    text = "\n".join(rng.choice(pieces) for _ in range(600))[:100_000]
    detector = UnnaturalTextDetector()
    spans: list[UnnaturalSpan] = []
    for i in range(0, len(text), 4):
        spans.extend(detector.feed(text[i : i + 4]))
        spans.extend(detector.feed(""))
    spans.extend(detector.flush())
    assert spans and all(0 <= s.start < s.end <= len(text) for s in spans)
    assert detector.flush() == []


def test_unusual_characters_do_not_raise() -> None:
    text = "\x00\ud800\U0010ffff\u200b\u0301\u0301\u0301e\ufeff" * 50
    assert all(s.end <= len(text) for s in spans_of(text))


@pytest.mark.parametrize(
    "params",
    [{"min_run_chars": 0}, {"threshold": 0}, {"threshold": -1.0}, {"holdback_chars": 10}, {"drop": 0.0}],
)
def test_bad_parameters_raise_config_error(params: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        UnnaturalTextDetector(**params)  # type: ignore[arg-type]


def test_non_string_delta_raises() -> None:
    with pytest.raises(TypeError):
        UnnaturalTextDetector().feed(b"abc")  # type: ignore[arg-type]


class _LetterByLetter(UnnaturalTextDetector):
    """The detector with the one-step word path turned off: every character scored alone."""

    __slots__ = ()
    _word_steps = False


def _feed_all(detector: UnnaturalTextDetector, text: str, sizes: list[int]) -> list[UnnaturalSpan]:
    out: list[UnnaturalSpan] = []
    i = 0
    for size in sizes:
        out.extend(detector.feed(text[i : i + size]))
        i += size
    out.extend(detector.feed(text[i:]))
    return out + detector.flush()


# words that exercise every rule a word step must reproduce: doubled and alternating letters,
# clusters, vowel-poor words, long words, NATO words, repeats, one-letter words, camelCase, caps
_WORDS = (
    "the", "patient", "hello", "there", "were", "a", "I", "x", "strengths", "rhythm", "tsktsk", "aaaa",
    "abababab", "hotel", "Echo", "lima", "Lima", "getElement", "USA", "Hello", "cafe", "café",
    "supercalifragilisticexpialidocious", "mg", "llama", "bookkeeper", "Mississippi", "it's",
)  # fmt: skip
_GLUE = (
    " ", " ", " ", "  ", ", ", ". ", "\n", "\n\n", "", "4", " 400 ", " 8 ", "\\", "-", " - ", " -- ", " . ", "'",
    "\u0301", "<b>", "中", " 72 101 ",
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_GLUE)), max_size=120),
    st.lists(st.integers(min_value=0, max_value=70), max_size=60),
    st.sampled_from([{}, {"min_run_chars": 8, "threshold": 2.0, "holdback_chars": 24, "batch_chars": 4}]),
)
def test_words_in_one_step_give_the_spans_of_letter_by_letter_scoring(
    pieces: list[tuple[str, str]], sizes: list[int], params: dict[str, float]
) -> None:
    """The fast path for plain words is exact: same spans and scores, to the bit, on any text."""
    text = "".join(word + glue for word, glue in pieces)
    fast = _feed_all(UnnaturalTextDetector(**params), text, sizes)  # type: ignore[arg-type]
    slow = _feed_all(_LetterByLetter(**params), text, sizes)  # type: ignore[arg-type]
    assert fast == slow


# vowel-poor words next to vowel-rich ones, so the running share crosses the sparse-vowel floor
_SHARE_WORDS = ("drink", "tests", "lungs", "strengths", "rhythm", "pst", "the", "aeiou", "area", "eerie", "blood")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_SHARE_WORDS), st.sampled_from((" ", " ", ", ", "\n"))), max_size=120),
    st.lists(st.integers(min_value=1, max_value=40), max_size=60),
)
def test_vowel_poor_words_in_one_step_leave_the_letter_by_letter_state(
    pieces: list[tuple[str, str]], sizes: list[int]
) -> None:
    """A vowel-poor word takes one step only while the share keeps the sparse-vowel rule off: the
    scanner's whole state (the running share's float included) equals letter-by-letter scoring's
    after every delta."""
    text = "".join(word + glue for word, glue in pieces)
    fast, slow = UnnaturalTextDetector(batch_chars=1), _LetterByLetter(batch_chars=1)
    i = 0
    for size in [*sizes, len(text)]:
        assert fast.feed(text[i : i + size]) == slow.feed(text[i : i + size])
        assert fast._state == slow._state
        i += size


@pytest.mark.parametrize("name", sorted(ENCODED) + sorted(BENIGN))
def test_words_in_one_step_change_nothing_on_the_samples(name: str) -> None:
    text = BEFORE + (ENCODED.get(name) or BENIGN[name]) + AFTER
    sizes = [4] * (len(text) // 4)
    assert _feed_all(UnnaturalTextDetector(), text, sizes) == _feed_all(_LetterByLetter(), text, sizes)
