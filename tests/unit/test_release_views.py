"""The release guard's views: the shortcuts that keep ordinary text cheap change nothing.

`Views._words_only` decides at C speed that a delta of words (and lone numbers) reaches no
base-N decoder; it must leave the decoders the same input as deciding piece by piece (`_gate`).
`letter_differences` and the tail cuts of the escape and spelled views are checked against their
plain definitions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragshield.encodings.ciphers import DECODERS
from ragshield.encodings.spelled import MORSE_MARKS
from ragshield.guards.release.escapes import _escape_tail
from ragshield.guards.release.fold import fold_cipher, fold_text_at
from ragshield.guards.release.spelled import SpelledView
from ragshield.guards.release.views import (
    _WORDS,
    TextView,
    Views,
    cipher_differences,
    letter_differences,
    negated_differences,
)


class _Recorder:
    """A fake encoded view (tests only): records what the gate feeds it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, tuple[int, ...]]] = []

    def feed(self, text: str, owners: Sequence[int]) -> None:
        self.calls.append(("feed", text, tuple(owners)))

    def peek_tail(self) -> None:
        self.calls.append(("peek", "", ()))

    def interrupt(self) -> None:
        self.calls.append(("interrupt", "", ()))

    def flush(self) -> None:
        self.calls.append(("flush", "", ()))


class _PieceByPiece(Views):
    """`Views` without the C-speed shortcut: every delta goes through `_gate`."""

    def _words_only(self, delta: str, offset: int) -> bool:
        return False


def _gated(views: Views, text: str, sizes: list[int]) -> list[tuple[str, str, tuple[int, ...]]]:
    recorder = _Recorder()
    views.encoded = [recorder]
    offset = 0
    for size in [*sizes, len(text)]:
        piece = text[offset : offset + size]
        if piece:
            views.feed(piece, offset)
        offset += len(piece)
    views.flush()
    # consecutive feeds of adjacent text are one stream to a decoder: compare them joined
    joined: list[tuple[str, str, tuple[int, ...]]] = []
    for kind, chunk, owners in recorder.calls:
        if joined and kind == "feed" and joined[-1][0] == "feed":
            joined[-1] = ("feed", joined[-1][1] + chunk, joined[-1][2] + owners)
        else:
            joined.append((kind, chunk, owners))
    return joined


_TOKENS = ("the", "patient", "Dosage", "400", "mg", "12.5", "a1", "4a6f", "0x1F", "|", "--", "dGhlIHBhdGllbnQ=")
_SPACES = (" ", " ", "  ", "\n", "\t")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_TOKENS), st.sampled_from(_SPACES)), max_size=60),
    st.lists(st.integers(min_value=1, max_value=40), max_size=40),
)
def test_the_words_shortcut_feeds_the_decoders_what_the_gate_does(
    pieces: list[tuple[str, str]], sizes: list[int]
) -> None:
    text = "".join(token + space for token, space in pieces)
    assert _gated(Views(), text, sizes) == _gated(_PieceByPiece(), text, sizes)


def test_the_words_shortcut_agrees_with_the_gate_at_every_cut() -> None:
    texts = ("take 400 a1 ok then 4a 6f done ", "x 12 mg2 y 7 z 0x1F more ", "we 400 mg 12.5 | -- ab")
    # a lone number at a cut, then the word that drops it (or a second number) in the next delta
    texts += ("twice 400 heart 7  mg 12 3 then 40 abcdefghijkl ok 5\n", "a 400\n\nhello 9 x1y2z3w4v5u6 ")
    for text in texts:
        for cut in range(len(text) + 1):
            for second in (cut + 1, cut + 5):
                sizes = [cut, second - cut]
                assert _gated(Views(), text, sizes) == _gated(_PieceByPiece(), text, sizes), (text, sizes)


