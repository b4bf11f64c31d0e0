"""Streaming views of the answer that the release guard matches against the retrieved texts.

Each view turns raw deltas into symbols with their raw offsets and feeds one or more `Track`s:

* `TextView`: the answer folded (`fold_text`: case, separators, zero-width, NFKC and confusable
  look-alikes, leetspeak). One character per line and spaced-out letters fold away too.
  The same view derives the `letters` stream and feeds it, as consecutive-letter differences
  (mod 26), to the Caesar track: every shift, rot13 included, and (with negated differences among
  the sources) atbash, match at once. Numbered lines match there too (digits are not letters).
  When a retrieved chunk holds digits, a second Caesar track gets the same differences with the
  answer's digits kept in place (`cipher_differences`): a cipher leaves digits as they are, so a
  number copied between two enciphered words counts towards the run as the chunk word it is.
  Every 2nd raw character, at both phases, feeds a stride track: a filler character after every
  character, and doubled characters.
* `UntaggedView`: HTML-like tags removed (a letter per `<b>` tag), then folded.
* `Rot47View`: the answer rot47-decoded (rot47 moves letters onto punctuation and digits).
* `UnescapeView` (`escapes.py`): percent-escapes, HTML character references, `\\xHH`, `\\uHHHH`,
  `U+HHHH`, octal `\\NNN` escapes and bare decimal character codes decoded, twice (double URL-encoding).
* `SpelledView` (`spelled.py`): NATO phonetic words, digit words and Morse code read back as characters.

Reversed copies need no view: the sources include each text reversed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragshield.guards.release.fold import (
    fold_ascii,
    fold_cipher,
    fold_letters,
    fold_text,
    fold_text_at,
    text_tables_after,
)
from ragshield.guards.release.tracks import Track

_TAG = re.compile(r"<[^<>]{0,40}>")
_TAG_TAIL = re.compile(r"<[^<>]{0,40}$")
_ROT47 = str.maketrans(
    "".join(chr(c) for c in range(33, 127)), "".join(chr(33 + (c - 33 + 47) % 94) for c in range(33, 127))
)
_ROT47_TEXT = text_tables_after(_ROT47)  # rot47 undone and folded (ASCII)


_MOD26 = bytes(97 + value % 26 for value in range(256))  # a byte's value mod 26, as a letter


def letter_differences(letters: str, previous: str = "") -> str:
    """Consecutive-letter differences mod 26, as letters (`a` = 0): the same for every Caesar shift."""
    data = (previous + letters).encode("ascii")
    size = len(data) - 1
    if size <= 0:
        return ""
    # bytewise at C speed, as big integers: 26 + later - earlier lies in [1, 51] for letters a-z,
    # so no byte borrows from its neighbour
    later, earlier = int.from_bytes(data[1:], "big"), int.from_bytes(data[:-1], "big")
    shifted = later + int.from_bytes(b"\x1a" * size, "big") - earlier
    return shifted.to_bytes(size, "big").translate(_MOD26).decode("ascii")


_CIPHER_RUN = re.compile(r"[a-z]+|[0-9]+")
_ASCII_DIGIT = re.compile(r"[0-9]")


def cipher_differences(
    symbols: str, owners: Sequence[int], previous: str = "", after_digit: bool = False
) -> tuple[str, list[int]]:
    """`cipher`-alphabet symbols (a-z, 0-9) as a stream no letter cipher changes: each digit as
    itself, each letter as its difference from the letter before it (`letter_differences`), but the
    first letter after digits as `*` (its difference across the digits depends on where a copy
    starts: a copy that opens with a number would not match); the first letter of all, with none
    before it, is dropped. `after_digit`: the symbols before these ended in a digit. Returns the
    stream and the owner of each of its symbols (a difference is owned by its later letter)."""
    stream: list[str] = []
    kept: list[int] = []
    owned = list(owners)  # once: a `LazyOwners` costs a Python call per index
    for run in _CIPHER_RUN.finditer(symbols):
        start, end, piece = run.start(), run.end(), run.group()
        if piece[0].isdigit():
            stream.append(piece)
            after_digit = True
        else:
            if after_digit:
                stream.append("*" + letter_differences(piece[1:], piece[0]))
            else:
                stream.append(letter_differences(piece, previous))
                start += 0 if previous else 1
            previous, after_digit = piece[-1], False
        kept.extend(owned[start:end])
    return "".join(stream), kept


def negated_differences(stream: str) -> str:
    """A difference stream under atbash: each letter difference negated (mod 26), digits kept."""
    return stream.translate(_NEGATE)


_NEGATE = str.maketrans({chr(97 + value): chr(97 + (-value) % 26) for value in range(26)})


@dataclass
class TextView:
    """The folded answer (see the module docstring) for the text, Caesar and stride tracks."""

    text: Track
    caesar: Track
    strides: Sequence[Sequence[Track]] = ()  # strides[s - 2][phase], over raw characters (s = 2, 3, ...)
    near: Any = None  # a `NearTrack`: copies with an edit every few symbols
    caesar_digits: Any = None  # a `Track` of differences with digits kept (None: no chunk has digits)
    _last_letter: str = ""
    _after_digit: bool = False  # the answer's last letter or digit was a digit

    def feed(self, delta: str, offset: int) -> None:
        self._feed_piece(delta, offset)

    def flush(self) -> None:
        """Nothing is held back."""

    def _feed_piece(self, piece: str, offset: int) -> None:
        if not piece:
            return
        symbols, owners = fold_text(piece, offset)
        self.text.feed(symbols, owners)
        if self.near is not None:
            self.near.feed(symbols, owners)
        # every 2nd / 3rd raw character at each phase: filler after every character, doubled text
        positions = range(offset, offset + len(piece))
        for stride_index, phases in enumerate(self.strides):
            stride = stride_index + 2
            for phase, track in enumerate(phases):
                first = (phase - offset) % stride
                track.feed(*fold_text_at(piece[first::stride], positions[first::stride]))
        letters, letter_owners = fold_letters(piece, offset)
        previous = self._last_letter
        if letters:
            differences = letter_differences(letters, previous)
            if len(differences) < len(letters):  # the answer's first letter has no difference
                letter_owners = letter_owners[1:]
            self.caesar.feed(differences, letter_owners)
            self._last_letter = letters[-1]
        if self.caesar_digits is not None:
            # the common case, no digit now or just before: the same stream as the letters'
            if not self._after_digit and piece.isascii() and _ASCII_DIGIT.search(piece) is None:
                if letters:
                    self.caesar_digits.feed(differences, letter_owners)
                return
            symbols, owners = fold_cipher(piece, offset)
            self.caesar_digits.feed(*cipher_differences(symbols, owners, previous, self._after_digit))
            if symbols:
                self._after_digit = symbols[-1].isdigit()


@dataclass
class UntaggedView:
    """The answer with HTML-like tags removed (one letter per `<b>` tag), folded, for one track.

    A separate view, not a step of `TextView`: text inside angle brackets (an e-mail address, a
    header) must still reach the text view. Pieces without a tag are skipped (the text view sees
    them as they are); an unfinished tag is held until it closes or grows too long to be one.
    """

    track: Track
    _carry: str = ""
    _carry_offset: int = 0

    def feed(self, delta: str, offset: int) -> None:
        text, start = self._carry + delta, (self._carry_offset if self._carry else offset)
        self._carry = ""
        if "<" not in text:
            self.track.reset()
            return
        tail = _TAG_TAIL.search(text)
        if tail is not None:
            self._carry, self._carry_offset = text[tail.start() :], start + tail.start()
            text = text[: tail.start()]
        cursor = 0
        for match in _TAG.finditer(text):
            self.track.feed(*fold_text(text[cursor : match.start()], start + cursor))
            cursor = match.end()
        self.track.feed(*fold_text(text[cursor:], start + cursor))

    def flush(self) -> None:
        carry, self._carry = self._carry, ""
        if carry:
            self.track.feed(*fold_text(carry, self._carry_offset))


@dataclass
class Rot47View:
    """The answer with rot47 undone, folded, for one track."""

    track: Track

    def feed(self, delta: str, offset: int) -> None:
        if delta.isascii():  # rot47 and folding in one translate
            self.track.feed(*fold_ascii(delta, offset, _ROT47_TEXT))
        else:
            self.track.feed(*fold_text(delta.translate(_ROT47), offset))

    def flush(self) -> None:
        """Nothing is held back."""


@dataclass
class HoldingView:
    """A view that holds back the end of each piece that the next delta may still change (an
    unfinished escape or word), then feeds the rest; subclasses say where to cut (`_cut`) and what
    to do with the text (`_feed`)."""

    track: Track
    _carry: str = ""
    _carry_offset: int = 0

    def feed(self, delta: str, offset: int) -> None:
        start = self._carry_offset if self._carry else offset
        text, self._carry = self._carry + delta, ""
        cut = self._cut(text)
        if cut < len(text):
            self._carry, self._carry_offset = text[cut:], start + cut
            text = text[:cut]
        self._feed(text, start)

    def flush(self) -> None:
        carry, self._carry = self._carry, ""
        self._feed(carry, self._carry_offset)

    def _cut(self, text: str) -> int:
        raise NotImplementedError

    def _feed(self, text: str, start: int) -> None:
        raise NotImplementedError


_PIECE = re.compile(r"\S+|\s+")
_DIGIT = re.compile(r"\d")
_ALNUM = re.compile(r"[^\W_]")
_BLOB_CHARS = 12  # a token this long may be an encoded blob by itself
# whitespace-separated words shorter than `_BLOB_CHARS` that start with a letter and hold no digit,
# and lone such tokens with a digit (a number in a sentence) each followed by a whole such word;
# possessive, so linear (a longer token makes the whole match fail: it may be a blob)
_SHORT = _BLOB_CHARS - 1
# (the plain word first: most tokens are one, and it needs no lookahead)
_WORDS = re.compile(
    rf"\s*(?:[^\W\d_][^\s\d]{{0,{_SHORT - 1}}}+(?:\s+|$)"
    rf"|(?=[^\s\d]*\d)\S{{1,{_SHORT}}}+\s+[^\W\d_][^\s\d]{{0,{_SHORT - 1}}}+\s+)*"
)
_COLD_WORD = rf"[^\W\d_][^\s\d]{{0,{_SHORT - 1}}}+"
# after a lone short number (weak): the first whole word drops it, then words as above
_WEAK_WORDS = re.compile(rf"\s*{_COLD_WORD}\s+(?:{_WORDS.pattern})")
# words, then a lone short number at the end, maybe with the whitespace and the start of a word after it
_WORDS_THEN_NUMBER = re.compile(
    rf"(?:{_WORDS.pattern})(?P<number>(?=[^\s\d]*\d)\S{{1,{_SHORT}}}+)(?:(?P<gap>\s+)(?P<word>{_COLD_WORD})?)?"
)
_COLD, _WEAK, _HOT = 0, 1, 2


@dataclass
class Views:
    """All views of one answer.

    `plain` views get every delta. `encoded` views (the base-N decoders) get only what may be
    encoded: tokens of at least `_BLOB_CHARS` characters, tokens of separators only (`|` between
    binary bytes), and runs of two or more short tokens with digits (`4a 6f`, `01001010 01101111`),
    with the whitespace between them. Ordinary words, and a lone number in a sentence, never reach
    a decoder, which keeps the cost of natural text low; an ordinary word between two blobs
    interrupts them (the first word after a blob reaches the decoders before they are
    interrupted: it may be the blob's last, short line).
    """

    plain: list[Any] = field(default_factory=list)
    encoded: list[Any] = field(default_factory=list)
    _token: str = ""
    _token_offset: int = 0
    _token_state: int = _COLD
    _state: int = _COLD  # of the tokens before: cold (words), weak (one short token with a digit), hot
    _held: list[tuple[str, int]] = field(default_factory=list)  # a weak token and what followed it

    def feed(self, delta: str, offset: int) -> None:
        for view in self.plain:
            view.feed(delta, offset)
        if self.encoded and not self._words_only(delta, offset):
            for match in _PIECE.finditer(delta):
                self._gate(match.group(), offset + match.start())

    def _words_only(self, delta: str, offset: int) -> bool:
        """The common case at C speed: between words (cold), a delta of short words that start
        with a letter and hold no digit, and of lone short numbers each followed by such a word,
        reaches no decoder (`_gate` holds a number until the word after it, then drops it); `_gate`
        would only carry its last, unfinished word, which this does too. False: let `_gate`
        decide piece by piece."""
        if self._state == _HOT or self._token_state == _HOT or (self._state == self._token_state == _WEAK):
            return False
        joined = self._token + delta
        # a weak number before (held, or the unfinished token) is dropped by the first whole word
        if (_WEAK_WORDS if self._state == _WEAK else _WORDS).fullmatch(joined) is None:
            return self._state == _COLD and self._ends_in_number(joined, offset)
        self._state, self._held, self._token_state = _COLD, [], _COLD
        # every token is shorter than `_BLOB_CHARS`: the last one starts in the last characters
        if not joined or joined[-1].isspace():  # `str.split` splits where `\s` matches, at C speed from the end
            self._token = ""
        else:
            start = max(len(joined) - _BLOB_CHARS, len(joined) - len(joined.rsplit(None, 1)[-1]))
            if start >= len(self._token):
                self._token_offset = offset + start - len(self._token)
            self._token = joined[start:]
        return True

    def _ends_in_number(self, joined: str, offset: int) -> bool:
        """From cold, words then a lone short number at the end (maybe with the whitespace and the
        unfinished word after it): leave the state `_gate` would (the number weak, or held with
        that whitespace). False: no such text."""
        match = _WORDS_THEN_NUMBER.fullmatch(joined)
        if match is None:
            return False
        base = offset - len(self._token)  # answer offset of joined[0]
        start = match.start("number")
        number_offset = self._token_offset if start == 0 and self._token else base + start
        gap, word = match.group("gap"), match.group("word")
        if gap is None:  # the number is the unfinished token
            self._token, self._token_offset, self._token_state = match.group("number"), number_offset, _WEAK
            return True
        self._state = _WEAK
        self._held = [(match.group("number"), number_offset), (gap, base + match.start("gap"))]
        self._token, self._token_state = word or "", _COLD
        if word:
            self._token_offset = base + match.start("word")
        return True

    def _gate(self, piece: str, offset: int) -> None:
        if piece[0].isspace():
            if self._token:
                self._end_token()
            if self._state == _HOT:
                self._encode(piece, offset)
            elif self._state == _WEAK:
                self._held.append((piece, offset))
            return
        if not self._token:
            self._token_offset = offset
        self._token += piece
        if self._token_state == _HOT:
            self._encode(piece, offset)
        elif len(self._token) >= _BLOB_CHARS or _ALNUM.search(self._token) is None:
            self._release_held()
            self._encode(self._token, self._token_offset)
            self._token_state = self._state = _HOT
        elif _DIGIT.search(piece) is not None:
            self._token_state = _WEAK

    def _end_token(self) -> None:
        token, state = self._token, self._token_state
        self._token, self._token_state = "", _COLD
        if state == _HOT:
            return
        if state == _WEAK:
            if self._state == _COLD:
                self._state, self._held = _WEAK, [(token, self._token_offset)]
            else:  # a second short token with a digit in a row: a blob written with separators
                self._release_held()
                self._encode(token, self._token_offset)
                self._state = _HOT
            return
        if self._state == _HOT:
            # the first word after a blob may be its last, short line (a wrapped blob's remainder,
            # `MQA`) or ordinary text on the next line (`Thanks`, whose letters would fill the
            # blob's short last group): the decoders read the blob both ways, as it ends here and
            # with the word, and their own alphabets say where it ends
            for view in self.encoded:
                view.peek_tail()
            self._encode(token, self._token_offset)
            for view in self.encoded:
                view.interrupt()
        self._state, self._held = _COLD, []

    def _release_held(self) -> None:
        held, self._held = self._held, []
        for piece, offset in held:
            self._encode(piece, offset)

    def _encode(self, text: str, offset: int) -> None:
        owners = range(offset, offset + len(text))
        for view in self.encoded:
            view.feed(text, owners)

    def flush(self) -> None:
        if self._token:
            self._end_token()
        for view in (*self.plain, *self.encoded):
            view.flush()
