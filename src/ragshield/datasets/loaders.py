"""Loaders for real data: HealthcareMagic and Enron JSONL files (as in `../shared/data`),
any JSONL with a text field, and Hugging Face `datasets` for users who are online.

Real data is research-only: these loaders read it where the user keeps it; nothing is copied.
"""

from __future__ import annotations

from typing import Any

from ragshield.datasets.base import Corpus, require_file
from ragshield.errors import ConfigError, missing_extra
from ragshield.types import Document, iter_jsonl


def _read(path: str | None, kind: str) -> list[dict[str, Any]]:
    file = require_file(path, kind)
    try:
        return list(iter_jsonl(file))
    except (ValueError, UnicodeDecodeError) as error:
        raise ConfigError(f"corpus file {file} is not valid JSONL: {error}") from error


def load_healthcaremagic(path: str | None) -> Corpus:
    """HealthcareMagic / ChatDoctor dialogues, one record per document in TGTB's layout
    `input: <patient question>\\noutput: <doctor answer>`."""
    rows = _read(path, "healthcaremagic")
    documents = []
    for number, row in enumerate(rows):
        if "question" not in row or "answer" not in row:
            raise ConfigError(f"{path}: line {number + 1} has no 'question'/'answer' fields")
        text = f"input: {row['question'].strip()}\noutput: {row['answer'].strip()}"
        metadata = {"question": str(row["question"]), "source": str(row.get("subset", row.get("source", "")))}
        documents.append(Document(str(row.get("id", f"hcm-{number}")), text, metadata))
    return Corpus("healthcaremagic", tuple(documents))


def load_enron(path: str | None, *, field: str = "raw") -> Corpus:
    """Enron emails, one email per document (TGTB's `single_file` chunking).

    `field` is `raw` (headers and body, the default) or `body`.
    """
    rows = _read(path, "enron")
    documents = []
    for number, row in enumerate(rows):
        text = row.get(field) or row.get("body")
        if not isinstance(text, str):
            raise ConfigError(f"{path}: line {number + 1} has no {field!r} text")
        metadata = {"subject": str(row.get("subject", "")), "from": str(row.get("from", ""))}
        documents.append(Document(str(row.get("id", f"enron-{number}")), text, metadata))
    return Corpus("enron", tuple(documents))


def load_jsonl(path: str | None, *, text_field: str = "text", id_field: str = "id") -> Corpus:
    """Any JSONL file whose lines carry a text field (default `text`)."""
    rows = _read(path, "jsonl")
    documents = []
    for number, row in enumerate(rows):
        text = row.get(text_field)
        if not isinstance(text, str):
            raise ConfigError(f"{path}: line {number + 1} has no string field {text_field!r}")
        documents.append(Document(str(row.get(id_field, f"doc-{number}")), text))
    return Corpus("jsonl", tuple(documents))


def load_hf_dataset(
    name: str | None, *, split: str = "train", text_field: str = "text", limit: int | None = None
) -> Corpus:
    """A Hugging Face dataset (needs network the first time and `pip install 'ragshield[hf]'`)."""
    if not name:
        raise ConfigError("corpus kind 'hf' needs a dataset name: --corpus hf:OWNER/NAME")
    try:
        import datasets
    except ImportError as error:
        raise missing_extra("datasets", "hf") from error
    try:
        data = datasets.load_dataset(name, split=split)
    except Exception as error:  # network, auth, unknown dataset
        raise ConfigError(f"cannot load Hugging Face dataset {name!r}: {type(error).__name__}: {error}") from error
    documents = []
    for number, row in enumerate(data):
        if limit is not None and number >= limit:
            break
        documents.append(Document(f"{name}-{number}", str(row[text_field])))
    return Corpus(name, tuple(documents))
