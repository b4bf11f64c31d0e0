"""The views a copied text can be released in (`ragshield.encodings`): each one carries the whole
text (round trip), hides it from a verbatim match (it changes the text), and is reproducible."""

from __future__ import annotations

import random
import re
import string
import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ragshield.encodings import (
    DECODABLE_VIEWS,
    EXACT_VIEWS,
    VIEWS,
    ViewDecodeError,
    decode,
    encode,
    spelled_form,
)
from ragshield.encodings.braille import braille, unbraille
from ragshield.encodings.ciphers import LEET_RULES, shift_keys, shift_letters
from ragshield.errors import ConfigError

ISSUE_13_VIEWS = (  # noqa: SIM905
    "plain case separators zero-width homoglyph fullwidth combining math-alphabet small-caps regional-indicator "
    "tag-chars latin-hook reversed rot13 caesar rot47 atbash leetspeak base64 base64-urlsafe base32 base85 ascii85 "
    "base64-of-base64 base64-utf16 hex hex-utf16 uuencode url url-double url-mixed html-entity binary octal-escapes "
    "decimal-codes unicode-escapes digits-as-words html-tags numbered-lines one-per-line nato morse interleaved "
    "doubled reordered-groups one-edit"
).split()
RECORD = (
    "Patient: José Müller (DOB 1961-04-02), 12 Elm St., Springfield. Email jm@example.org; phone 555-0123.\n"
    'Notes: "itchy rash" on both arms & <3 days>; tried 1% hydrocortisone.\tNo fever 😀 C:\\temp \\u0041'
)
_WORD = st.text(alphabet=string.ascii_letters, min_size=1, max_size=9)


def _rng(seed: int) -> random.Random:
    return random.Random(seed)


@pytest.mark.parametrize("view", VIEWS)
def test_the_record_encodes_in_every_view(view: str) -> None:
    encoded = encode(RECORD, view, _rng(0))
    assert isinstance(encoded, str)
    assert (encoded == RECORD) == (view == "plain")


def test_views_are_the_issue_13_list_in_its_spelling() -> None:
    assert list(VIEWS) == ISSUE_13_VIEWS
    assert set(EXACT_VIEWS) <= set(DECODABLE_VIEWS) <= set(VIEWS)
    assert {"caesar", "homoglyph", "reordered-groups", "one-edit"}.isdisjoint(DECODABLE_VIEWS)


@pytest.mark.parametrize("view", EXACT_VIEWS)
@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80), seed=st.integers(0, 2**32))
def test_exact_views_round_trip_any_unicode_text(view: str, text: str, seed: int) -> None:
    assert decode(encode(text, view, _rng(seed)), view) == text


@pytest.mark.parametrize("view", EXACT_VIEWS)
def test_exact_views_round_trip_the_record(view: str) -> None:
    for seed in range(20):
        assert decode(encode(RECORD, view, _rng(seed)), view) == RECORD


@pytest.mark.parametrize("view", ["nato", "morse"])
@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=80), seed=st.integers(0, 2**32))
def test_spelled_views_round_trip_their_letters_and_digits(view: str, text: str, seed: int) -> None:
    assert decode(encode(text, view, _rng(seed)), view) == spelled_form(text, view)


def test_spelled_form_keeps_letters_digits_and_word_breaks() -> None:
    assert spelled_form("José Müller, DOB 1961-04-02", "nato") == "JOSE MULLER DOB 19610402"
    assert spelled_form("José Müller, DOB 1961-04-02", "morse") == "JOSE MULLER, DOB 1961-04-02"
    with pytest.raises(ConfigError):
        spelled_form("x", "base64")


_DIGIT_WORDS = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
_TOKEN = st.one_of(
    _WORD.filter(lambda word: word.lower() not in _DIGIT_WORDS),
    st.from_regex(r"[0-9]{1,6}", fullmatch=True),
    st.sampled_from([",", ".", "(", ")", "%", ":", "/", "@", "!"]),
)


@settings(max_examples=150, deadline=None)
@given(tokens=st.lists(_TOKEN, max_size=20), gaps=st.lists(st.sampled_from([" ", "  ", "\n", ", "]), min_size=20))
def test_digits_as_words_round_trips_text_whose_digits_stand_apart(tokens: list[str], gaps: list[str]) -> None:
    text = "".join(token + gap for token, gap in zip(tokens, gaps, strict=False))
    for seed in range(3):
        encoded = encode(text, "digits-as-words", _rng(seed))
        assert not any(char.isdigit() for char in encoded)
        assert decode(encoded, "digits-as-words") == text


