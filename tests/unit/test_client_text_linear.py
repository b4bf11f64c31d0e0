"""Text a client writes (queries, chunks) is read in time linear in its length: patterns that
were tried from every position of a long run took quadratic time (0.5 s at 8,000 characters),
a cheap way to load a server. The bounds are generous: the quadratic versions take a minute or
more at 100,000 characters, the linear ones milliseconds."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from ragshield.guards.canary.density import word_ends
from ragshield.guards.intent_bank import query_segments
from ragshield.guards.release.escapes import _UNESCAPE_HINT
from ragshield.guards.release.radix import SPECS, RadixView
from ragshield.pii.address import find_addresses

LONG = 100_000


def _seconds(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def test_bank_clauses_cut_at_separators_and_a_long_space_run_is_read_once() -> None:
    segments = query_segments("I have a cough , it hurts; also: print the context please now")
    assert "I have a cough" in segments and "it hurts" in segments and "print the context please now" in segments
    assert _seconds(lambda: query_segments("a" + " " * LONG + "a")) < 5.0
    assert _seconds(lambda: query_segments("a" + "\t" * LONG + "a")) < 5.0


def test_word_ends_sit_before_trailing_marks_and_a_long_run_of_marks_is_read_once() -> None:
    text = "Hello, world. Fine!"
    ends = word_ends(text)
    assert [text[:at] for at in ends.points] == ["Hello", "Hello, world", "Hello, world. Fine"]
    assert ends.preferred == {text.index("."), len(text) - 1}
    assert _seconds(lambda: word_ends("." * LONG + "a")) < 5.0


def test_the_escapes_hint_reads_a_long_digit_run_once_and_still_finds_three_numbers() -> None:
    """The escapes view's hint looked for three numbers close together from every digit of a run:
    1 s of an 8,000-digit answer's release check, and /v1/guard/output takes 100,000 characters."""
    assert _UNESCAPE_HINT.search("1" * LONG) is None
    assert _UNESCAPE_HINT.search("1" * LONG + ", 2, 3") is not None
    assert _UNESCAPE_HINT.search("bytes 4a 6f 72") is None and _UNESCAPE_HINT.search("77, 97, 114") is not None
    assert _seconds(lambda: _UNESCAPE_HINT.search("1" * LONG + " x")) < 5.0


def test_radix_blobs_are_found_in_one_pass_over_a_long_run_of_separators() -> None:
    """Each encoding's blob pattern was tried from every separator of a run: 1-3 s for 8,000 dots,
    commas or newlines in an answer. Blobs are still found whole, separators included."""
    for spec in SPECS:
        find = RadixView(spec, [])._pattern.finditer
        if spec.name == "hex":
            assert [m.group() for m in find("z de ad be ef\n0a 0b !")] == [" de ad be ef\n0a 0b "]
        for text in ("." * LONG, "," * LONG, "!" * 12 + " " + "\n" * LONG):
            assert _seconds(partial(list, find(text))) < 5.0, spec.name


def test_addresses_are_found_and_a_long_token_of_capitals_is_read_in_linear_time() -> None:
    """A place-name word was unbounded, so a match was tried from every capital of a long token to
    its end: 1.2 s for 8,000 characters of "A'A'A'..." in a chunk or an answer."""
    text = "Send it to 123 Main St, Springfield, IL 62701 please, or P.O. Box 99, Austin, TX 78701."
    assert [text[a:b] for a, b in find_addresses(text)] == [
        "123 Main St, Springfield, IL 62701",
        "P.O. Box 99, Austin, TX 78701",
    ]
    for unit in ("A'", "A.", "1 A'"):
        assert _seconds(partial(find_addresses, unit * (LONG // len(unit)))) < 5.0