def test_a_lone_number_in_a_sentence_reaches_no_decoder_and_two_in_a_row_do() -> None:
    assert _gated(Views(), "take 400 mg twice a day ", [64]) == [("flush", "", ())]
    # the first word after a blob reaches the decoders too (it may be a wrapped blob's last line),
    # then they are interrupted; the words after it do not
    fed = [chunk for kind, chunk, _ in _gated(Views(), "bytes 4a 6f 72 ok then more ", [64]) if kind == "feed"]
    assert "".join(fed).split() == ["4a", "6f", "72", "ok"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", max_size=80), st.sampled_from(["", "a", "q", "z"]))
def test_letter_differences_are_the_differences_mod_26(letters: str, previous: str) -> None:
    joined = previous + letters
    expected = "".join(chr(97 + (ord(b) - ord(a)) % 26) for a, b in pairwise(joined))
    assert letter_differences(letters, previous) == expected


_CIPHER_TEXT = st.text(alphabet="abcxyzABZ 0129-.,", max_size=60)


@settings(max_examples=200, deadline=None)
@given(_CIPHER_TEXT)
def test_no_letter_cipher_changes_the_difference_stream_with_digits(text: str) -> None:
    plain, _ = cipher_differences(*fold_cipher(text))
    for shift in range(26):
        shifted = "".join(chr((ord(c) - 97 + shift) % 26 + 97) if "a" <= c <= "z" else c for c in text.lower())
        assert cipher_differences(*fold_cipher(shifted))[0] == plain
    atbash, _ = cipher_differences(*fold_cipher(DECODERS["atbash"](text)))
    assert atbash == negated_differences(plain)
    assert sorted(c for c in plain if c.isdigit()) == sorted(c for c in text if c.isdigit())


class _StreamRecorder:
    """A fake track (tests only): records the symbols and owners fed to it."""

    def __init__(self) -> None:
        self.symbols: list[str] = []
        self.owners: list[int] = []

    def feed(self, symbols: str, owners: Sequence[int]) -> None:
        self.symbols.append(symbols)
        self.owners.extend(owners)

    def reset(self) -> None:
        """Nothing to forget."""


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcxyzABZ 0129-.,é²٣", max_size=60), st.lists(st.integers(1, 12), max_size=12))
def test_the_digit_stream_does_not_depend_on_how_the_answer_is_split(text: str, cuts: list[int]) -> None:
    streams = []
    for sizes in ([len(text)], cuts):
        view = TextView(_StreamRecorder(), _StreamRecorder(), caesar_digits=_StreamRecorder())  # type: ignore[arg-type]
        offset = 0
        for size in [*sizes, len(text)]:
            piece = text[offset : offset + size]
            view.feed(piece, offset)
            offset += len(piece)
        streams.append(("".join(view.caesar_digits.symbols), view.caesar_digits.owners))
    assert streams[0] == streams[1]
    symbols, owners = fold_cipher(text)
    assert streams[0] == cipher_differences(symbols, owners)


_TAIL_ALPHABET = "ab1_ \n\t\u00a0\u2003é中٣%&\\x-.,\u200b#+U"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_TAIL_ALPHABET, max_size=40))
def test_the_held_tails_are_cut_where_their_definitions_say(text: str) -> None:
    # escape view: the last escape mark or the trailing letters and digits, within 12 characters,
    # with the escape mark right before those letters and digits
    floor = max(0, len(text) - 12)
    run = len(text)
    while run > floor and text[run - 1].isalnum():
        run -= 1
    if 0 < run < len(text):
        run -= 2 if text[max(0, run - 2) : run] in ("&#", "U+", "u+") else int(text[run - 1] in "\\%&")
    marks = [found for found in (text.rfind(mark, floor) for mark in "%&\\") if found != -1]
    assert _escape_tail(text) == min([len(text), run, *marks])
    assert SpelledView(track=None)._cut(text) == _spelled_cut(text)  # type: ignore[arg-type]


