"""The pattern PII scanner: presidio-analyzer's recognizers, called directly (no NLP model).

`PiiScanner.find(text)` says *what looks like PII* in a text (email, phone, US SSN, credit
card, IP, URL, IBAN; dates optional). The index-time `PiiAnalyzer`, the `pii-redact` output
guard and the leak metrics (`ragshield.metrics.pii`) all use it, so it lives here, below them.

presidio's recognizers are called directly, so no spaCy model is loaded. Importing
presidio is slow (it imports spaCy and transformers, several seconds), so it happens when
the first `PiiScanner` is built, never at import of this module. Its email recognizer
validates domains with tldextract, which would fetch the public suffix list from the
network on first use (and print a stack trace offline); `_OfflineEmailRecognizer` uses an
extractor pinned to tldextract's bundled snapshot instead.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragshield.errors import ConfigError

__all__ = ["DEFAULT_KINDS", "ENTITY_OF_KIND", "PiiMatch", "PiiScanner", "replace_spans"]

# kind -> presidio entity type
ENTITY_OF_KIND = {
    "email": "EMAIL_ADDRESS",
    "phone": "PHONE_NUMBER",
    "ssn": "US_SSN",
    "credit_card": "CREDIT_CARD",
    "ip": "IP_ADDRESS",
    "url": "URL",
    "iban": "IBAN_CODE",
    "date": "DATE_TIME",
}
DEFAULT_KINDS = ("email", "phone", "ssn", "credit_card", "ip", "url", "iban")

# Cheap prerequisites: a recognizer runs only when the text could hold its entity. The phone
# recognizer (python-phonenumbers over 8 regions) dominates the cost, and most text has no digits.
_MIN_DIGITS = {"phone": 7, "ssn": 9, "credit_card": 12, "ip": 4, "iban": 2, "date": 4}
_NEEDS_CHAR = {"email": "@", "url": "."}

# North-American numbers written with separators, e.g. "(097) 535-1393". python-phonenumbers
# rejects numbers with unassigned area codes (about 9% of Faker's numbers), which are still
# phone numbers to a reader, so this pattern supplements presidio's phone recognizer.
_NANP_PATTERN = r"(?<![\w+])(?:\+?1[ .-]?)?(?:\(\d{3}\)\s?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w-])"
_CONTEXT_WORDS_BEFORE = 5
_PHONE_RUN = re.compile(r"\d[\d\s().+\-/]*\d")
_PHONE_PAD = 40
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class PiiMatch:
    """One PII span found in a text: `kind` (email, phone, ssn, ...), the matched `value`,
    and its character offsets `start` (inclusive) and `end` (exclusive)."""

    kind: str
    value: str
    start: int
    end: int


_PRESIDIO_LOCK = threading.Lock()
_TLD_EXTRACTOR: Any = None


def _offline_tld_extractor() -> Any:
    """A tldextract extractor that only reads its bundled public-suffix snapshot (no network, no cache)."""
    global _TLD_EXTRACTOR
    if _TLD_EXTRACTOR is None:
        import tldextract

        _TLD_EXTRACTOR = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)
    return _TLD_EXTRACTOR


def _build_recognizers(kinds: Sequence[str]) -> list[tuple[str, Any]]:
    """(kind, presidio recognizer) pairs for `kinds`; imports presidio (slow, once per process)."""
    with _PRESIDIO_LOCK:
        from presidio_analyzer import Pattern, PatternRecognizer
        from presidio_analyzer.predefined_recognizers import (
            CreditCardRecognizer,
            DateRecognizer,
            EmailRecognizer,
            IbanRecognizer,
            IpRecognizer,
            PhoneRecognizer,
            UrlRecognizer,
            UsSsnRecognizer,
        )

    class _OfflineEmailRecognizer(EmailRecognizer):
        """presidio's email recognizer, validating domains against the bundled suffix snapshot."""

        def validate_result(self, pattern_text: str) -> bool:
            return bool(_offline_tld_extractor()(pattern_text).fqdn)

    factories: dict[str, list[Any]] = {
        "email": [_OfflineEmailRecognizer],
        "phone": [
            PhoneRecognizer,
            lambda: PatternRecognizer(
                supported_entity="PHONE_NUMBER",
                name="NanpPhoneRecognizer",
                patterns=[Pattern("NANP phone (formatted)", _NANP_PATTERN, 0.4)],
                context=list(PhoneRecognizer.CONTEXT),
            ),
        ],
        "ssn": [UsSsnRecognizer],
        "credit_card": [CreditCardRecognizer],
        "ip": [IpRecognizer],
        "url": [UrlRecognizer],
        "iban": [IbanRecognizer],
        "date": [DateRecognizer],
    }
    return [(kind, factory()) for kind in kinds for factory in factories[kind]]


