"""`CanaryMatcher`: finds canaries in text, plain or obfuscated, in one linear pass.

Existing guards (Rebuff, Vigil) test ``canary in output``, which base64 alone defeats. This matcher
normalises the text into four streams and runs one Aho-Corasick automaton (pyahocorasick) per
stream over all canaries' patterns at once:

* skeleton: NFKD (fullwidth, ligatures, accents split off), homoglyph folding (Cyrillic/Greek
  look-alikes to Latin), casefolding, then every character that is not a letter or digit is dropped
  (spaces, dots, dashes, newlines, zero-width and other format characters, combining marks).
  Patterns: the canary and the reversed canary. Catches case, separators, zero-width, homoglyphs,
  reversal and their mixes.
* hex: the skeleton text before dropping, reduced to ``0-9 a-f x``. Patterns: the ASCII and UTF-16
  hex of the canary, its reversal and upper-case variants, plain, ``0x``- and ``\\x``-joined.
* decoded: percent-escapes and HTML character references decoded, then the skeleton. Catches
  URL-encoding (all or some characters) and ``&#107;`` style escapes.
* base64: case kept, only the base64 alphabet (url-safe folded to standard). Patterns: the base64 of
  each variant at the three byte alignments (only the characters that depend on the canary alone).

Streaming: `CanaryScanner.feed(delta)` keeps, per stream, the last (longest pattern - 1) normalised
characters and scans ``tail + new``; only matches ending in the new part count. Every character is
normalised once and scanned a bounded number of times, so the cost is linear in the output (no
rescan of the accumulated text). Forms are named only when a hit occurs (rare), by re-reading a
bounded raw window.
"""

from __future__ import annotations

import base64
import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from ragshield.errors import ConfigError, missing_extra
from ragshield.guards.canary.canaries import MIN_LENGTH
from ragshield.guards.canary.confusables import CONFUSABLES as _CONFUSABLES
from ragshield.guards.canary.confusables import INVISIBLE_LETTERS as _INVISIBLE_LETTERS

# raw characters per canary symbol that a supported form may use (separators, escapes such as
# `\u006b` or `0x6b, `); the monitor's holdback is this times the longest canary
CHARS_PER_SYMBOL = 8

_SKELETON_TABLE: dict[int, Any] = {ord(key): value for key, value in _CONFUSABLES.items()}
_SKELETON_TABLE.update({ord(ch): None for ch in _INVISIBLE_LETTERS})
_NOT_ALNUM = re.compile(r"[\W_]+")
_NOT_HEX = re.compile(r"[^0-9a-fx]+")
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/]+")
_ASCII_ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _ascii_deleter(keep: bytes) -> bytes:
    return bytes(code for code in range(128) if code not in keep)


# for ASCII text, bytes.translate deletes characters ~10x faster than a regex substitution
_DROP_NOT_ALNUM = _ascii_deleter(_ASCII_ALNUM)
_DROP_NOT_HEX = _ascii_deleter(b"0123456789abcdefx")
_DROP_NOT_BASE64 = _ascii_deleter(_ASCII_ALNUM + b"+/")


def _keep(text: str, pattern: re.Pattern[str], drop: bytes) -> str:
    """`text` without the characters `pattern` matches (`drop`: the same set, for ASCII text)."""
    if text.isascii():
        return text.encode("ascii").translate(None, drop).decode("ascii")
    return pattern.sub("", text)


_CONFUSABLE = re.compile("[" + re.escape("".join(_CONFUSABLES) + "".join(_INVISIBLE_LETTERS)) + "]")
_ENTITY_MAX = 12  # longest HTML character reference we wait for (`&#x0001f600;` is 12)

ZERO_WIDTH_FORM = "zero-width"


def _folded(text: str) -> str:
    """NFKD + homoglyph folding + casefolding (separators still present).

    Equal to translate -> NFKD -> translate -> casefold -> translate with the look-alike table
    (folding before NFKD, which turns some look-alikes such as lunate sigma into other letters, and
    after casefolding, so lower-case entries catch upper-case look-alikes too). Each step works per
    character, so the result does not depend on how the text is split into deltas. The table steps
    run only when a look-alike is present: `str.translate` with a dict is slow.
    """
    if text.isascii():  # the common case: NFKD and the table change nothing
        return text.lower()
    table = _SKELETON_TABLE
    if _CONFUSABLE.search(text) is not None:
        text = text.translate(table)
    text = unicodedata.normalize("NFKD", text)
    if _CONFUSABLE.search(text) is not None:
        text = text.translate(table)
    text = text.casefold()
    return text.translate(table) if _CONFUSABLE.search(text) is not None else text


def skeleton(text: str) -> str:
    """The letters and digits of `text` after NFKD, homoglyph folding and casefolding."""
    return _keep(_folded(text), _NOT_ALNUM, _DROP_NOT_ALNUM)


@lru_cache(maxsize=4096)
def _skeleton_char(char: str) -> str:
    return skeleton(char)