def _spelled_cut(text: str) -> int:
    """The spelled view's cut by its definition: the last whitespace-separated token if shorter than
    24 characters; in a longer one, its last run of letters, digits or Morse marks (Morse marks with
    the run of letters or digits before them) if shorter than 24; else nothing held."""
    token_start = len(text)
    while token_start > 0 and not text[token_start - 1].isspace():
        token_start -= 1
    if len(text) - token_start < 24:
        return token_start
    kinds = (str.isalpha, str.isdigit, lambda char: char in MORSE_MARKS)

    def run_start(end: int) -> tuple[int, object]:
        same = next((kind for kind in kinds if end > token_start and kind(text[end - 1])), None)
        start = end
        while same is not None and start > token_start and same(text[start - 1]):
            start -= 1
        return start, same

    run, kind = run_start(len(text))
    if kind is kinds[2] and run > token_start:  # Morse marks: with the word before them
        before, before_kind = run_start(run)
        if before_kind in kinds[:2]:
            run = before
    return run if kind is not None and len(text) - run < 24 else len(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abZ1٣-._é%", min_size=20, max_size=70))
def test_a_long_token_is_held_from_its_last_run_of_letters_digits_or_marks(token: str) -> None:
    # digit words joined by hyphens (`THREE-ZERO-FIVE-...`) make one long token: cut inside a word,
    # the word was read as two and a phone number spelled this way was released
    text = f"call {token}"
    assert SpelledView(track=None)._cut(text) == _spelled_cut(text)  # type: ignore[arg-type]


_UNBOUNDED_WORDS = re.compile(r"\s*(?:(?=[^\s\d]*\d)\S++\s+[^\W\d_][^\s\d]*+\s+|[^\W\d_][^\s\d]*+(?:\s+|$))*")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(alphabet="abé", min_size=1, max_size=14) | st.text(alphabet="ab4-'", min_size=1, max_size=14),
            st.sampled_from((" ", "\n", "  ", "")),
        ),
        max_size=12,
    )
)
def test_the_words_pattern_refuses_exactly_the_tokens_that_may_be_blobs(pieces: list[tuple[str, str]]) -> None:
    # one bounded pattern == words and numbers of any length, and no token of 12 characters or more
    text = "".join(token + space for token, space in pieces)
    expected = _UNBOUNDED_WORDS.fullmatch(text) is not None and re.search(r"\S{12,}", text) is None
    assert (_WORDS.fullmatch(text) is not None) == expected


class _Symbols:
    """Records what a view feeds its track (a stand-in track, unit tests only)."""

    def __init__(self) -> None:
        self.symbols = ""

    def feed(self, symbols: str, owners: object) -> None:
        self.symbols += symbols


@pytest.mark.parametrize(
    ("answer", "reading"),
    [
        # a word or a lone dash between spelled words of a NATO copy is read as nothing
        ("Alfa Bravo break Charlie One Two break Delta Echo", "abc12de"),
        ("Alfa Bravo \u2014 Charlie Delta", "abcd"),
        # followed by anything else, it is the text's own (an address after NATO words)
        ("Sierra Tango one four zero zero Smith Street", "st1400smithstreet"),
        # Morse after NATO words keeps its first letter
        ("Alfa Bravo .- -...", "abab"),
        # the same word between every pair of NATO words parts them from its second time (session 35)
        ("Alfa stop Bravo stop Charlie stop Delta", "astopbcd"),
        ("Alfa stop Bravo stop Charlie stop // stop Delta stop Echo", "astopbcde"),
        ("Alfa \u2014 Bravo \u2014 Charlie", "atbc"),
        # a parting word repeated is one word, however often (review 36: its fourth time was read
        # as a word, a dash as Morse t), also right after a lone NATO word
        ("Alfa Bravo stop stop stop stop Charlie", "abc"),
        ("Alfa Bravo stop stop // stop stop Charlie", "abc"),
        ("Alfa Bravo \u2014 \u2014 \u2014 \u2014 Charlie", "abc"),
        ("Alfa stop stop Bravo stop stop Charlie", "astopstopbc"),
        ("Alfa stop stop and Bravo stop stop Charlie", "astopstopandbstopstopc"),
        # in prose a word repeated after a lone NATO word stays the text's own, and digit words alone
        # never make a parting word
        ("Oscar said hello and Victor said Tango", "osaidhelloandvsaidt"),
        ("one and two and three", "1and2and3"),
        ("Alfa stop one stop two stop Bravo", "astop12b"),
        # and X ray inside such a copy is the x
        ("Alfa stop Bravo stop X ray stop Charlie stop Delta", "astopbxcd"),
        # two or three words taking turns part from their second round, also both across a word
        # gap; followed by a word of the text's own, they are the text's
        ("Alfa stop Bravo break Charlie stop Delta break Echo", "astopbbreakcde"),
        ("Alfa stop Bravo break Charlie over Delta stop Echo break Foxtrot", "astopbbreakcoverdef"),
        ("Alfa stop Bravo break Charlie stop / break Delta stop Echo", "astopbbreakcde"),
        ("Alfa stop Bravo break Charlie stop here we go", "astopbbreakcstopherewego"),
        ("Alfa Bravo stop break Charlie", "abstopbreakc"),
    ],
)
def test_the_spelled_view_reads_parting_words_between_spelled_words_as_nothing(answer: str, reading: str) -> None:
    for size in range(1, len(answer) + 1):  # however the answer is split
        assert _spelled_reading(answer, size) == fold_text_at(reading, list(range(len(reading))))[0], size