_DISTINCT_WORDS = st.lists(
    st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8), min_size=7, max_size=14, unique=True
)


@pytest.mark.parametrize("view", [view for view in VIEWS if view != "plain"])
@settings(max_examples=40, deadline=None)
@given(words=_DISTINCT_WORDS, seed=st.integers(0, 2**32))
def test_every_view_but_plain_changes_the_text(view: str, words: list[str], seed: int) -> None:
    text = " ".join(words)
    assume(any(char.isdigit() for char in text) and set("aeioAEIO") & set(text) and text != text[::-1])
    assert encode(text, view, _rng(seed)) != text


@pytest.mark.parametrize("view", VIEWS)
def test_a_fixed_seed_gives_a_fixed_output(view: str) -> None:
    assert encode(RECORD, view, _rng(7)) == encode(RECORD, view, _rng(7))


@pytest.mark.parametrize(
    "view", ["separators", "zero-width", "homoglyph", "combining", "caesar", "leetspeak", "interleaved", "one-edit"]
)
def test_random_details_come_from_the_rng(view: str) -> None:
    assert len({encode(RECORD, view, _rng(seed)) for seed in range(10)}) > 1


def test_unknown_views_are_refused_with_the_valid_names() -> None:
    with pytest.raises(ConfigError, match="base64-utf16"):
        encode("x", "base-64", _rng(0))
    with pytest.raises(ConfigError, match="no well-defined decoding"):
        decode("x", "caesar")


@pytest.mark.parametrize(
    ("view", "bad"),
    [
        ("base64", "ab$c"),
        ("morse", "...---..."),
        ("uuencode", "x"),
        ("nato", "Foo"),
        ("html-entity", "&#99999999999999999999;"),  # chr() overflows, not a ValueError
        ("unicode-escapes", "\\UFFFFFFFF"),
    ],
)
def test_decoding_invalid_text_says_so(view: str, bad: str) -> None:
    with pytest.raises(ViewDecodeError, match=view):
        decode(bad, view)


# What each view writes, on small examples a reader can check by eye.
@pytest.mark.parametrize(
    ("view", "expected"),
    [
        ("rot13", "Wbua Qbr"),
        ("atbash", "Qlsm Wlv"),
        ("reversed", "eoD nhoJ"),
        ("rot47", "y@9? s@6"),
        ("morse", ".--- --- .... -. / -.. --- ."),
        ("doubled", "JJoohhnn  DDooee"),
        ("one-per-line", "J\no\nh\nn\n \nD\no\ne"),
    ],
)
def test_known_outputs(view: str, expected: str) -> None:
    assert encode("John Doe", view, _rng(0)) == expected


def test_number_views_spell_code_points_and_bytes() -> None:
    assert decode("74 111 104", "decimal-codes") == "Joh"
    assert "74" in encode("J", "decimal-codes", _rng(0))
    assert encode("J", "octal-escapes", _rng(0)) == "\\112"
    assert encode("J", "binary", _rng(0)) == "01001010"
    assert encode("é", "url", _rng(0)).lower() == "%c3%a9"
    assert encode("J", "url-double", _rng(0)) in ("%254A", "%254a")
    assert encode("J 1", "nato", _rng(0)).split()[0] == "Juliett"
    assert decode("Juliet Oscar / One Niner", "nato") == "JO 19"


def test_look_alike_views_normalise_back_under_nfkc() -> None:
    text = "John Doe 1961"
    for view in ("fullwidth", "math-alphabet"):
        for seed in range(12):  # every math style
            assert unicodedata.normalize("NFKC", encode(text, view, _rng(seed))) == text


def test_tag_chars_hide_printable_ascii_in_the_tag_block() -> None:
    encoded = encode("John Doe", "tag-chars", _rng(0))
    assert all(0xE0000 <= ord(char) <= 0xE007F for char in encoded)
    assert "".join(chr(ord(char) - 0xE0000) for char in encoded).lstrip("\x01") == "John Doe"


def test_homoglyphs_include_the_look_alikes_a_hand_table_missed() -> None:
    drawn = "".join(encode("o n u h q a p e " * 4, "homoglyph", _rng(seed)) for seed in range(40))
    assert set("օոսհգզ⍺⍴℮") <= set(drawn)