@dataclass(frozen=True, slots=True)
class CanaryHit:
    """One canary found in text.

    `canary` is the canary found (callers must not log it); `form` names the obfuscation, e.g.
    `plain`, `case`, `separators`, `zero-width`, `homoglyph`, `reversed+separators`, `base64`,
    `hex`, `url`, or `spread` (a separated form longer than the classification window);
    `offset` is the number of raw characters of the scanned text consumed when it was found.
    """

    canary: str
    form: str
    offset: int


def _variants(canary: str) -> list[tuple[str, str]]:
    """(byte string variant, form prefix) pairs that encoded forms are built from."""
    pairs = [(canary, ""), (canary[::-1], "reversed+"), (canary.upper(), ""), (canary.upper()[::-1], "reversed+")]
    unique: dict[str, str] = {}
    for text, prefix in pairs:
        unique.setdefault(text, prefix)
    return list(unique.items())


def _base64_patterns(text: str) -> list[str]:
    """Base64 substrings that encode `text` at byte alignments 0, 1 and 2 of any enclosing blob."""
    data = text.encode("ascii")
    patterns = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        start = (8 * offset + 5) // 6  # first character fed only by canary bits
        end = (8 * (offset + len(data))) // 6  # one past the last such character
        patterns.append(encoded[start:end])
    return patterns


def _hex_patterns(text: str) -> list[str]:
    pairs = [f"{ord(char):02x}" for char in text]
    return ["".join(pairs), "0x".join(pairs), "x".join(pairs), "".join("00" + pair for pair in pairs)]


def _automaton(patterns: dict[str, tuple[str, str]]) -> Any:
    try:
        import ahocorasick
    except ImportError as error:  # pragma: no cover - a core dependency
        raise missing_extra("pyahocorasick", "models") from error
    automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY)
    for pattern, value in patterns.items():
        automaton.add_word(pattern, value)
    if patterns:
        automaton.make_automaton()
    return automaton


@dataclass
class _Stream:
    """One normalised stream: its automaton and the tail kept between deltas."""

    automaton: Any
    keep: int  # longest pattern - 1
    tail: str = ""

    def scan(self, new: str) -> list[tuple[str, str]]:
        if not new or self.keep < 0:
            return []
        text = self.tail + new
        boundary = len(self.tail)
        found = [value for end, value in self.automaton.iter(text) if end >= boundary]
        self.tail = text[-self.keep :] if self.keep else ""
        return found