@pytest.mark.parametrize(
    ("answer", "kept", "parted"),
    [
        # a number between NATO words is read both ways (review 36): as the number, as a digit word
        # (a code whose digits count, B2C 3D4), and as a word parting them, however often (a counter,
        # the same number again, noise between pairs); no one rule tells which a copy holds
        ("Bravo 2 Charlie 3 Delta 4 Mike", "b2c3d4m", "bcdm"),
        ("Alfa 1 Bravo 2 Charlie 3 Delta 4 Echo", "a1b2c3d4e", "abcde"),
        ("Alfa (7) Bravo (8) Charlie (9) Delta #10 / #11 Echo", "a7b8c9d1011e", "abcde"),
        ("Alfa 0 Bravo 0 Charlie 0 Delta", "a0b0c0d", "abcd"),
        ("Alfa 1 Bravo 2 Charlie 4155550142 Delta", "a1b2c4155550142d", "abcd"),
        ("Kilo 1 Alfa 0 Bravo 1 Charlie", "k1a0b1c", "kabc"),
        ("Alfa Bravo 7 Charlie Delta 3 Echo", "ab7cd3e", "abcde"),
        ("Papa 2 2 2 Alfa 2 2 2 Tango", "p222a222t", "pat"),
        ("Alfa 2 Bravo 2 2 Charlie 2 2 Delta", "a2b22c22d", "abcd"),
        ("Charlie 1400 Oscar X-ray Foxtrot", "c1400oxf", "coxf"),
        # both readings start at the first spelled token, numbers or not
        ("Alfa Bravo Charlie", "abc", "abc"),
        ("Alfa Bravo Charlie 7 Delta", "abc7d", "abcd"),
        # followed by a word or at the answer's end, a number is the text's own in both
        ("Alfa 1 is our team name, Bravo 2 too", "a1isourteamnameb2too", "a1isourteamnameb2too"),
        ("Alfa 1 Bravo 2 Charlie 3", "a1b2c3", "abc3"),
        ("Alfa team: room 7 and 8 and 9", "ateamroom7and8and9", "ateamroom7and8and9"),
        # superscript and circled digits are numbers too (a counter `Alfa ¹ Bravo ² ...`), read as
        # their digits
        ("Alfa Bravo \u00b2 Charlie", "ab2c", "abc"),
        ("Alfa \u2460 Bravo \u2461 Charlie", "a1b2c", "abc"),
        ("Alfa Bravo \u00b2 Charlie 1 Delta", "ab2c1d", "abcd"),
    ],
)
def test_the_spelled_view_reads_a_number_between_nato_words_both_ways(answer: str, kept: str, parted: str) -> None:
    for size in range(1, len(answer) + 1):
        for numbers_part, reading in ((False, kept), (True, parted)):
            expected = fold_text_at(reading, list(range(len(reading))))[0]
            assert _spelled_reading(answer, size, numbers_part) == expected, (size, numbers_part)


