"""The sources one request's release guard matches: every retrieved chunk in every alphabet and direction.

Per chunk (as the model saw it): its folded `text` symbols forward and reversed; its letters'
consecutive differences forward, reversed and negated (Caesar shifts, atbash), and for a chunk with
digits the same with its digits kept in place (a cipher leaves them as they are). Per PII value of the
retrieved records (when a PII store is set) that the user's message does not contain: its folded
symbols forward and reversed. Public grams (frequent in the knowledge base, or in the user's
message) are left out of every chunk table.
`RequestSources.views(sink)` then builds the answer's views with one `Track` per stream.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragshield.guards.release.escapes import UnescapeView
from ragshield.guards.release.fold import fold_cipher, fold_letters, fold_text, text_symbols
from ragshield.guards.release.near import NearTrack, near_table
from ragshield.guards.release.numbered import UnnumberedView
from ragshield.guards.release.public import FrequentGrams, grams_of, public_mask
from ragshield.guards.release.radix import SPECS, RadixView
from ragshield.guards.release.spelled import SpelledView
from ragshield.guards.release.tracks import GramTable, RunSink, Source, Track
from ragshield.guards.release.views import (
    Rot47View,
    TextView,
    UntaggedView,
    Views,
    cipher_differences,
    letter_differences,
    negated_differences,
)
from ragshield.types import RetrievalResult

if TYPE_CHECKING:
    from ragshield.guards.release.echo import EchoSettings

_WORD = re.compile(r"\S+")
MIN_PII_SYMBOLS = 5  # shorter values (initials, "Li", a first name alone) match too much ordinary text


def _word_of_char(text: str) -> list[int]:
    words = [0] * len(text)
    for number, match in enumerate(_WORD.finditer(text)):
        for index in range(match.start(), match.end()):
            words[index] = number
    return words


@dataclass
class RequestSources:
    """The indexed sources of one request and the facts the monitor reports."""

    user_id: str
    text: GramTable
    pii: GramTable
    differences: GramTable
    pii_differences: GramTable
    near: GramTable = field(default_factory=near_table)  # chunks forward, for copies with edits
    digit_differences: GramTable | None = None  # chunks with digits, their differences with digits kept
    canonical: dict[str, str] = field(default_factory=dict)  # chunk id -> folded text symbols
    over_budget: set[str] = field(default_factory=set)
    pii_count: int = 0
    pii_source: str = "off"

    def views(self, sink: RunSink) -> Views:
        """Fresh views of one answer, each stream followed by its own `Track` reporting to `sink`."""

        def group(width: int = 1, tables: tuple[GramTable, GramTable] = (self.text, self.pii)) -> Track | _Fan:
            return _fan([Track(table, sink, width) for table in tables])

        strides = [[group() for _ in range(2)]]  # every 2nd character: filler after each, doubled text
        caesar = group(tables=(self.differences, self.pii_differences))
        near = NearTrack(self.near, sink, self.text.m)
        digits = self.digit_differences
        caesar_digits = Track(digits, sink) if digits is not None and digits else None
        text_view = TextView(group(), caesar, strides, near, caesar_digits)  # type: ignore[arg-type]
        unescaped = UnescapeView(group(8), marked=group(8))  # type: ignore[arg-type]
        # a number between NATO words read as the number, and as a word parting them (a counter)
        spelled = [SpelledView(group(8), numbers_part=numbers_part) for numbers_part in (False, True)]  # type: ignore[arg-type]
        unnumbered = UnnumberedView(group())  # type: ignore[arg-type]
        plain = [text_view, UntaggedView(group()), Rot47View(group()), unescaped, *spelled, unnumbered]  # type: ignore[arg-type]
        encoded = []
        for spec in SPECS:
            inners = []
            if spec.name == "base64":  # base64 of base64: one inner decoder per outer alignment
                inners = [RadixView(spec, [group(4) for _ in range(4)]) for _ in range(4)]  # type: ignore[misc]
            encoded.append(RadixView(spec, [group(spec.group) for _ in range(spec.group)], inners))  # type: ignore[misc]
        return Views(plain, encoded)


@dataclass
class _Fan:
    """Feeds one stream to several tracks (the chunk table's and the PII table's)."""

    tracks: tuple[Track, ...]

    def feed(self, symbols: str, owners: Any) -> None:
        for track in self.tracks:
            track.feed(symbols, owners)

    def reset(self) -> None:
        for track in self.tracks:
            track.reset()

    def fork(self) -> _Fan:
        return _Fan(tuple(track.fork() for track in self.tracks))


def _fan(tracks: list[Track]) -> Track | _Fan:
    """The tracks of non-empty tables as one feed target: a track of an empty table never matches,
    and without a PII store (or with no PII retrieved) the PII tables are empty; one track alone
    is fed directly (no call in between)."""
    kept = tuple(track for track in tracks if track.table)
    return kept[0] if len(kept) == 1 else _Fan(kept)


# PII kinds never made public by how often the knowledge base holds them: identifiers that reach one
# person, and links (a link's path or query can name one person, and TGTB's PII metric counts links
# and domains; the Enron grid counted a newsletter's domain in 90 of 2,175 e-mails released this way)
NEVER_PUBLIC_KINDS = frozenset({"email", "phone", "ssn", "credit_card", "iban", "ip", "url"})


def build_sources(
    retrieval: RetrievalResult,
    settings: EchoSettings,
    frequent: FrequentGrams | None,
    pii_store: Any,
    originals: Any,
) -> RequestSources:
    """Index the retrieved chunks (and their PII values) of one request."""
    m = settings.gram
    pii_m = settings.pii_gram
    request = RequestSources(retrieval.query.user_id, GramTable(m), GramTable(pii_m), GramTable(m), GramTable(pii_m))
    user_text = retrieval.query.text
    user_grams = grams_of(user_text, m)
    for hit in retrieval.hits:
        chunk = hit.chunk
        symbols, owners = fold_text(chunk.text)
        request.canonical[chunk.id] = symbols
        public = public_mask(symbols, m, frequent, user_grams)
        words_by_char = _word_of_char(chunk.text)
        words = [words_by_char[owner] for owner in owners]
        positions = range(len(symbols))
        forward = Source.build(chunk.id, "chunk", symbols, positions, words, public)
        request.text.add(forward)
        request.near.add(forward)
        request.text.add(Source.build(chunk.id, "chunk", symbols[::-1], positions[::-1], words[::-1], public))
        _add_letters(request, chunk.id, chunk.text, owners, words_by_char, public)
        if _DIGIT.search(chunk.text):
            _add_digit_words(request, chunk.id, chunk.text, owners, words_by_char, public)
    if pii_store is not None:
        request.pii_source = getattr(pii_store, "source", "index")
        user_symbols = text_symbols(user_text)
        chunks = [(originals(hit.chunk.id) if originals is not None else None) or hit.chunk for hit in retrieval.hits]
        frequency = getattr(pii_store, "chunk_frequency", None)
        public_df = frequent.min_df if frequent is not None else None
        for values in (
            pii_store.values_for(chunks) if hasattr(pii_store, "values_for") else map(pii_store.values, chunks)
        ):
            for value in values:
                folded = text_symbols(value.value)
                if len(folded) < max(MIN_PII_SYMBOLS, pii_m) or folded in user_symbols:
                    continue
                # a value in many records (a clinic, a town, a drug the NER model calls a person)
                # belongs to no single record; an address, a number or a link stays private however
                # many records carry it (a frequent correspondent's e-mail address)
                seen = frequency(value.digest) if frequency is not None and public_df is not None else None
                if seen is not None and seen >= public_df and value.kind not in NEVER_PUBLIC_KINDS:
                    continue
                request.pii_count += 1
                for symbols in (folded, folded[::-1]):
                    request.pii.add(_needle(value.digest, symbols))
                letters, _ = fold_letters(value.value)
                if len(letters) > pii_m:  # the value in any Caesar shift or atbash, forward or reversed
                    for symbols in _caesar_forms(letters):
                        request.pii_differences.add(_needle(value.digest, symbols))
                if len(letters) <= pii_m or any(char.isdigit() for char in value.value):
                    # too few letters for the difference track, or digits (a shift leaves them as
                    # they are, which breaks the letters' differences): every shifted spelling itself
                    for shifted in _shifted_spellings(value.value):
                        for symbols in (shifted, shifted[::-1]):
                            request.pii.add(_needle(value.digest, symbols))
    return request


def _add_letters(
    request: RequestSources,
    chunk_id: str,
    text: str,
    owners: Sequence[int],
    words_by_char: list[int],
    public: list[bool],
) -> None:
    """The Caesar sources of one chunk: its letters' differences forward, reversed and negated
    (atbash); for a chunk with digits, the same streams with its digits kept (`cipher_differences`)."""
    letters, letter_owners = fold_letters(text)
    if len(letters) < 2:
        return
    canonical_of_char = {owner: index for index, owner in reversed(list(enumerate(owners)))}
    canon = [canonical_of_char.get(owner, 0) for owner in letter_owners]
    words = [words_by_char[owner] for owner in letter_owners]
    forward, backward = (canon[1:], words[1:]), (canon[::-1][1:], words[::-1][1:])
    layouts = (forward, forward, backward, backward)
    for symbols, (source_canon, source_words) in zip(_caesar_forms(letters), layouts, strict=True):
        request.differences.add(Source.build(chunk_id, "chunk", symbols, source_canon, source_words, public))
    cipher, cipher_owners = fold_cipher(text)
    if len(cipher) == len(letters):  # no digits: the letters' sources above are the same stream
        return
    if request.digit_differences is None:
        request.digit_differences = GramTable(request.differences.m)
    for stream, stream_owners in (
        cipher_differences(cipher, cipher_owners),
        cipher_differences(cipher[::-1], list(cipher_owners)[::-1]),
    ):
        source_canon = [canonical_of_char.get(owner, 0) for owner in stream_owners]
        source_words = [words_by_char[owner] for owner in stream_owners]
        for symbols in (stream, negated_differences(stream)):
            request.digit_differences.add(Source.build(chunk_id, "chunk", symbols, source_canon, source_words, public))


_DIGIT = re.compile(r"\d")
_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _add_digit_words(
    request: RequestSources,
    chunk_id: str,
    text: str,
    owners: Sequence[int],
    words_by_char: list[int],
    public: list[bool],
) -> None:
    """The chunk with each digit written as a word, as a source of the text table: a copy that
    spells out its digits (inside canaries too) then matches in the text view as one run."""
    spelled: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        piece = _DIGIT_WORDS[int(char)] if char.isascii() and char.isdigit() else char
        spelled.append(piece)
        origin.extend([index] * len(piece))
    symbols, spelled_owners = fold_text("".join(spelled))
    canonical_of_char = {owner: position for position, owner in reversed(list(enumerate(owners)))}
    chars = [origin[owner] for owner in spelled_owners]
    canon = [canonical_of_char.get(char, 0) for char in chars]
    words = [words_by_char[char] for char in chars]
    request.text.add(Source.build(chunk_id, "chunk", symbols, canon, words, public))


def _needle(key: str, symbols: str) -> Source:
    """A PII value as a source: every symbol private, each its own word."""
    steps = range(len(symbols))
    return Source(key, "pii", symbols, steps, steps, range(1, len(symbols) + 1), range(1, len(symbols) + 1))


_LOWER = "abcdefghijklmnopqrstuvwxyz"
# every Caesar shift (1-25) and atbash of the ASCII letters, as `str.translate` tables
_SHIFT_TABLES = (
    *(str.maketrans(_LOWER, _LOWER[k:] + _LOWER[:k]) for k in range(1, 26)),
    str.maketrans(_LOWER, _LOWER[::-1]),
)


def _shifted_spellings(value: str) -> set[str]:
    """The folded symbols of `value` in every Caesar shift (1-25) and atbash of its ASCII letters
    (digits and other characters unchanged, as those ciphers leave them)."""
    lower = value.lower()
    return {text_symbols(lower.translate(table)) for table in _SHIFT_TABLES}


def _caesar_forms(letters: str) -> tuple[str, str, str, str]:
    """Letter differences of `letters`: forward, negated (atbash), reversed, reversed negated."""
    forward, backward = letter_differences(letters), letter_differences(letters[::-1])
    return forward, negated_differences(forward), backward, negated_differences(backward)