class PiiScanner:
    """Finds PII spans with presidio-analyzer's pattern recognizers (no NLP model).

    Args:
        kinds: which kinds to look for (default `DEFAULT_KINDS`; add `date` for dates).
        min_score: presidio confidence (0..1, higher = more certain) a match needs on its
            own. Weaker matches (e.g. a bare 9-digit number as SSN, 0.05) are kept only when
            one of the recognizer's context words ("ssn", "phone", ...) is among the
            5 words before the match, which mirrors presidio's context boost without spaCy.

    Overlapping matches are resolved by keeping the higher score, then the longer span
    (so the domain inside an email address is not also reported as a URL). The
    recognizers load on first use; building the first scanner of a process imports
    presidio, which takes seconds.

    Raises:
        ConfigError: an unknown kind is requested.
    """

    def __init__(self, kinds: Sequence[str] = DEFAULT_KINDS, *, min_score: float = 0.3) -> None:
        unknown = sorted(set(kinds) - set(ENTITY_OF_KIND))
        if unknown:
            raise ConfigError(f"unknown PII kinds {unknown}; valid kinds: {', '.join(ENTITY_OF_KIND)}")
        self.kinds = tuple(kinds)
        self.min_score = min_score
        self._recognizers: list[tuple[str, Any]] | None = None

    def _loaded(self) -> list[tuple[str, Any]]:
        if self._recognizers is None:
            self._recognizers = _build_recognizers(self.kinds)
        return self._recognizers

    def find(self, text: str) -> list[PiiMatch]:
        """PII spans in `text`, sorted by start offset, non-overlapping."""
        if not text:
            return []
        digits = sum(char.isdigit() for char in text)
        lowered: str | None = None
        found: list[tuple[float, PiiMatch]] = []
        for kind, recognizer in self._loaded():
            if digits < _MIN_DIGITS.get(kind, 0) or _NEEDS_CHAR.get(kind, "") not in text:
                continue
            for result in _analyze(recognizer, kind, text):
                score = float(result.score)
                if score < self.min_score:
                    lowered = lowered if lowered is not None else text.lower()
                    if not _has_context(lowered, result.start, recognizer.context or []):
                        continue
                    score = self.min_score
                start, end = _trimmed(text, result.start, result.end)
                if end > start:
                    found.append((score, PiiMatch(kind, text[start:end], start, end)))
        return _resolve_overlaps(found)

    def redact(self, text: str, *, placeholder: str = "[{kind}]") -> str:
        """`text` with every PII span replaced by `placeholder` (`{kind}` = the kind in capitals)."""
        return replace_spans(text, self.find(text), placeholder)


def replace_spans(text: str, matches: Iterable[PiiMatch], placeholder: str = "[{kind}]") -> str:
    """`text` with each of `matches` (sorted, not overlapping) replaced by `placeholder`."""
    pieces: list[str] = []
    position = 0
    for match in matches:
        pieces.append(text[position : match.start])
        pieces.append(placeholder.format(kind=match.kind.upper()))
        position = match.end
    pieces.append(text[position:])
    return "".join(pieces)


def _analyze(recognizer: Any, kind: str, text: str) -> list[Any]:
    """Run one recognizer; python-phonenumbers only on the digit-dense segments of the text.

    The phone recognizer costs ~6 ms per 300 characters whatever the text holds, so on long
    texts it runs on each stretch holding a run of >= 7 digits, padded by `_PHONE_PAD`
    characters on both sides (phone numbers never span more), with offsets mapped back.
    """
    entities = [ENTITY_OF_KIND[kind]]
    if kind != "phone" or len(text) <= 4 * _PHONE_PAD:
        return list(recognizer.analyze(text, entities, None))
    segments: list[list[int]] = []
    for run in _PHONE_RUN.finditer(text):
        if sum(char.isdigit() for char in run.group()) < _MIN_DIGITS["phone"]:
            continue
        start, end = max(0, run.start() - _PHONE_PAD), min(len(text), run.end() + _PHONE_PAD)
        if segments and start <= segments[-1][1]:
            segments[-1][1] = end
        else:
            segments.append([start, end])
    results: list[Any] = []
    for start, end in segments:
        for result in recognizer.analyze(text[start:end], entities, None):
            result.start += start
            result.end += start
            results.append(result)
    return results


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without surrounding whitespace (phonenumbers' matches can start with a space)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _has_context(lowered: str, start: int, context: Iterable[str]) -> bool:
    words = set(_WORD.findall(lowered[max(0, start - 80) : start])[-_CONTEXT_WORDS_BEFORE:])
    return any(word.strip() in words for word in context)


def _resolve_overlaps(found: list[tuple[float, PiiMatch]]) -> list[PiiMatch]:
    kept: list[PiiMatch] = []
    for _, match in sorted(found, key=lambda pair: (-pair[0], -(pair[1].end - pair[1].start), pair[1].start)):
        if all(match.end <= other.start or match.start >= other.end for other in kept):
            kept.append(match)
    return sorted(kept, key=lambda match: match.start)
