"""`PiiAnalyzer`: every PII recognizer of the project behind one `find(text)`.

Three sources, merged into one list of non-overlapping spans:

1. presidio-analyzer's pattern recognizers through `PiiScanner` (email, phone, US SSN,
   credit card, IP, URL, IBAN, and numeric dates);
2. US postal addresses, and names after "my name is", by regular expression
   (`ragshield.pii.address`);
3. spaCy named entities (`ragshield.pii.ner`, extra `ner`): person names, places, and
   dates written with words ("March 3, 1985").

Dates of either source are kept only when they name a full calendar day with its year
(a date of birth), so "2 weeks" or "Thursday" are not PII. A URL match that ends inside a
word is dropped: it is two sentences joined without a space ("further.Regards").

Where spans overlap, a pattern match or an address (the longer of the two: an address holds
digit runs that the phone recognizer also matches) wins over a numeric date, and those over
a named entity or an introduced name (the small NER model is the least precise: it tags
"Timothy Lakes" in "836 Timothy Lakes, New Robert" as a PERSON); among equals the longer
span wins.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragshield.pii.address import ADDRESS_RECOGNIZER, NAME_INTRO_RECOGNIZER, find_addresses, find_introduced_names
from ragshield.pii.ner import SpacyNer, is_full_date, ner_available
from ragshield.pii.patterns import DEFAULT_KINDS, PiiMatch, PiiScanner, replace_spans

__all__ = ["PATTERN_KINDS", "PiiAnalyzer", "PiiMatch"]

PATTERN_KINDS = (*DEFAULT_KINDS, "date")
# overlap priority, lower wins (then the longer span)
_PATTERN = _ADDRESS = 0
_PATTERN_DATE = 1
_NER = _NAME_INTRO = 2


class PiiAnalyzer:
    """Finds PII spans with presidio's pattern recognizers, address and name patterns, and spaCy NER.

    Args:
        scanner: the pattern scanner to reuse (default `PiiScanner(kinds, min_score=min_score)`).
        kinds: pattern kinds when no scanner is given (default: the scanner's defaults plus `date`).
        ner: True: use spaCy NER (raises when the `ner` extra is missing); False: patterns
            only; None (default): NER when the extra is installed. A `SpacyNer` is used as given.
        addresses: also find US postal addresses by pattern.
        min_score: presidio confidence (0..1, higher = more certain) a pattern match needs.
        batch_size: texts per spaCy batch in `find_many`.

    Nothing heavy happens here: presidio loads on the first `find`, the spaCy model on the
    first `find` that reaches NER.

    Raises:
        BackendUnavailable: `ner=True` and spaCy or its model package is not installed.
        ConfigError: an unknown pattern kind.
    """

    def __init__(
        self,
        scanner: PiiScanner | None = None,
        *,
        kinds: Sequence[str] = PATTERN_KINDS,
        ner: bool | SpacyNer | None = None,
        addresses: bool = True,
        min_score: float = 0.3,
        batch_size: int = 64,
    ) -> None:
        self.scanner = scanner or PiiScanner(tuple(kinds), min_score=min_score)
        if isinstance(ner, SpacyNer):
            self.ner: SpacyNer | None = ner
        elif ner or (ner is None and ner_available()):
            self.ner = SpacyNer(batch_size=batch_size)
        else:
            self.ner = None
        self.addresses = addresses

    @property
    def ner_enabled(self) -> bool:
        """Whether spaCy NER runs (names, places and word dates are found)."""
        return self.ner is not None

    @property
    def recognizers(self) -> tuple[str, ...]:
        """Names of the recognizers that run, e.g. `presidio-pattern:email`,
        `regex:us-address`, `spacy:en_core_web_sm-3.8.0:PERSON`. Cheap: loads no model."""
        names = [f"presidio-pattern:{kind}" for kind in self.scanner.kinds]
        if self.addresses:
            names.append(ADDRESS_RECOGNIZER)
        names.append(NAME_INTRO_RECOGNIZER)
        if self.ner is not None:
            names.extend(self.ner.recognizers)
        return tuple(names)

    def find(self, text: str) -> list[PiiMatch]:
        """PII spans in `text`, sorted by start offset, non-overlapping (offsets in characters)."""
        return self.find_many([text])[0]

    def find_many(self, texts: Sequence[str]) -> list[list[PiiMatch]]:
        """`find` for each text; NER runs batched (`nlp.pipe`), which is faster than one call per text."""
        found: list[list[tuple[int, PiiMatch]]] = [self._without_ner(text) for text in texts]
        if self.ner is not None:
            for candidates, text, spans in zip(found, texts, self.ner.find_many(texts), strict=True):
                candidates.extend((_NER, PiiMatch(s.kind, text[s.start : s.end], s.start, s.end)) for s in spans)
        return [_resolve(candidates) for candidates in found]

    def _without_ner(self, text: str) -> list[tuple[int, PiiMatch]]:
        candidates: list[tuple[int, PiiMatch]] = []
        for match in self.scanner.find(text):
            if match.kind == "date":
                if is_full_date(match.value):
                    candidates.append((_PATTERN_DATE, match))
            elif match.kind != "url" or not _cuts_a_word(text, match.end):
                candidates.append((_PATTERN, match))
        if self.addresses:
            candidates.extend((_ADDRESS, PiiMatch("address", text[s:e], s, e)) for s, e in find_addresses(text))
        candidates.extend((_NAME_INTRO, PiiMatch("person", text[s:e], s, e)) for s, e in find_introduced_names(text))
        return candidates

    def redact(self, text: str, *, placeholder: str = "[{kind}]") -> str:
        """`text` with every PII span replaced by `placeholder` (`{kind}` = the kind in capitals)."""
        return replace_spans(text, self.find(text), placeholder)


def _cuts_a_word(text: str, end: int) -> bool:
    """Whether a match ends inside a word. presidio's URL pattern reads two sentences joined
    without a space as a domain with a country TLD ("further.Regards" -> "further.Re",
    "days.please" -> "days.pl"); a real domain or URL is not followed by a letter or digit."""
    return end < len(text) and text[end].isalnum()


def _resolve(candidates: list[tuple[int, PiiMatch]]) -> list[PiiMatch]:
    """Non-overlapping spans: lower priority number first, then the longer span, then the earlier one."""
    kept: list[PiiMatch] = []
    ordered = sorted(candidates, key=lambda pair: (pair[0], pair[1].start - pair[1].end, pair[1].start))
    for _, match in ordered:
        # quadratic in the spans of one text, which are few (tens per chunk)
        if all(match.end <= other.start or match.start >= other.end for other in kept):
            kept.append(match)
    return sorted(kept, key=lambda match: match.start)
