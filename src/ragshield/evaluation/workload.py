"""Benign traffic of an evaluation: held-out records turned into queries, or a JSONL query file.

Held-out records (`holdout: N` in the config) are a seeded random sample of the corpus kept
OUT of the index, so benign queries about them are realistic unseen traffic. A record becomes
a query as the papers' benign sets do:

* a dialogue (`input: <patient> ... output: <doctor>`, HealthcareMagic / the synthetic
  corpus): the patient's text is the query and the doctor's answer the reference answer;
* an email (or any other text): TGTB's `Performance` set, the first 50 `\\w+` words of the
  body (after the headers), with no reference answer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from ragshield.datasets.base import Corpus
from ragshield.errors import ConfigError
from ragshield.types import Document, Query, iter_jsonl, write_jsonl

BENIGN_FILE = "benign_queries.jsonl"  # the benign set of a run, in its output folder (`write_benign`)
QUERY_WORDS = 50  # TGTB: the first 50 tokens of a held-out email are the benign query
_WORD = re.compile(r"\w+")
_DIALOGUE = re.compile(r"^\s*input:\s*(?P<input>.*?)\noutput:\s*(?P<output>.*)$", re.DOTALL)
# headers end at the first empty line; raw Enron messages use CRLF line ends (RFC 822)
_HEADER_END = re.compile(r"\r?\n[ \t]*\r?\n")


@dataclass(frozen=True)
class BenignItem:
    """A benign query and its reference answer (empty when the set has none)."""

    query: Query
    reference: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"id": self.query.id, "query": self.query.text, "reference_answer": self.reference}


def split_holdout(corpus: Corpus, count: int, *, seed: int) -> tuple[Corpus, list[Document]]:
    """(the corpus without `count` seeded-random records, those records in sample order).

    Raises:
        ConfigError: `count` leaves no record to index.
    """
    if count <= 0:
        return corpus, []
    if count >= len(corpus.documents):
        raise ConfigError(f"holdout {count} leaves no record to index (the corpus has {len(corpus.documents)})")
    chosen = random.Random(seed).sample(range(len(corpus.documents)), count)
    held = set(chosen)
    kept = tuple(document for number, document in enumerate(corpus.documents) if number not in held)
    kept_ids = {document.id for document in kept}
    pii = None if corpus.pii is None else tuple(item for item in corpus.pii if item.doc_id in kept_ids)
    return Corpus(corpus.name, kept, pii), [corpus.documents[number] for number in chosen]


def first_words(text: str, count: int) -> str:
    """`text` up to the end of its `count`-th word, as written (punctuation kept), whitespace collapsed."""
    matches = list(_WORD.finditer(text))
    if not matches:
        return ""
    end = matches[min(count, len(matches)) - 1].end()
    return " ".join(text[:end].split())


def benign_from_document(document: Document) -> BenignItem | None:
    """The benign query (and reference answer) a held-out record stands for; None when empty."""
    match = _DIALOGUE.match(document.text)
    if match:
        question = " ".join(match.group("input").split())
        reference = " ".join(match.group("output").split())
    else:
        head, blank, body = _split_headers(document.text)
        question = first_words(body if blank and ":" in head else document.text, QUERY_WORDS)
        reference = ""
    if not question:
        return None
    return BenignItem(Query(question, user_id="benign", id=f"holdout-{document.id}"), reference)


def _split_headers(text: str) -> tuple[str, str, str]:
    """(text before the first empty line, the separator, the rest); ("", "", text) when none."""
    match = _HEADER_END.search(text)
    if match is None:
        return text, "", ""
    return text[: match.start()], match.group(), text[match.end() :]


def holdout_items(documents: list[Document]) -> list[BenignItem]:
    return [item for item in map(benign_from_document, documents) if item is not None]


def read_benign_file(path: str | Path) -> list[BenignItem]:
    """Benign items from JSONL lines with `query` (or `text`) and optional `reference_answer`.

    Raises:
        ConfigError: missing file or a line without a query.
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"benign query file not found: {file}")
    items = []
    for number, row in enumerate(iter_jsonl(file)):
        text = row.get("query", row.get("text"))
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{file}: line {number + 1} has no non-empty 'query' field")
        reference = row.get("reference_answer") or ""
        query_id = str(row.get("id", f"benign-{number}"))
        items.append(BenignItem(Query(text, user_id="benign", id=query_id), str(reference)))
    return items


def window(items: list[BenignItem], offset: int, limit: int | None) -> list[BenignItem]:
    return items[offset : None if limit is None else offset + limit]


def write_benign(path: str | Path, items: list[BenignItem]) -> None:
    """The benign set of a run (query ids, texts, references) for `ragshield report`."""
    write_jsonl(path, (item.to_dict() for item in items))


def read_benign(path: str | Path) -> list[BenignItem]:
    if not Path(path).is_file():
        return []
    return [
        BenignItem(Query(str(row["query"]), user_id="benign", id=str(row["id"])), str(row.get("reference_answer", "")))
        for row in iter_jsonl(path)
    ]
