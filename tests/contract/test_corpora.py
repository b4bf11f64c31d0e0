"""Contract over every registered corpus loader: it loads documents with ids and text, and rejects an
unknown parameter with the valid names. Real-data loaders read ../shared/data and skip without it;
`hf` needs the network and is only checked for its clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragshield.datasets.base import load_corpus
from ragshield.errors import ConfigError
from ragshield.registry import CORPORA

SHARED_FILES = {"healthcaremagic": "healthcaremagic.jsonl", "enron": "enron.jsonl"}
OFFLINE = ("synthetic", "jsonl")


def test_every_registered_corpus_is_covered_by_this_contract() -> None:
    assert set(CORPORA.builtins) == {*OFFLINE, *SHARED_FILES, "hf"}


def _check(spec: str) -> None:
    corpus = load_corpus(spec, limit=25)
    assert 0 < len(corpus) <= 25
    assert all(document.id and document.text.strip() for document in corpus)
    assert len({document.id for document in corpus}) == len(corpus)


def test_offline_corpora_load(tmp_path: Path) -> None:
    _check("synthetic:30")
    file = tmp_path / "docs.jsonl"
    file.write_text("".join(json.dumps({"id": f"d{n}", "text": f"note {n}"}) + "\n" for n in range(3)))
    _check(f"jsonl:{file}")


@pytest.mark.parametrize("kind", sorted(SHARED_FILES))
def test_shared_data_corpora_load(kind: str, shared_data: Path) -> None:
    _check(f"{kind}:{shared_data / SHARED_FILES[kind]}")


@pytest.mark.parametrize("kind", sorted(CORPORA))
def test_an_unknown_parameter_is_a_clear_error(kind: str) -> None:
    with pytest.raises(ConfigError, match=f"corpus '{kind}' takes no parameter colour; valid parameters: "):
        load_corpus(f"{kind}:x", colour="red")


def test_hf_without_a_name_says_how_to_name_one() -> None:
    with pytest.raises(ConfigError, match="needs a dataset name"):
        load_corpus("hf")