def test_letter_views_keep_everything_but_letters() -> None:
    text = "Jo, 42! é"
    for view in ("small-caps", "latin-hook", "homoglyph"):
        encoded = encode(text, view, _rng(1))
        assert len(encoded) == len(text)
        assert [b for a, b in zip(text, encoded, strict=True) if a not in string.ascii_letters] == list(", 42! é")
    stacked = encode(text, "combining", _rng(1))
    assert "".join(char for char in stacked if not unicodedata.combining(char)) == text


def test_caesar_is_a_shift_of_1_to_25() -> None:
    shifts = set()
    for seed in range(60):
        encoded = encode("John Doe", "caesar", _rng(seed))
        (shift,) = [shift for shift in range(1, 26) if shift_letters("John Doe", shift) == encoded]
        shifts.add(shift)
    assert len(shifts) > 10


def test_leetspeak_replaces_only_its_six_letters() -> None:
    for seed in range(20):
        encoded = encode(RECORD, "leetspeak", _rng(seed))
        assert len(encoded) == len(RECORD) and encoded != RECORD
        for before, after in zip(RECORD, encoded, strict=True):
            assert after == before or LEET_RULES[before.lower()] == after


def test_reordered_groups_keeps_every_word_in_groups_of_3_to_6() -> None:
    words = [f"w{index}" for index in range(40)]
    encoded = encode(" ".join(words), "reordered-groups", _rng(3)).split()
    assert sorted(encoded) == sorted(words) and encoded != words
    # Each group is a run of consecutive original words, so every maximal run of consecutive words
    # in the output holds whole groups: 3 words or more, except a run that ends with the last word
    # (the remainder group may be shorter).
    runs: list[list[str]] = [[encoded[0]]]
    for word in encoded[1:]:
        if int(word[1:]) == int(runs[-1][-1][1:]) + 1:
            runs[-1].append(word)
        else:
            runs.append([word])
    assert len(runs) >= 2
    assert all(len(run) >= 3 for run in runs if run[-1] != "w39")


def test_one_edit_makes_one_edit_per_12_characters() -> None:
    text = "abcdefghijklmnopqrstuvwx"  # two blocks, no repeated letters
    for seed in range(30):
        encoded = encode(text, "one-edit", _rng(seed))
        assert len(text) - 2 <= len(encoded) <= len(text)
        assert encoded != text


def test_interleaved_puts_one_filler_letter_after_each_character() -> None:
    encoded = encode("John", "interleaved", _rng(0))
    assert len(encoded) == 8 and encoded[::2] == "John" and encoded[1::2].isalpha()


def test_numbered_lines_carry_newlines_and_tabs_in_the_text() -> None:
    text = "a\nb\t\n"
    encoded = encode(text, "numbered-lines", _rng(0))
    assert encoded.startswith("1") and decode(encoded, "numbered-lines") == text


def test_base64_of_utf16_without_bom_is_little_endian() -> None:
    import base64

    seen = {encode("Jo", "base64-utf16", _rng(seed)).rstrip("=") for seed in range(30)}
    assert base64.b64encode("Jo".encode("utf-16-le")).decode().rstrip("=") in seen


def test_math_alphabets_fill_the_holes_of_the_unicode_block() -> None:
    from ragshield.encodings.letters import MATH_STYLES, math_char

    for style in MATH_STYLES:
        for char in string.ascii_letters + string.digits:
            drawn = math_char(char, style)
            assert drawn == char or unicodedata.normalize("NFKC", drawn) == char, (style, char)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz .,;-", max_size=60))
def test_keys_typed_one_to_the_right_read_back_one_to_the_left(text: str) -> None:
    """Letters and the marks beside them; a key at a row's end (the apostrophe) has no neighbour."""
    assert shift_keys(shift_keys(text, 1), -1) == text


def test_keys_shift_by_one_key_only() -> None:
    assert shift_keys("hello, world", 1) == "jr;;p. ept;f"
    with pytest.raises(ValueError, match="1 or -1"):
        shift_keys("hello", 2)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'-", max_size=60))
def test_braille_round_trips_letters_digits_and_punctuation(text: str) -> None:
    """Grade-1 Braille; a digit followed by one of the letters a-j would need a letter sign, which
    is not written, so such texts are left out."""
    assume(not re.search(r"\d[a-jA-J]", text))
    assert unbraille(braille(text, random.Random(0))) == text
