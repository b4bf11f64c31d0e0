"""`UnnaturalTextDetector`: finds long runs of streamed output that are not natural language.

An answer that spells a record out in an encoding (base-N blobs, hex, binary or decimal codes, octal
escapes, Morse, one letter per line or per HTML tag, letters interleaved with filler, NATO words,
regional-indicator or tag characters) leaks it past every text matcher that lacks that encoding.
Instead of a list of encodings, this module scores how *unlike natural text* each character is,
using only its character class (Unicode category, so any script works), its neighbours and the
shape of the word or number it belongs to:

* natural: letters continuing a word of one case shape (lower-case, Capitalised, ALL CAPS or a
  caseless script such as Chinese or Japanese) earn a negative cost, so prose in any language
  drifts down;
* unnatural: case switches inside a word, letters glued to digits, one-letter words and one-letter
  lines, vowel-less consonant clusters and very long words (Latin and Cyrillic), a letter repeating
  the one two places back (filler interleaving) or doubling the previous one, long digit runs and
  numbers separated by a bare space or comma, escape sequences, punctuation glued to punctuation or
  punctuation-only words, symbols, format and private-use characters, stacked combining marks and
  consecutive NATO spelling-alphabet words (the one word-level pattern) each add a positive cost.

The per-character costs feed a CUSUM: ``S = max(0, S + cost)``. A run whose cumulative cost reaches
``threshold`` over at least ``min_run_chars`` characters is reported as an `UnnaturalSpan` from the
start of the excursion (aligned to the start of its word) to the character where ``S`` peaked
(extended to the end of that word). The excursion ends when ``S`` falls ``drop`` below its peak or
back to 0. Every character is processed once with O(1) state, so the cost per delta does not grow
with the answer.

Streaming contract: a character's status is final once ``holdback_chars`` characters follow it;
a span that is confirmed later is clipped to the characters still held back. The union of the
reported spans depends only on the text, never on how it was split into deltas.

What it does not catch: encodings that look like words (rot13, leetspeak, reversed or paraphrased
text, digits written as words); the echo guard compares those against the retrieved chunks.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ragshield.errors import ConfigError

__all__ = ["UnnaturalSpan", "UnnaturalTextDetector"]

# character classes
_LOW, _UP, _CASELESS, _MARK, _DIGIT, _SPACE, _NEWLINE, _PUNCT, _SYMBOL, _FORMAT, _OTHER = range(11)
_HAS_LETTER, _HAS_DIGIT, _HAS_PUNCT = 1, 2, 4  # token content bits
# vowel flags for the consonant-cluster rule (Latin and Cyrillic letters only)
_NA, _CONSONANT, _VOWEL = 0, 1, 2

# -- per-character costs (units of the score; natural text has negative expected cost) --------
WORD_LETTER = -0.3  # a letter continuing a word of one case shape (or a caseless script)
CAPS_LETTER = -0.15  # a capital continuing an ALL CAPS word (less: base32 is ALL CAPS)
CASE_SWITCH = 2.0  # lower -> upper inside a word ("sPoNgE", base64)
CAMEL_REFUND = -1.0  # the third lower-case letter after a switch ("getElement"): camelCase code
CAPS_TO_LOWER = 0.8  # upper -> lower after two or more capitals ("SGVs"); "URLs" pays it once
LETTER_DIGIT = 1.0  # a letter glued to a digit, either way ("6c", "b3"); "400mg" pays it once
ONE_LETTER_WORD = 0.8  # a cased word of one letter ("h e l l o", "<b>H</b>"), not "it's"
ONE_LETTER_LINE = 0.8  # a line holding a single letter ("H\ne\nl")
CLUSTER = 0.6  # each consonant past the fourth in a row (Latin, Cyrillic): random letters
CLUSTER_FREE = 4
LONG_RUN = 0.5  # each letter or digit past the 20th in a row (base32, filler replacing spaces)
LONG_RUN_FREE = 20
ALTERNATION = 1.2  # a letter equal to the one two back ("hxexlxlxo")
DOUBLING = 1.0  # a letter equal to the previous one, once per pair ("hheelloo")
DIGIT_SHORT = 0.05  # each of the first four digits of a number
DIGIT_LONG = 0.4  # each digit past the fourth of a number (binary, digit runs)
DIGIT_AFTER_SPACE = 0.8  # an integer followed by a number after a bare space ("72 101"; not "1/5/2002 2:00")
DIGIT_AFTER_COMMA = 0.8  # ... by ", " or "; " after a plain integer ("72, 101"; not "3.1, 3.2")
ESCAPE = 0.8  # a backslash followed by a letter or digit ("\x48", "\110")
PUNCT_REPEAT = 0.0  # the same punctuation again ("-----", "...."): a repeat carries no information
PUNCT_GLUED = 0.4  # punctuation or a symbol right after a different one (".-..", "</")
PUNCT_WORD = 0.8  # a punctuation-only word after another one (Morse ". .-.. ---")
SYMBOL = 0.1  # a math, currency or modifier symbol below U+2000 ("=", "$", "°")
EMOJI = 0.5  # a symbol from U+2000 on (arrows, emoji, regional indicators)
FORMAT = 0.8  # an invisible format character (tag characters, zero-width)
OTHER = 1.0  # a control, private-use, surrogate or unassigned code point
STACKED_MARK = 1.0  # each combining mark past the second on one letter
SPARSE_VOWELS = 0.5  # a Latin/Cyrillic letter (not in a short ALL CAPS word) while the running vowel share is below VOWEL_FLOOR
SHORT_CAPS = 6  # capitals count for the vowel share only past this many in a word (not "EES", "PJM")
VOWEL_FLOOR = 0.25  # prose: 35-45% vowels; random letters (filler, base32): about 20%
VOWEL_RATE = 1 / 16  # the running share averages about the last 16 letters
REPEATED_WORD = 0.8  # a word equal to the previous word, which also loses its letters' reward
REPEAT_GAP = 12  # ... when at most this many characters lie between them
NATO_FIRST = 0.5  # a NATO spelling-alphabet word
NATO_NEXT = 3.0  # a NATO word right after another one ("Hotel Echo Lima")

NATO = frozenset(
    "alfa alpha bravo charlie delta echo foxtrot golf hotel india juliet juliett kilo lima mike "
    "november oscar papa quebec romeo sierra tango uniform victor whiskey whisky xray yankee zulu".split()
)
_NATO_MAX = 8
_APOSTROPHES = frozenset("'’ʼ`")
_VOWELS = frozenset("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœāăąēĕėęěīĭįıōŏőūŭůűųаеёиоуыэюяіїєѣ")

_CACHE_MAX = 8192
_INFO: dict[str, tuple[int, int]] = {}


def _char_info(ch: str) -> tuple[int, int]:
    """(class, vowel flag) of one character, by Unicode category."""
    if ch == "\n":
        return _NEWLINE, _NA
    cat = unicodedata.category(ch)
    major = cat[0]
    if major == "L":
        if cat == "Ll" or cat == "Lu" or cat == "Lt":
            base = unicodedata.normalize("NFD", ch)[0].lower()
            latin_or_cyrillic = "a" <= base <= "z" or "\u0400" <= base <= "\u04ff" or ch.lower() in _VOWELS
            flag = (_VOWEL if ch.lower() in _VOWELS or base in _VOWELS else _CONSONANT) if latin_or_cyrillic else _NA
            return (_LOW if cat == "Ll" else _UP), flag
        return _CASELESS, _NA
    if major == "M":
        return _MARK, _NA
    if cat == "Nd":
        return _DIGIT, _NA
    if major == "N":
        return _SYMBOL, _NA
    if major == "Z" or ch in "\t\r\x0b\x0c":
        return (_NEWLINE if ch in "\u2028\u2029\x0b\x0c" else _SPACE), _NA
    if major == "P":
        return _PUNCT, _NA
    if major == "S":
        return _SYMBOL, _NA
    if cat == "Cf":
        return _FORMAT, _NA
    return _OTHER, _NA


for _code in range(128):
    _INFO[chr(_code)] = _char_info(chr(_code))


@dataclass(frozen=True, slots=True)
class UnnaturalSpan:
    """A run of the streamed answer that is not natural text.

    Attributes:
        start: raw character offset in the answer (inclusive), counted from the first delta.
        end: raw character offset (exclusive).
        score: the run's cumulative unnaturalness cost from its start to its peak, in the cost
            units of this module (higher = more suspicious); a reported span always has
            ``score >= threshold`` of the detector that found it.
    """

    start: int
    end: int
    score: float


class UnnaturalTextDetector:
    """Streaming detector of unnatural runs; one instance per answer (see the module docstring).

    Args:
        min_run_chars: the shortest run reported, in characters (IDs, hashes and short codes
            below it pass).
        threshold: the cumulative cost a run must reach to be reported (score units; higher =
            more suspicious). Natural prose drifts down, an encoded blob gains roughly 0.2-1.5
            per character.
        holdback_chars: characters after which a character's status is final (the release
            guard withholds this many); must be at least ``min_run_chars``.
        drop: an excursion ends once its cost falls this far below its peak (default: half the
            threshold), so a later blob starts a new span instead of bridging the prose between.

    Raises:
        ConfigError: a parameter is out of range.
    """

    __slots__ = (
        "_s",
        "_peak",
        "_start",
        "_peak_end",
        "_flagged_end",
        "_confirmed",
        "_pos",
        "_prev_ch",
        "_prev2_ch",
        "_prev_cls",
        "_tok",
        "_prev_tok",
        "_alnum",
        "_run_len",
        "_run_start",
        "_letter_cls",
        "_low_streak",
        "_caps_streak",
        "_switched",
        "_run_before",
        "_word",
        "_cluster",
        "_marks",
        "_digits",
        "_gap",
        "_num_compound",
        "_vowels",
        "_word_vowels",
        "_word_consonants",
        "_last_word",
        "_last_word_end",
        "_line_letters",
        "_token_start",
        "_prev_word_start",
        "_nato_chain",
        "_out",
        "drop",
        "holdback_chars",
        "min_run_chars",
        "threshold",
    )

    def __init__(
        self,
        *,
        min_run_chars: int = 48,
        threshold: float = 10.0,
        holdback_chars: int = 128,
        drop: float | None = None,
    ) -> None:
        if min_run_chars < 1:
            raise ConfigError(f"min_run_chars must be >= 1, got {min_run_chars}")
        if not threshold > 0:
            raise ConfigError(f"threshold must be > 0, got {threshold}")
        if holdback_chars < min_run_chars:
            raise ConfigError(f"holdback_chars ({holdback_chars}) must be >= min_run_chars ({min_run_chars})")
        if drop is not None and not drop > 0:
            raise ConfigError(f"drop must be > 0, got {drop}")
        self.min_run_chars = min_run_chars
        self.threshold = float(threshold)
        self.holdback_chars = holdback_chars
        self.drop = float(threshold / 2 if drop is None else drop)
        self._s = 0.0  # CUSUM of the costs since the excursion started
        self._peak = 0.0
        self._start = 0  # first character of the current excursion
        self._peak_end = 0  # end (exclusive) of the character where S peaked
        self._flagged_end = 0  # end of what was already reported for this excursion
        self._confirmed = False
        self._pos = 0  # characters processed
        self._prev_ch = ""
        self._prev2_ch = ""
        self._prev_cls = _SPACE
        self._tok = 0  # what the current whitespace-delimited token holds: _HAS_* bits
        self._prev_tok = 0  # the same for the previous token
        self._alnum = 0  # cased letters and digits in a row
        self._run_len = 0  # letters in the current word
        self._run_start = 0
        self._letter_cls = _LOW  # class of the word's last letter
        self._low_streak = 0  # lower-case letters in a row in the word
        self._caps_streak = 0  # capitals in a row in the word
        self._switched = False  # the word switched from lower to upper case
        self._run_before = ""  # the character before the word (apostrophe check)
        self._word = ""  # the current word, lower-cased, while it may still be a NATO word
        self._cluster = 0  # consonants in a row
        self._marks = 0  # combining marks on the current letter
        self._digits = 0  # digits in the current number
        self._gap = ""  # up to 3 characters since the last digit ("" after a letter)
        self._num_compound = False  # the current number has an inner separator ("1,234.5")
        self._vowels = 0.4  # running share of vowels among Latin and Cyrillic letters
        self._word_vowels = 0  # vowels and consonants in the current word
        self._word_consonants = 0
        self._last_word = ""  # the previous word of two or more letters (first letters, length)
        self._last_word_end = -1
        self._line_letters = 0
        self._token_start = 0  # first character of the current word-like token
        self._prev_word_start = 0
        self._nato_chain = False
        self._out: list[UnnaturalSpan] = []

    def feed(self, delta: str) -> list[UnnaturalSpan]:
        """Process one delta; return the spans found or extended by it (may overlap earlier ones).

        Raises:
            TypeError: ``delta`` is not a string.
        """
        if not isinstance(delta, str):
            raise TypeError(f"delta must be str, got {type(delta).__name__}")
        for ch in delta:
            self._step(ch)
        out, self._out = self._out, []
        return out

    def flush(self) -> list[UnnaturalSpan]:
        """End of the answer: a run not yet confirmed stays released; nothing more to report."""
        out, self._out = self._out, []
        return out

    def _step(self, ch: str) -> None:
        info = _INFO.get(ch)
        if info is None:
            info = _char_info(ch)
            if len(_INFO) < _CACHE_MAX:
                _INFO[ch] = info
        cls, vowel = info
        pos = self._pos
        prev_cls = self._prev_cls
        prev_ch = self._prev_ch
        cost = 0.0
        start_hint = -1  # where an excursion starting here begins (-1: the current token)
        is_letter = cls <= _CASELESS
        if is_letter:
            cased = cls != _CASELESS
            if self._run_len == 0:
                self._run_start = pos
                self._run_before = prev_ch
                self._low_streak = 1 if cls == _LOW else 0
                self._caps_streak = 0 if cls == _LOW else 1
                self._switched = False
                self._word = ch.lower() if cased else ""
                self._cluster = 0
                self._word_vowels = self._word_consonants = 0
                if cased and prev_cls == _DIGIT:
                    cost += LETTER_DIGIT
                elif prev_cls == _PUNCT and prev_ch == "\\" and cased:
                    cost += ESCAPE
            else:
                last = self._letter_cls
                if cls == _CASELESS or last == _CASELESS:
                    cost += WORD_LETTER if cls == last else 0.0
                elif cls == _LOW:
                    if last == _LOW:
                        cost += WORD_LETTER
                        self._low_streak += 1
                        if self._low_streak == 3 and self._switched:
                            cost += CAMEL_REFUND
                    else:
                        cost += CAPS_TO_LOWER if self._caps_streak >= 2 else WORD_LETTER
                        self._low_streak = 1
                    self._caps_streak = 0
                else:  # upper
                    if last == _UP:
                        cost += CAPS_LETTER
                    else:
                        cost += CASE_SWITCH
                        self._switched = True
                    self._caps_streak += 1
                    self._low_streak = 0
                if cased:
                    self._alnum += 1
                    if self._alnum > LONG_RUN_FREE:
                        cost += LONG_RUN
                    low = ch.lower()
                    if low == self._prev2_ch.lower() and low != prev_ch.lower():
                        cost += ALTERNATION
                    elif low == prev_ch.lower() and prev_ch.lower() != self._prev2_ch.lower():
                        cost += DOUBLING
                    if self._run_len < _NATO_MAX:
                        self._word += low
            if vowel == _CONSONANT:
                self._cluster += 1
                if self._cluster > CLUSTER_FREE:
                    cost += CLUSTER
                self._vowels -= self._vowels * VOWEL_RATE
                self._word_consonants += 1
            elif vowel == _VOWEL:
                self._cluster = 0
                self._vowels += (1.0 - self._vowels) * VOWEL_RATE
                self._word_vowels += 1
            else:
                self._cluster = 0
            # the running share lags, so the word itself must be vowel-poor too ("hope" after a blob)
            if (
                vowel != _NA
                and self._vowels < VOWEL_FLOOR
                and self._word_consonants >= 3
                and self._word_vowels * 3 < self._word_consonants
                and (cls == _LOW or self._run_len > SHORT_CAPS)
            ):
                cost += SPARSE_VOWELS
            self._run_len += 1
            self._letter_cls = cls
            self._marks = 0
            self._line_letters += 1
            self._gap = ""
        else:
            if cls == _MARK:
                self._marks += 1
                if self._marks > 2:
                    cost += STACKED_MARK
            if cls != _MARK and cls != _DIGIT:
                self._alnum = 0
            if self._run_len and cls != _MARK:
                cost += self._end_word(ch)
                if self._nato_chain and cost >= NATO_NEXT:
                    start_hint = self._prev_word_start
            if cls == _DIGIT:
                if self._digits == 0:
                    gap = self._gap
                    if len(gap) == 1 and gap in ".,:/-":
                        self._num_compound = True  # "1,234.5", "3.1", "2024-03-15", "12:30"
                    else:
                        prev_simple = not self._num_compound
                        self._num_compound = False
                        if prev_cls == _LOW or prev_cls == _UP:
                            cost += LETTER_DIGIT
                        elif gap == " " and prev_simple:
                            cost += DIGIT_AFTER_SPACE
                        elif (gap == ", " or gap == "; ") and prev_simple:
                            cost += DIGIT_AFTER_COMMA
                        elif prev_ch == "\\":
                            cost += ESCAPE
                self._digits += 1
                cost += DIGIT_SHORT if self._digits <= 4 else DIGIT_LONG
                self._alnum += 1
                if self._alnum > LONG_RUN_FREE:
                    cost += LONG_RUN
                self._gap = ""
            else:
                if self._digits:
                    self._digits = 0
                    self._gap = ch
                elif self._gap and len(self._gap) < 3 and prev_cls != _DIGIT:
                    self._gap += ch
                elif self._gap:
                    self._gap = "~~~"
                if cls == _PUNCT or cls == _SYMBOL:
                    if ch == prev_ch:
                        cost += PUNCT_REPEAT
                    else:
                        if cls == _SYMBOL:
                            cost += SYMBOL if ch < "\u2000" else EMOJI
                        if prev_cls == _PUNCT or prev_cls == _SYMBOL:
                            cost += PUNCT_GLUED
                        elif prev_cls == _SPACE and self._prev_tok == _HAS_PUNCT:
                            cost += PUNCT_WORD
                elif cls == _NEWLINE:
                    if self._line_letters == 1:
                        cost += ONE_LETTER_LINE
                    self._line_letters = 0
                elif cls == _FORMAT:
                    cost += FORMAT
                elif cls == _OTHER:
                    cost += OTHER
        # token boundaries: whitespace, and every caseless-script letter (Chinese has no spaces)
        if cls == _SPACE or cls == _NEWLINE:
            new_token_start = pos + 1
        elif cls == _CASELESS:
            new_token_start = pos + 1
        else:
            new_token_start = -1
        self._advance(pos, cost, cls, start_hint)
        if new_token_start >= 0:
            self._token_start = new_token_start
        if cls == _SPACE or cls == _NEWLINE:
            if self._tok:
                self._prev_tok = self._tok
                self._tok = 0
        else:
            self._tok |= _HAS_LETTER if is_letter else _HAS_DIGIT if cls == _DIGIT else _HAS_PUNCT
        self._prev2_ch = prev_ch
        self._prev_ch = ch
        self._prev_cls = cls
        self._pos = pos + 1

    def _end_word(self, nxt: str) -> float:
        """Cost charged when a word ends, at the character after it."""
        cost = 0.0
        run_len = self._run_len
        if (
            run_len == 1
            and self._word
            and nxt not in _APOSTROPHES
            and self._run_before not in _APOSTROPHES
            and not (self._run_before == " " and self._prev_tok == _HAS_DIGIT and self._tok == _HAS_LETTER)
        ):  # "h e l l o", not "it's" nor a unit after a number ("8 h")
            cost += ONE_LETTER_WORD
        word = self._word
        if run_len <= _NATO_MAX and word in NATO:
            cost += NATO_NEXT if self._nato_chain else NATO_FIRST
            self._nato_chain = True
        elif run_len > 1:
            self._nato_chain = False
        if run_len > 1 and word:
            key = f"{word}/{run_len}"
            if key == self._last_word and self._run_start - self._last_word_end <= REPEAT_GAP:
                cost += REPEATED_WORD - WORD_LETTER * (run_len - 1)  # "<span>H</span><span>"
            self._last_word = key
            self._last_word_end = self._run_start + run_len
        self._prev_word_start = self._run_start
        self._run_len = 0
        return cost

    def _advance(self, pos: int, cost: float, cls: int, start_hint: int) -> None:
        """Add one character's cost to the CUSUM and report what it confirms or extends."""
        s = self._s + cost
        if s <= 0.0:
            if self._confirmed:
                self._confirmed = False
            self._s = 0.0
            self._peak = 0.0
            return
        if self._s <= 0.0:  # a new excursion starts at this character's token
            self._start = start_hint if start_hint >= 0 else min(self._token_start, pos)
            self._peak = 0.0
            self._flagged_end = 0
            self._confirmed = False
        self._s = s
        end = -1
        if s > self._peak:
            self._peak = s
            self._peak_end = pos + 1
            if not self._confirmed and s >= self.threshold and pos + 1 - self._start >= self.min_run_chars:
                self._confirmed = True
            if self._confirmed:
                end = pos + 1
        elif s < self._peak - self.drop:
            self._s = 0.0
            self._peak = 0.0
            self._confirmed = False
            return
        elif self._confirmed and cls != _SPACE and cls != _NEWLINE and self._token_start < self._peak_end:
            end = pos + 1  # the rest of the peak's word
        if end > 0:
            self._report(pos, end)

    def _report(self, pos: int, end: int) -> None:
        start = max(self._start, self._flagged_end, pos + 1 - self.holdback_chars)
        if start >= end:
            return
        out = self._out
        if out and out[-1].end >= start and out[-1].start <= start:
            start = out[-1].start
            out.pop()
        out.append(UnnaturalSpan(start, end, self._peak))
        self._flagged_end = end
