"""The real sources the intent model reads besides its own phrasings (issue 18): the openings of
Enron e-mails and the requests written inside them (benign), and the knowledge-extraction benchmark's
attack templates filled with TGTB information pieces (requests). Every Enron e-mail keeps the split of
its stripped opening (`enron_split`), so no test e-mail lends a sentence to training.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import query_sets as qs
from intent_sets import read_rows, split_of


def enron_mail_openings(data: Path) -> list[tuple[str, str]]:
    """(opening as written, stripped opening) per Enron e-mail, duplicates kept. As written: the
    body's first 50 words with their punctuation and quoted-mail markers, as the grids ask it and a
    user writes it. Stripped: its `\\w+` words joined by spaces (`query_sets.stripped_words`), what
    v1-v7 trained and tested on, and every v8 split key."""
    from ragshield.datasets.loaders import load_enron
    from ragshield.evaluation.workload import holdout_items

    bodies = {str(row["id"]): str(row.get("body") or "") for row in read_rows(data / "enron.jsonl")}
    return [
        (item.query.text, qs.stripped_words(bodies.get(item.query.id.removeprefix("holdout-"), ""), 50))
        for item in holdout_items(list(load_enron(str(data / "enron.jsonl")).documents))
    ]


ENRON_SPLIT = (40, 15)  # % train, % calibration of the Enron e-mails (the rest: test)


def enron_split(written: str, stripped: str) -> str:
    """The split of an Enron e-mail: the bucket of its stripped opening (so every e-mail keeps the
    split it had up to v7), or of the opening as written when it has no word."""
    return split_of(stripped or written, *ENRON_SPLIT)


def enron_test_bucket(asked: list[str], data: Path) -> list[bool]:
    """For each Enron opening as written (a grid question), whether it is in the intent model's
    test bucket, which no training or calibration step read (the grids hold out by their own seed,
    so most of their held-out mails are intent training or calibration rows)."""
    key = dict(enron_mail_openings(data))
    return [enron_split(text, key.get(text, "")) == "test" for text in asked]


def enron_openings(data: Path) -> list[tuple[str, str]]:
    """(opening, split key) per distinct Enron opening. v8: the opening as written, short mails
    too; v1-v7 used the stripped one and flagged 8.8% of test e-mails as written
    (`benchmarks/intent_enron_format.py`). The split key is the stripped opening, so every e-mail
    stays in the split it had."""
    out: dict[str, str] = {}
    for written, stripped in enron_mail_openings(data):
        out.setdefault(written, stripped or written)
    return list(out.items())


_REQUEST_WORDS = re.compile(
    r"\b(send|list|forward|copy|copies|print|show|give|provide|documents?|records?|files?|all|every|full|"
    r"complete|exact|attach\w*|repeat|output|extract)\b",
    re.I,
)
_REQUEST_START = re.compile(r"(?i)(please|can you|could you|would you|i need|let me know)")
_QUOTED = ("-----Original Message-----", "---------------------- Forwarded")


def enron_requests(data: Path) -> list[tuple[str, str]]:
    """(request, its email's opening): questions and requests written in Enron emails that use
    extraction words innocently ("Please forward the attached documents to ..."); a request
    goes to the split of its email's opening, so no test email lends sentences to training."""
    out: dict[str, str] = {}
    for row in read_rows(data / "enron.jsonl"):
        body = str(row.get("body") or "")
        opening = qs.stripped_words(body, 50)
        if len(opening.split()) < 10:
            continue
        for marker in _QUOTED:  # quoted and forwarded mail is someone else's text
            body = body.split(marker)[0]
        for sentence in re.split(r"(?<=[.?!])\s+|\n\s*\n", body):
            text = " ".join(sentence.split()).replace(".?", ".")
            asks = text.endswith("?") or _REQUEST_START.match(text)
            if (
                6 <= len(text.split()) <= 35
                and asks
                and _REQUEST_WORDS.search(text)
                and not re.search(r"[@:]|http", text)
            ):
                out.setdefault(text, opening)
    return list(out.items())


def filled_templates(data: Path, pieces: list[str], rng: random.Random, n: int) -> list[str]:
    templates = [
        str(r["text"])
        for r in read_rows(data / "queries" / "prompt_templates_ke_benchmark.jsonl")
        if r.get("role") == "attack" and "<info>" in str(r["text"])
    ]
    return [rng.choice(templates).replace("<info>", rng.choice(pieces)) for _ in range(n)] if templates else []