_SPELLED_PIECES = (
    "Alfa",
    "Bravo",
    "X",
    "x",
    "ray",
    "X-ray",
    "stop",
    "break",
    "1",
    "2",
    "3",
    "\u2014",
    ".-",
    "one",
    "the",
    "\u00b2",
    "7 7",
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_SPELLED_PIECES), st.sampled_from((" ", " / ", "\n", ", "))), max_size=14),
    st.lists(st.integers(1, 9), max_size=20),
)
def test_the_spelled_views_reading_does_not_depend_on_how_the_answer_is_split(
    pieces: list[tuple[str, str]], cuts: list[int]
) -> None:
    # what it holds between deltas (a lone x, an X-ray before its next word, parting words, the
    # numbers counted) is read as in one piece, and at the answer's end as the text's own
    answer = "one " + "".join(token + gap for token, gap in pieces)
    for numbers_part in (False, True):
        readings = []
        for sizes in ([len(answer)], [*cuts, len(answer)]):
            track = _StreamRecorder()
            view = SpelledView(track=track, numbers_part=numbers_part)  # type: ignore[arg-type]
            offset = 0
            for size in sizes:
                view.feed(answer[offset : offset + size], offset)
                offset += len(answer[offset : offset + size])
            view.flush()
            readings.append(("".join(track.symbols), track.owners))
        assert readings[0] == readings[1], numbers_part


def _spelled_reading(answer: str, size: int, numbers_part: bool = False) -> str:
    """What the spelled view feeds its track for `answer` in deltas of `size` characters."""
    track = _Symbols()
    view = SpelledView(track=track, numbers_part=numbers_part)  # type: ignore[arg-type]
    for start in range(0, len(answer), size):
        view.feed(answer[start : start + size], start)
    view.flush()
    return track.symbols


@pytest.mark.parametrize(
    ("answer", "reading"),
    [
        # ICAO spells x with a hyphen: read as two words, a NATO copy broke at every x (session 34)
        ("Alfa Mike Oscar X-ray India Charlie India Lima Lima India November", "amoxicillin"),
        ("Echo x-ray Tango Romeo Alfa", "extra"),
        # after a word parting two spelled words, with a typographic hyphen, and in a long token
        # of words joined by hyphens, however the deltas cut it (found in review)
        ("Alfa Mike break X-ray India Charlie", "amxic"),
        ("Alfa Mike Oscar X\u2010ray India Charlie", "amoxic"),
        ("Alfa-Mike-Oscar-Papa-Golf-Hotel-X-ray-India-Charlie", "amopghxic"),
        # in prose it is the word it is, also before digit words
        ("an X-ray of one two", "anxrayof12"),
        # with a space for the hyphen, inside a NATO copy only (session 35), at its end too
        ("Alfa Mike Oscar X ray India Charlie", "amoxic"),
        ("Alfa Mike Oscar x RAY", "amox"),
        ("an X ray of one two", "anxrayof12"),
        ("Alfa Mike X rays", "amxrays"),
        # after a Morse letter, as a copy's first letter before a NATO letter, with a space after
        # one NATO word or after a word parting two
        (".- -- --- X-ray .. -.-.", "amoxic"),
        ("- . X ray -", "text"),
        ("X-ray Alfa Victor India Echo Romeo", "xavier"),
        ("X ray Alfa Victor", "xav"),
        ("Echo X ray Echo Tango", "exet"),
        ("One Four Oscar X ray Foxtrot", "14oxf"),
        ("Alfa stop X-ray stop Bravo stop Charlie", "astopxbc"),
        # in prose, at the end of the answer, before digit words or a word, it stays the word
        ("Alfa team: an X-ray of the knee", "ateamanxrayoftheknee"),
        ("Room two, see the X ray", "room2seethexray"),
        ("X-ray one two", "xray12"),
        ("X ray, then Alfa", "xraythena"),
        ("Alfa Mike X", "amx"),
    ],
)
def test_the_spelled_view_reads_x_ray_as_x_after_a_spelled_word(answer: str, reading: str) -> None:
    for size in range(1, len(answer) + 1):
        assert _spelled_reading(answer, size) == fold_text_at(reading, list(range(len(reading))))[0], size
