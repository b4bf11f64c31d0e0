"""`CanaryMatcher`: finds canaries in text, plain or obfuscated, in one linear pass.

Existing guards (Rebuff, Vigil) test ``canary in output``, which base64 alone defeats. This matcher
normalises the text into four streams (`ragshield.guards.canary.folding`) and runs one Aho-Corasick
automaton (pyahocorasick) per stream over all canaries' patterns at once:

* skeleton: NFKD (fullwidth, ligatures, accents split off), homoglyph folding (Cyrillic/Greek
  look-alikes to Latin), casefolding, then every character that is not a letter or digit is dropped
  (spaces, dots, dashes, newlines, zero-width and other format characters, combining marks).
  Patterns: the canary and the reversed canary. Catches case, separators, zero-width, homoglyphs,
  reversal and their mixes; with `one_edit` also a copy with one symbol dropped, inserted,
  substituted or two adjacent symbols swapped (`ragshield.guards.canary.edits`).
* hex: the skeleton text before dropping, reduced to ``0-9 a-f x``. Patterns: the ASCII and UTF-16
  hex of the canary, its reversal and upper-case variants, plain, ``0x``- and ``\\x``-joined.
* decoded: percent-escapes and HTML character references decoded, then the skeleton. Catches
  URL-encoding (all or some characters) and ``&#107;`` style escapes.
* base64: case kept, only the base64 alphabet (url-safe folded to standard). Patterns: the base64 of
  each variant at the three byte alignments (only the characters that depend on the canary alone).

Streaming: `CanaryScanner.feed(delta)` keeps, per stream, the last (longest pattern - 1) normalised
characters and scans ``tail + new``; only matches ending in the new part count. Every character is
normalised once and scanned a bounded number of times, so the cost is linear in the output (no
rescan of the accumulated text). Forms and raw spans are worked out only when a hit occurs (rare), by
re-reading a bounded raw window (`ragshield.guards.canary.spans`).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from ragshield.errors import ConfigError
from ragshield.guards.canary.canaries import MIN_LENGTH
from ragshield.guards.canary.edits import EditHit, OneEditTracker, PieceRef, pieces
from ragshield.guards.canary.folding import (
    alnum_only,
    base64_char,
    base64_text,
    folded,
    hex_char,
    hex_only,
    skeleton,
    skeleton_char,
)
from ragshield.guards.canary.patterns import Pattern, add_pattern, automaton, base64_patterns, hex_patterns, variants
from ragshield.guards.canary.spans import SpanLookup, form_of

# raw characters per canary symbol that a supported form may use (separators, escapes such as
# `\u006b` or `0x6b, `); the monitor's holdback is this times the longest canary (plus one symbol
# and `LOOKAHEAD_CHARS` with the one-edit tolerance)
CHARS_PER_SYMBOL = 8
# raw characters a one-edit match waits for its next letter or digit before it is reported
LOOKAHEAD_CHARS = 8
ONE_EDIT_FORM = "one-edit"
# An escape introducer written just before an encoded canary (`%`, `&#`, `&#x`) swallows the
# canary's leading hex or decimal symbols when the text is decoded (`%ab` is one byte, `&#x2b3`
# one character), so the decoded stream also looks for the canary without its first 1..N
# symbols; at least 8 symbols remain (31^8 ~ 8.5e11: no chance match in any answer). A canary
# whose first SWALLOW_MAX + 1 symbols are all hex digits, behind `&#x`, is still missed.
SWALLOW_MAX = 4
_ESCAPE_INTRODUCERS = ("%", "&")
_ENTITY_MAX = 12  # longest HTML character reference we wait for (`&#x0001f600;` is 12)


@dataclass(frozen=True, slots=True)
class CanaryHit:
    """One canary found in text.

    `canary` is the canary found (callers must not log it); `form` names the obfuscation, e.g.
    `plain`, `capitalised`, `case`, `separators`, `zero-width`, `homoglyph`, `reversed+separators`,
    `one-edit`, `base64`, `hex`, `url`, or `spread` (a separated form longer than the
    classification window). Offsets count raw characters of the scanned text from its first
    character: `offset` is how many were consumed when the hit was found; [`start`, `end`) is the
    raw span of the form (for an encoded form, the encoded characters that carry the canary).
    """

    canary: str
    form: str
    offset: int
    start: int
    end: int


@dataclass
class _Stream:
    """One normalised stream: its automaton, the tail kept between deltas, and its length so far."""

    automaton: Any
    keep: int  # longest pattern - 1
    tail: str = ""
    position: int = 0

    def scan(self, new: str) -> list[tuple[int, tuple[Any, ...]]]:
        """(stream position one past the match, its values) for matches ending in `new`."""
        if not new or self.keep < 0:
            self.position += len(new)
            return []
        text = self.tail + new
        boundary = len(self.tail)
        origin = self.position - boundary
        found = [(origin + end + 1, values) for end, values in self.automaton.iter(text) if end >= boundary]
        self.position += len(new)
        self.tail = text[-self.keep :] if self.keep else ""
        return found


class CanaryMatcher:
    """Finds a fixed set of canaries in text, under obfuscation.

    Args:
        canaries: the canaries to look for (letters and digits, at least `MIN_LENGTH` long).
        chars_per_symbol: raw characters per canary symbol a supported form may span.
        one_edit: also find a canary with one symbol dropped, inserted or substituted, or two
            adjacent symbols swapped, in the skeleton stream (form `one-edit`).

    `max_form_chars` is the number of raw characters from the first character of a supported form
    to the point where the scanner has reported it: the holdback a streaming monitor needs.

    Raises:
        ConfigError: a canary is too short or holds characters other than ASCII letters/digits.
    """

    def __init__(
        self, canaries: Iterable[str], *, chars_per_symbol: int = CHARS_PER_SYMBOL, one_edit: bool = True
    ) -> None:
        self.canaries = tuple(dict.fromkeys(canaries))
        for canary in self.canaries:
            if len(canary) < MIN_LENGTH or not (canary.isascii() and canary.isalnum()):
                raise ConfigError(
                    f"a canary must be at least {MIN_LENGTH} ASCII letters or digits; draw them with new_canaries()"
                )
        self.chars_per_symbol = chars_per_symbol
        self.one_edit = one_edit
        self.longest = max((len(canary) for canary in self.canaries), default=0)
        symbols = self.longest + 1 if one_edit else self.longest  # one inserted symbol
        self.max_form_chars = chars_per_symbol * symbols + (LOOKAHEAD_CHARS if one_edit else 0)
        plain: dict[str, list[Any]] = {}
        hexed: dict[str, list[Any]] = {}
        b64: dict[str, list[Any]] = {}
        for canary in self.canaries:
            target = skeleton(canary)
            add_pattern(plain, target, Pattern(canary, "", target))
            add_pattern(plain, target[::-1], Pattern(canary, "reversed", target[::-1]))
            for text, prefix in variants(canary):
                for pattern in hex_patterns(text):
                    add_pattern(hexed, pattern, Pattern(canary, prefix + "hex", pattern))
                for pattern in base64_patterns(text):
                    add_pattern(b64, pattern, Pattern(canary, prefix + "base64", pattern))
        decoded = {text: list(values) for text, values in plain.items()}
        for text, values in plain.items():
            for cut in range(1, min(SWALLOW_MAX, len(text) - 8) + 1):
                for value in values:
                    add_pattern(decoded, text[cut:], Pattern(value.canary, value.form, text[cut:]))
        skeletal = {text: list(values) for text, values in plain.items()}
        if one_edit:
            for text in plain:
                for piece in pieces(text):
                    skeletal.setdefault(text[piece.offset : piece.offset + piece.length], []).append(piece)
        self._targets = {text: values[0] for text, values in plain.items()}  # target -> its exact pattern
        self._patterns = {"skeleton": skeletal, "hex": hexed, "decoded": decoded, "base64": b64}
        self._automata = {name: automaton(patterns) for name, patterns in self._patterns.items()}
        self._keep = {
            name: (max(map(len, patterns)) - 1 if patterns else -1) for name, patterns in self._patterns.items()
        }

    def scanner(self) -> CanaryScanner:
        """A fresh incremental scanner over one stream of text."""
        return CanaryScanner(self)

    def find(self, text: str) -> list[CanaryHit]:
        """Every canary occurrence in `text` with the form it was found under."""
        scanner = self.scanner()
        return scanner.feed(text) + scanner.flush()

    def _stream(self, name: str) -> _Stream:
        return _Stream(self._automata[name], self._keep[name])


@dataclass
class CanaryScanner:
    """Incremental matching over a stream of deltas (one answer). Not thread-safe."""

    matcher: CanaryMatcher
    consumed: int = 0
    _raw_tail: str = ""
    _pending: str = ""  # raw characters held back from the decoded stream (an unfinished escape)
    _credits: dict[str, int] = field(default_factory=dict)  # skeleton hits the decoded stream repeats

    def __post_init__(self) -> None:
        self._streams = {name: self.matcher._stream(name) for name in ("skeleton", "hex", "decoded", "base64")}
        # long enough to classify any supported form that ends in the current delta
        self._window = 2 * self.matcher.max_form_chars + 64
        self._edits = OneEditTracker(self.matcher.longest, LOOKAHEAD_CHARS) if self.matcher.one_edit else None

    def feed(self, delta: str) -> list[CanaryHit]:
        """Hits completed by `delta` (each occurrence is reported once per stream)."""
        self.consumed += len(delta)
        if not delta or not self.matcher.canaries:
            return []
        window = self._raw_tail + delta
        folded_delta = folded(delta)
        plain = alnum_only(folded_delta)
        streams = self._streams
        found = streams["skeleton"].scan(plain)
        hits = (
            self._classified([v for _, values in found for v in values if isinstance(v, Pattern)], window)
            if found
            else []
        )
        edits = self._edits
        if edits is not None:
            edits.extend(plain)
            for end, values in found:
                for value in values:
                    if isinstance(value, PieceRef):
                        edits.trigger(value, end)
            if not edits.idle:  # a piece occurred nearby: check its windows (rare in benign text)
                hits += self._one_edit(window, final=False)
        hits += self._encoded(streams["hex"].scan(hex_only(folded_delta)), window, hex_char)
        hits += self._encoded(streams["base64"].scan(base64_text(delta)), window, base64_char)
        hits += self._decoded(self._decode(delta, plain), window, hits)
        self._raw_tail = window[-self._window :]
        return hits

    def flush(self) -> list[CanaryHit]:
        """Hits in text held back until the end: an escape cut off at the end, a one-edit match."""
        hits = self._one_edit(self._raw_tail, final=True) if self._edits is not None else []
        pending, self._pending = self._pending, ""
        if not pending:
            return hits
        decoded = skeleton(html.unescape(unquote(pending)))
        return hits + self._decoded(self._streams["decoded"].scan(decoded), self._raw_tail, [])

    def _span(self, window: str, first: int, last: int) -> tuple[int, int]:
        """Raw stream offsets of the window span [first, last)."""
        origin = self.consumed - len(window)
        return origin + first, origin + last

    def _fallback(self, window: str) -> tuple[int, int]:
        """The span of a hit whose raw form was not located: the whole window (withheld whole)."""
        return self._span(window, 0, len(window))

    # -- the decoded stream ----------------------------------------------------------------

    def _decode(self, delta: str, plain: str) -> list[tuple[int, tuple[Any, ...]]]:
        if not self._pending and "%" not in delta and "&" not in delta:
            # nothing to decode: the decoded stream equals the skeleton stream (fast path)
            return self._streams["decoded"].scan(plain)
        text = self._pending + delta
        hold = _unfinished_escape(text)
        self._pending = text[hold:]
        return self._streams["decoded"].scan(skeleton(html.unescape(unquote(text[:hold]))))

    def _decoded(
        self, found: list[tuple[int, tuple[Any, ...]]], window: str, skeleton_hits: list[CanaryHit]
    ) -> list[CanaryHit]:
        # the decoded stream also sees every plain occurrence: those were reported by the skeleton
        # stream already, so each skeleton hit cancels one decoded hit of the same canary
        for hit in skeleton_hits:
            if not hit.form.endswith(("hex", "base64")) and ONE_EDIT_FORM not in hit.form:
                self._credits[hit.canary] = self._credits.get(hit.canary, 0) + 1
        fresh: list[Pattern] = []
        escaped = any(introducer in window for introducer in _ESCAPE_INTRODUCERS)
        for _, values in _longest_per_canary(found):
            for value in values:
                if len(value.text) < len(value.canary) and not escaped:
                    continue  # a canary without its head is a swallowed one only behind an escape
                if self._credits.get(value.canary, 0) > 0:
                    self._credits[value.canary] -= 1
                    continue
                fresh.append(value)
        if not fresh:
            return []
        form = "html-entity" if "&" in window and "%" not in window else "url"
        spans = self._located(fresh, SpanLookup.by_escape(window))
        hits = []
        for value, (first, last) in zip(fresh, spans, strict=True):
            # a swallowed head: withhold the escape that swallowed it too
            first = max(0, first - self._head_chars(value))
            start, end = self._span(window, first, last) if last > first else self._fallback(window)
            named = f"{value.form}+{form}" if value.form else form
            hits.append(CanaryHit(value.canary, named, self.consumed, start, end))
        return hits

    def _head_chars(self, value: Pattern) -> int:
        """Raw characters a swallowed head of `value` may take: its symbols and the introducer."""
        swallowed = len(value.canary) - len(value.text)
        return swallowed * self.matcher.chars_per_symbol + len("&#x") if swallowed else 0

    # -- locating and naming forms ---------------------------------------------------------

    @staticmethod
    def _located(values: list[Pattern], lookup: SpanLookup) -> list[tuple[int, int]]:
        """Window spans of the patterns found in this delta ((0, 0) when one is not located).

        The k hits of one pattern in this delta are its last k occurrences in the window.
        """
        wanted: dict[str, int] = {}
        for value in values:
            wanted[value.text] = wanted.get(value.text, 0) + 1
        located = {text: lookup.last(text, count) for text, count in wanted.items()}
        return [located[value.text].pop(0) if located[value.text] else (0, 0) for value in values]

    def _encoded(
        self, found: list[tuple[int, tuple[Any, ...]]], window: str, fold: Callable[[str], str]
    ) -> list[CanaryHit]:
        values = [value for _, items in found for value in items]
        if not values:
            return []
        hits = []
        for value, (first, last) in zip(values, self._located(values, SpanLookup.by_char(window, fold)), strict=True):
            start, end = self._span(window, first, last) if last > first else self._fallback(window)
            hits.append(CanaryHit(value.canary, value.form, self.consumed, start, end))
        return hits

    def _classified(self, found: list[Pattern], window: str) -> list[CanaryHit]:
        if not found:
            return []
        spans = self._located(found, SpanLookup.by_char(window, skeleton_char))
        hits = []
        for value, (first, last) in zip(found, spans, strict=True):
            reversed_form = value.form == "reversed"
            if last > first:
                form = form_of(window[first:last], value.canary, reversed_form)
                start, end = self._span(window, first, last)
            else:  # spread wider than the window: its beginning is no longer in view
                form = "spread"
                start, end = self._fallback(window)
            if reversed_form and form != "reversed":
                form = f"reversed+{form}"
            hits.append(CanaryHit(value.canary, form, self.consumed, start, end))
        return hits

    def _one_edit(self, window: str, *, final: bool) -> list[CanaryHit]:
        edits = self._edits
        if edits is None or edits.idle:
            return []
        lookup: list[SpanLookup] = []
        position = edits.position

        def window_index(stream_position: int) -> int:
            # the window's per-character skeleton ends where the stream ends
            if not lookup:
                lookup.append(SpanLookup.by_char(window, skeleton_char))
            return stream_position - (position - len(lookup[0].text))

        def raw_end(end: int) -> int:
            index = window_index(end)
            return self._span(window, *lookup[0].raw(index - 1, index))[1]

        hits = []
        for hit in edits.decide(raw_end, self.consumed, final=final):
            first, last = window_index(hit.start), window_index(hit.end)
            start, end = self._span(window, *lookup[0].raw(first, last)) if last > 0 else self._fallback(window)
            hits.append(self._edit_hit(hit, start, end))
        return hits

    def _edit_hit(self, hit: EditHit, start: int, end: int) -> CanaryHit:
        value = self.matcher._targets[hit.target]
        form = f"reversed+{ONE_EDIT_FORM}" if value.form == "reversed" else ONE_EDIT_FORM
        return CanaryHit(value.canary, form, self.consumed, start, end)


def _unfinished_escape(text: str) -> int:
    """Index where an escape that the next delta may finish starts (len(text) when none)."""
    hold = len(text)
    percent = text.rfind("%", max(0, len(text) - 2))
    if percent != -1:
        hold = percent
    amp = text.rfind("&", max(0, len(text) - _ENTITY_MAX))
    if amp != -1 and ";" not in text[amp:]:
        hold = min(hold, amp)
    return hold


def _longest_per_canary(found: list[tuple[int, tuple[Any, ...]]]) -> list[tuple[int, tuple[Any, ...]]]:
    """The matches of the decoded stream with, at each end position, only the longest pattern of
    each canary and orientation: a whole canary also completes its swallowed-head patterns."""
    longest: dict[tuple[int, str, str], Pattern] = {}
    for end, values in found:
        for value in values:
            key = (end, value.canary, value.form)
            if key not in longest or len(value.text) > len(longest[key].text):
                longest[key] = value
    return [(end, (value,)) for (end, _, _), value in longest.items()]
