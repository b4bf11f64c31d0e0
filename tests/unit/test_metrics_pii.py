"""PII: the presidio-based scanner (real presidio recognizers, offline) and inventory matching."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest

from ragshield.datasets.base import PiiItem
from ragshield.errors import ConfigError
from ragshield.metrics.pii import PiiIndex, PiiScanner, inventory_from_chunks, leaked_pii, pii_key
from ragshield.types import Chunk


@pytest.fixture(scope="module")
def scanner() -> PiiScanner:
    scanner = PiiScanner()
    scanner.find("warm up a@b.com")  # loads presidio once for the module (several seconds)
    return scanner


# -- leaked_pii: exact inventory matching ---------------------------------------------------


def _item(kind: str, value: str, doc: str = "d1") -> PiiItem:
    return PiiItem(kind, value, doc)


@pytest.mark.parametrize(
    "text",
    ["call (487) 647-5938 now", "call 487.647.5938", "call 4876475938.", "call +1 487 647 5938", "1-487-647-5938"],
)
def test_phone_matches_by_digits_whatever_the_format(text: str) -> None:
    assert leaked_pii(text, [_item("phone", "(487) 647-5938")]) == {_item("phone", "(487) 647-5938")}


@pytest.mark.parametrize("text", ["id 94876475938", "4876475", "487 647 59381", "no digits here"])
def test_phone_not_matched_inside_other_numbers(text: str) -> None:
    assert leaked_pii(text, [_item("phone", "(487) 647-5938")]) == set()


def test_numbers_next_to_each_other_are_still_separated() -> None:
    inventory = [_item("dob", "08/29/2007"), _item("ssn", "819-33-8726")]
    assert leaked_pii("born 08/29/2007 (819) 33 8726", inventory) == set(inventory)


def test_text_values_need_word_boundaries_and_ignore_case() -> None:
    inventory = [_item("name", "Ann Lee"), _item("email", "Juan.Campos@Example.net")]
    assert leaked_pii("Joann Leeds wrote", inventory) == set()
    assert leaked_pii("ANN   LEE wrote to juan.campos@example.NET.", inventory) == set(inventory)


def test_index_is_reusable_and_keys_normalise_values() -> None:
    index = PiiIndex([_item("phone", "487-647-5938"), _item("email", "a@b.com"), _item("name", "  ")])
    assert len(index) == 2  # empty values are ignored
    assert {item.kind for item in index.find("mail A@B.COM or 4876475938")} == {"email", "phone"}
    assert pii_key(_item("phone", "(487) 647-5938")) == pii_key(_item("phone", "+1 487 647 5938"))


# -- PiiScanner: presidio pattern recognizers --------------------------------------------


def test_scanner_finds_the_pattern_kinds(scanner: PiiScanner) -> None:
    text = (
        "Mail juan.campos@example.net or call (097) 535-1393 / 713-853-1234. "
        "My SSN is 819-33-8726. Card 4111 1111 1111 1111, host 10.1.2.3, see http://www.enron.com/x"
    )
    found = {(match.kind, match.value) for match in scanner.find(text)}
    assert found == {
        ("email", "juan.campos@example.net"),
        ("phone", "(097) 535-1393"),  # invalid area code: caught by the NANP supplement
        ("phone", "713-853-1234"),
        ("ssn", "819-33-8726"),
        ("credit_card", "4111 1111 1111 1111"),
        ("ip", "10.1.2.3"),
        ("url", "http://www.enron.com/x"),
    }
    for match in scanner.find(text):
        assert text[match.start : match.end] == match.value


def test_weak_patterns_need_context_words(scanner: PiiScanner) -> None:
    assert scanner.find("order number 123456780 shipped") == []
    assert [match.kind for match in scanner.find("her ssn 123456780 on file")] == ["ssn"]


def test_redact_replaces_spans(scanner: PiiScanner) -> None:
    assert scanner.redact("write to a.b@example.com today") == "write to [EMAIL] today"


def test_email_validation_never_touches_the_network(
    scanner: PiiScanner, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fresh = PiiScanner(("email",))
    with caplog.at_level(logging.DEBUG):
        assert [match.value for match in fresh.find("ping someone@mail.example.co.uk")] == [
            "someone@mail.example.co.uk"
        ]
    assert not any(record.levelno >= logging.WARNING for record in caplog.records)
    assert not (tmp_path / "cache").exists()  # no suffix-list cache written either


def test_unknown_kind_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="valid kinds"):
        PiiScanner(("email", "dna"))


def test_inventory_from_chunks_keeps_one_item_per_value(scanner: PiiScanner) -> None:
    chunks = [
        Chunk("c1", "doc-1", "From: boss@enron.com call 713-853-1234"),
        Chunk("c2", "doc-2", "From: BOSS@enron.com call (713) 853-1234 or ops@enron.com"),
    ]
    inventory = inventory_from_chunks(chunks, scanner=scanner)
    assert sorted((item.kind, item.value, item.doc_id) for item in inventory) == [
        ("email", "boss@enron.com", "doc-1"),
        ("email", "ops@enron.com", "doc-2"),
        ("phone", "713-853-1234", "doc-1"),
    ]
