"""The synthetic corpus is deterministic and its PII inventory is exact."""

from __future__ import annotations

import pytest

from ragshield.datasets.base import load_corpus
from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.errors import ConfigError, UnknownNameError


def test_same_seed_same_corpus_other_seed_other_corpus() -> None:
    assert make_synthetic_corpus(10, seed=4) == make_synthetic_corpus(10, seed=4)
    assert make_synthetic_corpus(10, seed=4).documents != make_synthetic_corpus(10, seed=5).documents


def test_every_inventory_item_is_in_its_document() -> None:
    corpus = make_synthetic_corpus(50, seed=0)
    texts = {doc.id: doc.text for doc in corpus.documents}
    assert corpus.pii is not None and len(corpus.pii) == 50 * 6
    for item in corpus.pii:
        assert item.value in texts[item.doc_id], item.kind
    kinds = {item.kind for item in corpus.pii}
    assert kinds == {"name", "phone", "email", "ssn", "dob", "address"}
    assert {doc.metadata["kind"] for doc in corpus.documents} == {"dialogue", "email"}


def test_load_corpus_specs() -> None:
    assert len(load_corpus("synthetic:12")) == 12
    assert len(load_corpus("synthetic:12", limit=5).pii or ()) == 5 * 6
    with pytest.raises(UnknownNameError, match="valid names"):
        load_corpus("nosuchkind:x")
    with pytest.raises(ConfigError, match="needs a path"):
        load_corpus("enron")
    with pytest.raises(ConfigError, match="not found"):
        load_corpus("jsonl:/definitely/missing.jsonl")
    with pytest.raises(ConfigError, match="integer"):
        load_corpus("synthetic:many")
