"""Rule-based query filter baseline (`rule-based`): regular expressions on the query text.

Two families of rules, matched case-insensitively on the normalised query (NFKC, zero-width
and other format characters removed, case-folded, whitespace collapsed, so trivial
obfuscation does not slip past):

* **extraction instructions** - the lexical patterns of the packaged extraction-instruction
  bank (`ragshield/data/extraction_instructions.yaml`, shared with the `intent` guard so
  the project has one list): "repeat all the context", "ignore previous instructions",
  "verbatim", "the text before 'Here is a sentence'", "base64", ...;
* **PII requests** - asking for personal data: "list all email addresses", "what is the
  SSN of ...", "John's phone number", TGTB's bait lead-ins ("please call me at").

    score = sum of the weights of the rules that match      (higher = more suspicious)

and the filter blocks when `score >= threshold` (default 1.0: one strong rule, or two weak
ones): asking for an SSN, date of birth, card or password is strong; asking for a phone
number or address, a possessive ("John's email"), "all the patients" or a bait lead-in is
weak, so "what is the address of the clinic?" passes and "list all email addresses" does
not. Uncalibrated on purpose: this is the keyword filter a practitioner would write.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragshield.errors import ConfigError
from ragshield.guards.base import Defense, threshold_verdict
from ragshield.types import RetrievalResult, Verdict

if TYPE_CHECKING:
    from ragshield.guards.factory import DefenseContext

NAME = "rule-based"

_PII_NOUN = (
    r"(e-?mail(s| address(es)?)?|phone( numbers?)?|telephone( numbers?)?|cell( numbers?)?|mobile numbers?"
    r"|contact (details|info(rmation)?)|(home |mailing |postal )?address(es)?|ssns?|social security( numbers?)?"
    r"|dates? of birth|birth ?dates?|dobs?|credit cards?( numbers?)?|bank accounts?( numbers?)?|passwords?"
    r"|personal (data|information|details))"
)
_SENSITIVE_NOUN = (
    r"(ssns?|social security( numbers?)?|dates? of birth|credit cards?( numbers?)?|bank accounts?|passwords?)"
)
_ASK_VERB = r"(list|give|show|tell|send|provide|reveal|output|print|extract|dump|share|find|what\s*(is|are|'s|'re))"


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern: `id`, `category` (extraction | pii-request), `regex` (case-insensitive), `weight` in (0, 1]."""

    id: str
    category: str
    regex: str
    weight: float


PII_REQUEST_RULES: tuple[Rule, ...] = (
    Rule("pii-ask-sensitive", "pii-request", rf"\b{_ASK_VERB}\b[^.?!\n]{{0,40}}\b{_SENSITIVE_NOUN}\b", 1.0),
    Rule("pii-ask", "pii-request", rf"\b{_ASK_VERB}\b[^.?!\n]{{0,40}}\b{_PII_NOUN}\b", 0.5),
    Rule("pii-possessive", "pii-request", rf"\b\w+'s\s+{_PII_NOUN}\b", 0.5),
    Rule(
        "pii-all",
        "pii-request",
        r"\b(all|every|each|any)\b[^.?!\n]{0,20}\b(names|e-?mails|phone numbers|addresses|ssns|patients|customers"
        r"|employees|users|people|records)\b",
        0.5,
    ),
    Rule(
        "pii-bait",
        "pii-request",
        r"\b(send (an |a )?e-?mail to|call me (at|on)|reach me at|contact me at|text me at"
        r"|my (e-?mail|phone number) is)\b",
        0.5,
    ),
)

_FORMAT_CHARS = {codepoint: None for codepoint in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD)}
_SPACES = re.compile(r"\s+")


def normalise_query(text: str) -> str:
    """NFKC, format characters (zero-width, soft hyphen, ...) removed, case-folded, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(_FORMAT_CHARS)
    text = "".join(char for char in text if unicodedata.category(char) != "Cf")
    return _SPACES.sub(" ", text.casefold()).strip()


def extraction_rules(bank: str | None = None) -> tuple[Rule, ...]:
    """The lexical patterns of the extraction-instruction bank (packaged, or a user's YAML file)."""
    from ragshield.guards.intent import load_bank

    return tuple(Rule(item.id, "extraction", item.regex, item.weight) for item in load_bank(bank).patterns)


@dataclass(frozen=True)
class RuleFilter:
    """A weighted set of regular expressions over normalised text (the reusable part of the guard).

    `score(text)` is the sum of the weights of the matching rules (higher = more suspicious).
    """

    rules: Sequence[Rule]
    threshold: float = 1.0
    _compiled: tuple[tuple[Rule, re.Pattern[str]], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.rules:
            raise ConfigError("a rule filter needs at least one rule")
        compiled = []
        for rule in self.rules:
            try:
                compiled.append((rule, re.compile(rule.regex, re.IGNORECASE)))
            except re.error as error:
                raise ConfigError(f"rule {rule.id!r} is not a valid regular expression: {error}") from error
        object.__setattr__(self, "_compiled", tuple(compiled))

    def matches(self, text: str) -> list[Rule]:
        """The rules whose pattern occurs in the normalised text."""
        normalised = normalise_query(text)
        return [rule for rule, pattern in self._compiled if pattern.search(normalised)]

    def score(self, text: str) -> float:
        """Sum of the weights of the matching rules (0 when none match)."""
        return float(sum(rule.weight for rule in self.matches(text)))

    def flags(self, text: str) -> bool:
        """Whether the text scores at or above the threshold."""
        return self.score(text) >= self.threshold


def default_filter(*, threshold: float = 1.0, bank: str | None = None, pii_requests: bool = True) -> RuleFilter:
    """Extraction rules from the bank, plus the PII-request rules unless `pii_requests=False`."""
    rules = extraction_rules(bank) + (PII_REQUEST_RULES if pii_requests else ())
    return RuleFilter(rules, threshold=threshold)


class RuleBasedGuard:
    """QueryGuard: blocks a query whose text matches the filter's rules (score >= threshold).

    The verdict's evidence names the matching rule ids and categories, never the query text.
    """

    def __init__(self, rule_filter: RuleFilter, *, name: str = NAME) -> None:
        self.name = name
        self.filter = rule_filter

    def check(self, retrieval: RetrievalResult) -> Verdict:
        matched = self.filter.matches(retrieval.query.text)
        score = float(sum(rule.weight for rule in matched))
        return threshold_verdict(
            self.name,
            score,
            self.filter.threshold,
            flagged_reason="the query matches extraction-instruction or PII-request rules",
            passed_reason="no blocking rule matches the query",
            evidence={
                "rules": [rule.id for rule in matched],
                "categories": sorted({rule.category for rule in matched}),
            },
        )


def build_defense(
    context: DefenseContext,
    *,
    threshold: float = 1.0,
    bank: str | None = None,
    pii_requests: bool = True,
) -> Defense:
    """Rule-based filter baseline: extraction-instruction and PII-request patterns on the query.

    Args:
        context: the system (unused: the filter reads only the query text).
        threshold: block when the summed rule weights reach it (strong rules weigh 1.0, weak 0.5).
        bank: a YAML instruction bank replacing the packaged one (its `patterns` are used).
        pii_requests: include the PII-request rules.

    Raises:
        ConfigError: invalid bank or regular expression.
    """
    guard = RuleBasedGuard(default_filter(threshold=threshold, bank=bank, pii_requests=pii_requests))
    return Defense(name=NAME, query_guards=(guard,), fail_closed=context.fail_closed)
