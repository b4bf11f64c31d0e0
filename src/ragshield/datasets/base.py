"""The `Corpus` object and `load_corpus(spec)` for specs such as `synthetic` or `enron:PATH`."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragshield.errors import ConfigError
from ragshield.parameters import check_parameters
from ragshield.registry import CORPORA, resolve
from ragshield.types import Document, JSONValue, iter_jsonl, write_jsonl


@dataclass(frozen=True, slots=True)
class PiiItem:
    """One known PII value in a knowledge base: `kind` (email, phone, ssn, name, dob, address,
    url, ...), its exact `value`, and the document it appears in."""

    kind: str
    value: str
    doc_id: str

    def to_dict(self) -> dict[str, JSONValue]:
        return {"kind": self.kind, "value": self.value, "doc_id": self.doc_id}


@dataclass(frozen=True)
class Corpus:
    """Documents plus, when known exactly, their PII inventory (None: derive it by scanning)."""

    name: str
    documents: tuple[Document, ...]
    pii: tuple[PiiItem, ...] | None = None

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    def write_pii(self, path: str | Path) -> None:
        if self.pii is not None:
            write_jsonl(path, (item.to_dict() for item in self.pii))


def read_pii(path: str | Path) -> tuple[PiiItem, ...] | None:
    """The PII inventory written by `Corpus.write_pii`, or None when the file is absent."""
    if not Path(path).exists():
        return None
    return tuple(PiiItem(str(r["kind"]), str(r["value"]), str(r["doc_id"])) for r in iter_jsonl(path))


def load_corpus(spec: str, *, limit: int | None = None, **params: Any) -> Corpus:
    """Load a corpus from a spec: `synthetic`, `synthetic:N`, `healthcaremagic:PATH`,
    `enron:PATH`, `jsonl:PATH` or `hf:DATASET`.

    Raises:
        UnknownNameError: unknown corpus kind (the message lists the valid kinds).
        ConfigError: a path is missing, the file is not in the expected format, or a parameter
            the loader does not take (the message lists the valid ones).
    """
    kind, _, argument = spec.partition(":")
    loader = resolve(CORPORA, kind, kind="corpus kind")
    # the loader's first parameter is the spec's argument (a path, a size, a dataset name)
    first = next(iter(inspect.signature(loader).parameters), "")
    check_parameters(loader, params, kind="corpus", name=kind, skip=(first,))
    corpus: Corpus = loader(argument or None, **params)
    if limit is not None:
        documents = corpus.documents[:limit]
        kept = {document.id for document in documents}
        pii = None if corpus.pii is None else tuple(item for item in corpus.pii if item.doc_id in kept)
        corpus = Corpus(corpus.name, documents, pii)
    if not corpus.documents:
        raise ConfigError(f"corpus {spec!r} has no documents")
    return corpus


def require_file(path: str | None, kind: str) -> Path:
    """The path of an existing file, or a ConfigError naming the expected spec."""
    if not path:
        raise ConfigError(f"corpus kind {kind!r} needs a path: --corpus {kind}:PATH")
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(f"corpus file not found: {file}")
    return file
