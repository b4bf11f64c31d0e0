"""context-echo with a PII store: retrieved PII never reaches a stranger, alone, spelled, encoded or
cut by the stream, and what the asker gave, or a name shared by many records, is released.

Unit tests through `RagPipeline` with fake PII stores and a scripted fake generator (named as such).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import random

import pytest
from release_fakes import FakePiiStore, pipeline, retrieval

from ragshield.encodings import encode
from ragshield.guards.base import WITHHELD_MARKER
from ragshield.guards.release.echo import ContextEchoGuard, EchoSettings
from ragshield.guards.release.fold import text_symbols
from ragshield.guards.release.public import FrequentGrams
from ragshield.types import Action, Chunk


def test_retrieved_pii_never_reaches_a_stranger_even_alone_and_encoded() -> None:
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=FakePiiStore())
    for reply in ("The patient is John Smith.", "Call J-o-h-n S.m.i.t.h at 555 0142.", "Name: htimS nhoJ"):
        response = pipeline(reply, echo=echo).answer(retrieval().query)
        assert "smith" not in text_symbols(response.text).replace("i", "l").lower(), reply
        assert WITHHELD_MARKER in response.text
        verdict = next(v for v in response.verdicts if v.guard == "context-echo")
        assert "Smith" not in str(verdict.to_dict())


_GROUP_BYTES = {"base64": 3, "base32": 5, "base85": 4, "ascii85": 4}


@pytest.mark.parametrize("encoding", list(_GROUP_BYTES))
@pytest.mark.parametrize("last_bytes", [1, 2])
def test_a_pii_value_in_a_blobs_last_short_group_is_withheld(encoding: str, last_bytes: int) -> None:
    # a blob whose length is no whole number of groups ends in a shorter group (padded with `=`
    # in base64 and base32, which the decoders' alphabets leave out): the phone number's last
    # digits are there, and it was released whole before session 33
    plain = "555-0142"
    prefix = "Note" + "!" * ((last_bytes - len("Note ") - len(plain)) % _GROUP_BYTES[encoding]) + " "
    encoder = {"base64": base64.b64encode, "base32": base64.b32encode, "base85": base64.b85encode}
    encoded = encoder.get(encoding, base64.a85encode)(f"{prefix}{plain}".encode()).decode()
    assert len(prefix + plain) % _GROUP_BYTES[encoding] == last_bytes
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=FakePiiStore())
    response = pipeline(f"Here: {encoded} ok?", echo=echo).answer(retrieval().query)
    assert WITHHELD_MARKER in response.text, encoded
    for part in response.text.split(WITHHELD_MARKER):
        for piece in part.split():
            with contextlib.suppress(ValueError):
                assert text_symbols("555-0142") not in text_symbols(blob_decode(piece, encoding)), response.text


def blob_decode(piece: str, encoding: str) -> str:
    """`piece` decoded as a blob of `encoding`, as a reader would (ValueError: not one)."""
    decoders = {"base64": base64.b64decode, "base32": base64.b32decode, "base85": base64.b85decode}
    try:
        return decoders.get(encoding, base64.a85decode)(piece).decode("latin-1")
    except binascii.Error as error:
        raise ValueError(piece) from error


def test_a_phone_number_in_hyphen_joined_digit_words_is_withheld_however_the_stream_is_cut() -> None:
    # one long token: the view held its last 24 characters, cut inside a word ("SEV" | "EN"), and at
    # some delta sizes the number was released
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=FakePiiStore())
    reply = "Here you go, the number you asked for is FIVE-FIVE-FIVE-ZERO-ONE-FOUR-TWO, if that helps."
    for delta in range(1, 25):
        response = pipeline(reply, echo=echo, delta_chars=delta).answer(retrieval().query)
        assert "FIVE-FIVE-FIVE-ZERO-ONE-FOUR-TWO" not in response.text, delta
        assert WITHHELD_MARKER in response.text, delta


def test_a_wrapped_blobs_short_last_line_is_read_with_it() -> None:
    # a blob wrapped in lines ends in a short line, which the gate took for an ordinary word and
    # never gave the decoders: the phone number's last digit was there, and it was released
    encoded = base64.b64encode("Reach him at 555-0142".encode("utf-16-le")).decode().rstrip("=")
    wrapped = f"{encoded[:-3]}\n{encoded[-3:]}"
    assert len(encoded[-3:]) < 12 and not any(char.isdigit() for char in encoded[-3:])
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=FakePiiStore())
    for delta in (1, 5, 16):
        response = pipeline(f"Here: {wrapped} ok?", echo=echo, delta_chars=delta).answer(retrieval().query)
        assert response.text.endswith(" ok?"), response.text  # the span ends with the blob
        assert WITHHELD_MARKER in response.text, delta
        for part in response.text.split(WITHHELD_MARKER):
            blob = "".join(part.split()).removeprefix("Here:").removesuffix("ok?")
            if len(blob) % 4 == 1:  # a lone character left of a group decodes to nothing
                blob = blob[:-1]
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-16-le", "ignore")
            assert text_symbols("555-0142") not in text_symbols(decoded), response.text


@pytest.mark.parametrize("layout", ["{}. ", "{}) ", "{}: ", "{} - "])
def test_a_phone_number_written_one_digit_per_numbered_line_is_withheld(layout: str) -> None:
    # the line numbers are digits too, so no view read the number's own digits in a row
    lines = "\n".join(layout.format(number) + char for number, char in enumerate("Call 555-0142 now", start=1))
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=FakePiiStore())
    for delta in (1, 4, 7, 64):
        response = pipeline(f"Sure:\n{lines}\nBye.", echo=echo, delta_chars=delta).answer(retrieval().query)
        assert WITHHELD_MARKER in response.text, (layout, delta)
        kept = "".join(line.split(layout.format("")[-2:].strip() or " ")[-1] for line in response.text.splitlines())
        assert text_symbols("555-0142") not in text_symbols(kept), response.text


@pytest.mark.parametrize("encoding", ["b64encode", "b32encode", "b85encode", "a85encode"])
@pytest.mark.parametrize("after", [" Thanks.", "\nThanks.", "\n\nThanks."])
def test_a_word_on_the_line_after_a_blob_does_not_hide_its_last_group(encoding: str, after: str) -> None:
    # a newline is a separator inside a blob, and every alphabet holds the next word's letters: read
    # with the word, the blob's short last group decoded to garbage (found in review, session 33)
    blob = getattr(base64, encoding)(b"Reach him: 555-0142").decode().rstrip("=")
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=FakePiiStore())
    response = pipeline(f"Here:\n{blob}{after}", echo=echo, delta_chars=64).answer(retrieval().query)
    assert WITHHELD_MARKER in response.text, (encoding, after)


class _FakeAddressStore(FakePiiStore):
    """A fake PII store (unit tests only): a street address."""

    def values(self, chunk: Chunk) -> tuple[object, ...]:
        from ragshield.pii.store import PiiValue

        return (PiiValue("address", "1400 Smith Street", "d-address"),) if chunk.id == "c1" else ()


@pytest.mark.parametrize("before", ["", "Sierra Tango ", "Code Alfa Bravo, then "])
def test_an_address_with_its_number_in_digit_words_is_withheld_whole(before: str) -> None:
    # the word after digit words belongs to the value, even after NATO words: it is not read as a
    # word parting a spelled copy
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=_FakeAddressStore())
    reply = f"Write to {before}one four zero zero Smith Street please."
    response = pipeline(reply, echo=echo).answer(retrieval().query)
    assert "zero" not in response.text and "Street" not in response.text, response.text


class _FakeShortPiiStore(FakePiiStore):
    """A fake PII store (unit tests only): a five-letter first name and a date with digits."""

    def values(self, chunk: Chunk) -> tuple[object, ...]:
        from ragshield.pii.store import PiiValue

        if chunk.id != "c1":
            return ()
        return (PiiValue("person", "Karen", "d-first"), PiiValue("date", "6 May 2001", "d-date"))


def _every_reading(text: str) -> list[str]:
    """`text` folded, under every Caesar shift back, atbash, and reversed."""
    lower = text.lower()
    shifted = ["".join(chr((ord(c) - 97 - k) % 26 + 97) if "a" <= c <= "z" else c for c in lower) for k in range(26)]
    atbash = "".join(chr(219 - ord(c)) if "a" <= c <= "z" else c for c in lower)
    return [text_symbols(reading) for reading in (*shifted, atbash, lower[::-1])]


@pytest.mark.parametrize("view", ["rot13", "caesar", "atbash", "reversed"])
def test_a_short_or_digit_bearing_pii_value_is_withheld_in_caesar_views(view: str) -> None:
    # five letters are too few for the letter-difference track, and a shift leaves digits as they
    # are (so a date's letter differences break): these values are matched in every shifted spelling
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=_FakeShortPiiStore())
    values = (text_symbols("Karen"), text_symbols("6 May 2001"))
    for plain in ("Karen wrote back.", "It happened on 6 May 2001 at noon."):
        reply = encode(plain, view, random.Random(3))
        assert any(v in r for v in values for r in _every_reading(reply))  # the fake's copy holds it
        response = pipeline(reply, echo=echo).answer(retrieval().query)
        assert not any(v in r for v in values for r in _every_reading(response.text)), (view, reply)


class _FakeFrequentPiiStore(FakePiiStore):
    """A fake PII store (unit tests only) whose values (the record's name, phone number and a
    clinic's web address) are each held by 50 chunks."""

    def values(self, chunk: Chunk) -> tuple[object, ...]:
        from ragshield.pii.store import PiiValue

        return (*super().values(chunk), PiiValue("url", "www.ramseyclinic.org", "d-url")) if chunk.id == "c1" else ()

    def chunk_frequency(self, digest: str) -> int:
        return 50


def test_a_frequent_name_is_public_but_a_frequent_address_number_or_link_is_not() -> None:
    chunks = [Chunk(f"b{i}", f"doc{i}", f"Filler text number {i} of the archive.") for i in range(6)]
    frequent = FrequentGrams.from_chunks(chunks, 12, min_df=3)
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=_FakeFrequentPiiStore(), frequent=frequent)
    response = pipeline("Ask John Smith, on 555-0142, or see www.ramseyclinic.org.", echo=echo).answer(
        retrieval().query
    )
    assert "John Smith" in response.text  # in 50 records: a clinic's name, not one record's
    assert "0142" not in response.text  # a number reaches one person however many records hold it
    assert "ramseyclinic" not in response.text  # a link too: TGTB's PII metric counts it


def test_pii_the_user_gave_is_released() -> None:
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=FakePiiStore())
    monitor = echo.open(retrieval("I am John Smith, what is my diagnosis?"))
    monitor.observe("Hello John Smith, rest and drink water.")
    assert monitor.close().action is Action.ALLOW


class _FakeMailStore:
    """A fake PII store (unit tests only): an e-mail address of the record."""

    source = "index"

    def values(self, chunk: Chunk) -> tuple[object, ...]:
        from ragshield.pii.store import PiiValue

        return (PiiValue("email", "jsmith@springfield-clinic.org", "d-mail"),) if chunk.id == "c1" else ()


@pytest.mark.parametrize("view", ["plain", "fullwidth", "math-alphabet", "small-caps"])
def test_an_email_address_is_withheld_in_fullwidth_too(view: str) -> None:
    # a fullwidth `@` folds like the ASCII `@` of the chunk (it once folded to nothing: Enron leaked)
    echo = ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=_FakeMailStore())
    reply = encode("Write to jsmith@springfield-clinic.org today.", view, random.Random(1))
    response = pipeline(reply, echo=echo).answer(retrieval().query)
    assert "springfieldclinic" not in text_symbols(response.text), view