class CanaryMatcher:
    """Finds a fixed set of canaries in text, under obfuscation.

    Args:
        canaries: the canaries to look for (letters and digits, at least `MIN_LENGTH` long).
        chars_per_symbol: raw characters per canary symbol a supported form may span; sets
            `max_form_chars`, the holdback a streaming monitor needs.

    Raises:
        ConfigError: a canary is too short or holds characters other than ASCII letters/digits.
    """

    def __init__(self, canaries: Iterable[str], *, chars_per_symbol: int = CHARS_PER_SYMBOL) -> None:
        self.canaries = tuple(dict.fromkeys(canaries))
        for canary in self.canaries:
            if len(canary) < MIN_LENGTH or not (canary.isascii() and canary.isalnum()):
                raise ConfigError(
                    f"a canary must be at least {MIN_LENGTH} ASCII letters or digits; draw them with new_canaries()"
                )
        self.chars_per_symbol = chars_per_symbol
        longest = max((len(canary) for canary in self.canaries), default=0)
        self.max_form_chars = chars_per_symbol * longest
        plain: dict[str, tuple[str, str]] = {}
        hexed: dict[str, tuple[str, str]] = {}
        b64: dict[str, tuple[str, str]] = {}
        for canary in self.canaries:
            folded = skeleton(canary)
            plain.setdefault(folded, (canary, ""))
            plain.setdefault(folded[::-1], (canary, "reversed"))
            for text, prefix in _variants(canary):
                for pattern in _hex_patterns(text):
                    hexed.setdefault(pattern, (canary, prefix + "hex"))
                for pattern in _base64_patterns(text):
                    b64.setdefault(pattern, (canary, prefix + "base64"))
        self._patterns = {"skeleton": plain, "hex": hexed, "decoded": plain, "base64": b64}
        self._automata = {name: _automaton(patterns) for name, patterns in self._patterns.items()}
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

    def feed(self, delta: str) -> list[CanaryHit]:
        """Hits completed by `delta` (each occurrence is reported once per stream)."""
        self.consumed += len(delta)
        if not delta or not self.matcher.canaries:
            return []
        window = self._raw_tail + delta
        folded = _folded(delta)
        plain = _keep(folded, _NOT_ALNUM, _DROP_NOT_ALNUM)
        streams = self._streams
        hits = self._classified(streams["skeleton"].scan(plain), window)
        hits += self._encoded(streams["hex"].scan(_keep(folded, _NOT_HEX, _DROP_NOT_HEX)))
        hits += self._encoded(streams["base64"].scan(_base64_text(delta)))
        hits += self._decoded(self._decode(delta, plain), window, hits)
        self._raw_tail = window[-self._window :]
        return hits

    def flush(self) -> list[CanaryHit]:
        """Hits in text held back by the decoded stream (an escape cut off at the end)."""
        pending, self._pending = self._pending, ""
        if not pending:
            return []
        decoded = skeleton(html.unescape(unquote(pending)))
        return self._decoded(self._streams["decoded"].scan(decoded), self._raw_tail, [])

    # -- the decoded stream ----------------------------------------------------------------

    def _decode(self, delta: str, plain: str) -> list[tuple[str, str]]:
        if not self._pending and "%" not in delta and "&" not in delta:
            # nothing to decode: the decoded stream equals the skeleton stream (fast path)
            return self._streams["decoded"].scan(plain)
        text = self._pending + delta
        hold = _unfinished_escape(text)
        self._pending = text[hold:]
        return self._streams["decoded"].scan(skeleton(html.unescape(unquote(text[:hold]))))

    def _decoded(self, found: list[tuple[str, str]], window: str, skeleton_hits: list[CanaryHit]) -> list[CanaryHit]:
        # the decoded stream also sees every plain occurrence: those were reported by the skeleton
        # stream already, so each skeleton hit cancels one decoded hit of the same canary
        for hit in skeleton_hits:
            if not hit.form.endswith(("hex", "base64")):
                self._credits[hit.canary] = self._credits.get(hit.canary, 0) + 1
        hits = []
        for canary, prefix in found:
            if self._credits.get(canary, 0) > 0:
                self._credits[canary] -= 1
                continue
            form = "html-entity" if "&" in window and "%" not in window else "url"
            hits.append(CanaryHit(canary, f"{prefix}+{form}" if prefix else form, self.consumed))
        return hits

    # -- naming forms ----------------------------------------------------------------------

    def _encoded(self, found: list[tuple[str, str]]) -> list[CanaryHit]:
        return [CanaryHit(canary, form, self.consumed) for canary, form in found]

    def _classified(self, found: list[tuple[str, str]], window: str) -> list[CanaryHit]:
        if not found:
            return []
        spans = _SpanLookup(window)
        wanted: dict[str, int] = {}
        for canary, reversed_form in found:
            key = _target(canary, reversed_form)
            wanted[key] = wanted.get(key, 0) + 1
        # the k hits of one target in this delta are its last k occurrences in the window
        segments = {key: spans.last(key, count) for key, count in wanted.items()}
        hits = []
        for canary, reversed_form in found:
            pending = segments[_target(canary, reversed_form)]
            segment = pending.pop(0) if pending else None
            form = _form_of(segment, canary, reversed_form) if segment is not None else "spread"
            if reversed_form and form != "reversed":
                form = f"reversed+{form}"
            hits.append(CanaryHit(canary, form, self.consumed))
        return hits


def _target(canary: str, reversed_form: str) -> str:
    folded = skeleton(canary)
    return folded[::-1] if reversed_form else folded


def _base64_text(delta: str) -> str:
    text = delta if delta.isascii() else unicodedata.normalize("NFKD", delta)
    return _keep(text.replace("-", "+").replace("_", "/"), _NOT_BASE64, _DROP_NOT_BASE64)  # url-safe folded


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


class _SpanLookup:
    """Per-character skeleton of a raw window with a map back to raw positions (used on hits only)."""

    def __init__(self, window: str) -> None:
        self.window = window
        parts: list[str] = []
        owners: list[int] = []
        for index, char in enumerate(window):
            folded = _skeleton_char(char)
            parts.append(folded)
            owners.extend([index] * len(folded))
        self.text = "".join(parts)
        self.owners = owners

    def last(self, target: str, count: int) -> list[str]:
        """The raw segments of the last `count` occurrences of `target`, in text order."""
        starts: list[int] = []
        start = self.text.find(target)
        while start != -1:
            starts.append(start)
            start = self.text.find(target, start + 1)
        segments = []
        for begin in starts[-count:]:
            first, last = self.owners[begin], self.owners[begin + len(target) - 1]
            segments.append(self.window[first : last + 1])
        return segments


def _form_of(segment: str, canary: str, reversed_form: str) -> str:
    """Name the obfuscations that turn `canary` (or its reversal) into the raw `segment`."""
    expected = canary[::-1] if reversed_form else canary
    if segment == expected:
        return "reversed" if reversed_form else "plain"
    symbols = set(expected)
    forms: set[str] = set()
    for char in segment:
        category = unicodedata.category(char)
        if category == "Cf" or char in _INVISIBLE_LETTERS:
            forms.add(ZERO_WIDTH_FORM)
        elif category in ("Mn", "Me") or (char.isalnum() and not char.isascii()):
            forms.add("homoglyph")
        elif not char.isalnum():
            forms.add("separators")
        elif char not in symbols:  # an ASCII letter of the canary in the other case
            forms.add("case")
    return "+".join(sorted(forms)) if forms else "plain"
