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
SPARSE_VOWELS = 0.5  # a Latin/Cyrillic letter of a vowel-poor word while the running share is low
SHORT_CAPS = 6  # capitals count for the vowel share only past this many in a word (not "EES", "PJM")
VOWEL_FLOOR = 0.25  # prose: 35-45% vowels; random letters (filler, base32): about 20%
VOWEL_RATE = 1 / 16  # the running share averages about the last 16 letters
REPEATED_WORD = 0.8  # a word equal to the previous word, which also loses its letters' reward
REPEAT_GAP = 12  # ... when at most this many characters lie between them
NATO_FIRST = 0.5  # a NATO spelling-alphabet word
NATO_NEXT = 3.0  # a NATO word right after another one ("Hotel Echo Lima")

NATO = frozenset(
    (
        "alfa", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
        "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
        "uniform", "victor", "whiskey", "whisky", "xray", "yankee", "zulu",
    )
)  # fmt: skip
_NATO_MAX = 8
_APOSTROPHES = frozenset("'’ʼ`")
_VOWELS = frozenset("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœāăąēĕėęěīĭįıōŏőūŭůűųаеёиоуыэюяіїєѣ")

_CACHE_MAX = 8192
# character -> (class, vowel flag, lower-case form of a cased letter or "", base cost of the class)
_INFO: dict[str, tuple[int, int, str, float]] = {}


def _char_info(ch: str) -> tuple[int, int, str, float]:
    """What the scanner needs to know about one character, by Unicode category."""
    cat = unicodedata.category(ch)
    major = cat[0]
    if major == "L":
        if cat in ("Ll", "Lu", "Lt"):
            low = ch.lower()[:1]
            base = unicodedata.normalize("NFD", low)[0]
            flag = _NA
            if "a" <= base <= "z" or "\u0400" <= base <= "\u04ff" or low in _VOWELS:
                flag = _VOWEL if low in _VOWELS or base in _VOWELS else _CONSONANT
            return (_LOW if cat == "Ll" else _UP), flag, low, 0.0
        return _CASELESS, _NA, "", 0.0
    if ch in "\n\x0b\x0c\u2028\u2029":
        return _NEWLINE, _NA, "", 0.0
    if major == "Z" or ch in "\t\r":
        return _SPACE, _NA, "", 0.0
    if major == "M":
        return _MARK, _NA, "", 0.0
    if cat == "Nd":
        return _DIGIT, _NA, "", 0.0
    if major == "P":
        return _PUNCT, _NA, "", 0.0
    if major in "SN":  # symbols, and numbers that are not digits (², ½, Ⅻ)
        return _SYMBOL, _NA, "", SYMBOL if ch < "\u2000" else EMOJI
    if cat == "Cf":
        return _FORMAT, _NA, "", FORMAT
    return _OTHER, _NA, "", OTHER


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


# the scanner's state between deltas, in the order `_scan` unpacks it
_INITIAL_STATE = (
    0.0, 0.0, 0, 0, 0, False,  # CUSUM: S, peak, excursion start, peak end, reported end, confirmed
    0, "", "", _SPACE,  # characters scanned, previous two (lower-cased) characters, previous class
    0, 0, "", _LOW, 0, 0, False, "",  # word: letters, start, char before, last letter class, lower and
    # capital streaks, switched case, its first letters lower-cased
    0, 0, 0, 0.4, 0, 0,  # consonants in a row, marks, alnum run, vowel share, word vowels, consonants
    0, "", False,  # digits in the number, characters since the last number, number has separators
    "", -1, 0, 0, 0, False, 0, 0,  # previous word and its end, line letters, token start, previous
    # word start, NATO chain, token content bits, previous token's bits
)  # fmt: skip


class UnnaturalTextDetector:
    """Streaming detector of unnatural runs; one instance per answer (see the module docstring).

    Args:
        min_run_chars: the shortest run reported, in characters (IDs, hashes and short codes
            below it pass).
        threshold: the cumulative cost a run must reach to be reported (score units; higher =
            more suspicious). Natural prose drifts down, an encoded blob gains roughly 0.15-2
            per character.
        holdback_chars: characters after which a character's status is final (the release
            guard withholds this many); at least ``min_run_chars + batch_chars``.
        batch_chars: deltas are buffered and scanned once this many characters are pending (one
            scan per batch keeps the cost per delta low); counted in ``holdback_chars``.
        drop: an excursion ends once its cost falls this far below its peak (default: half the
            threshold), so a later blob starts a new span instead of bridging the prose between.

    Raises:
        ConfigError: a parameter is out of range.
    """

    __slots__ = (
        "_pending",
        "_pending_chars",
        "_state",
        "batch_chars",
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
        batch_chars: int = 16,
        drop: float | None = None,
    ) -> None:
        if min_run_chars < 1:
            raise ConfigError(f"min_run_chars must be >= 1, got {min_run_chars}")
        if not threshold > 0:
            raise ConfigError(f"threshold must be > 0, got {threshold}")
        if batch_chars < 1:
            raise ConfigError(f"batch_chars must be >= 1, got {batch_chars}")
        if holdback_chars < min_run_chars + batch_chars:
            raise ConfigError(
                f"holdback_chars ({holdback_chars}) must be >= min_run_chars + batch_chars "
                f"({min_run_chars} + {batch_chars})"
            )
        if drop is not None and not drop > 0:
            raise ConfigError(f"drop must be > 0, got {drop}")
        self.min_run_chars = min_run_chars
        self.threshold = float(threshold)
        self.holdback_chars = holdback_chars
        self.batch_chars = batch_chars
        self.drop = float(threshold / 2 if drop is None else drop)
        self._state = _INITIAL_STATE
        self._pending: list[str] = []
        self._pending_chars = 0

    def feed(self, delta: str) -> list[UnnaturalSpan]:
        """Process one delta; return the spans found or extended by it (may overlap earlier ones).

        Raises:
            TypeError: ``delta`` is not a string.
        """
        if not isinstance(delta, str):
            raise TypeError(f"delta must be str, got {type(delta).__name__}")
        self._pending.append(delta)
        self._pending_chars += len(delta)
        if self._pending_chars < self.batch_chars:
            return []
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        return self._scan(text)

    def flush(self) -> list[UnnaturalSpan]:
        """End of the answer: scan what is pending; a run not yet confirmed stays released."""
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        return self._scan(text) if text else []

    def _scan(self, text: str) -> list[UnnaturalSpan]:
        """Cost every character, run the CUSUM and collect the spans it confirms or extends.

        One flat loop over locals: this is the hot path (about 0.5 us per character in CPython).
        """
        (
            s, peak, start, peak_end, flagged_end, confirmed,
            pos, prev_low, prev2_low, prev_cls,
            run_len, run_start, run_before, letter_cls, low_streak, caps_streak, switched, word,
            cluster, marks, alnum, vowels, word_vowels, word_consonants,
            digits, gap, num_compound,
            last_word, last_word_end, line_letters, token_start, prev_word_start, nato_chain, tok, prev_tok,
        ) = self._state  # fmt: skip
        threshold, drop, min_run = self.threshold, self.drop, self.min_run_chars
        window = self.holdback_chars - self.batch_chars  # decided this far behind the scan
        out: list[UnnaturalSpan] = []
        rep_start = rep_end = -1  # the span being reported, extended in place while contiguous
        rep_score = 0.0
        info_of = _INFO.get
        for ch in text:
            info = info_of(ch)
            if info is None:
                info = _char_info(ch)
                if len(_INFO) < _CACHE_MAX:
                    _INFO[ch] = info
            cls, vowel, low, cost = info
            hint = -1  # where an excursion starting here begins (-1: the current token)
            if cls <= _CASELESS:  # a letter
                if run_len == 0:
                    run_start, run_before, switched, word = pos, prev_low, False, low
                    low_streak, caps_streak = (1, 0) if cls == _LOW else (0, 1)
                    cluster = word_vowels = word_consonants = 0
                    if low and prev_cls == _DIGIT:
                        cost += LETTER_DIGIT
                    elif low and prev_low == "\\":
                        cost += ESCAPE
                elif cls == _CASELESS or letter_cls == _CASELESS:
                    cost += WORD_LETTER if cls == letter_cls else 0.0
                elif cls == _LOW:
                    if letter_cls == _LOW:
                        cost += WORD_LETTER
                        low_streak += 1
                        if low_streak == 3 and switched:
                            cost += CAMEL_REFUND
                    else:
                        cost += CAPS_TO_LOWER if caps_streak >= 2 else WORD_LETTER
                        low_streak = 1
                    caps_streak = 0
                else:  # a capital
                    if letter_cls == _UP:
                        cost += CAPS_LETTER
                    else:
                        cost += CASE_SWITCH
                        switched = True
                    caps_streak += 1
                    low_streak = 0
                if low:
                    alnum += 1
                    if alnum > LONG_RUN_FREE:
                        cost += LONG_RUN
                    if run_len:
                        if low == prev2_low and low != prev_low:
                            cost += ALTERNATION
                        elif low == prev_low and prev_low != prev2_low:
                            cost += DOUBLING
                        if run_len < _NATO_MAX:
                            word += low
                else:
                    alnum = 0
                if vowel == _CONSONANT:
                    cluster += 1
                    if cluster > CLUSTER_FREE:
                        cost += CLUSTER
                    vowels -= vowels * VOWEL_RATE
                    word_consonants += 1
                elif vowel == _VOWEL:
                    cluster = 0
                    vowels += (1.0 - vowels) * VOWEL_RATE
                    word_vowels += 1
                else:
                    cluster = 0
                # the running share lags, so the word itself must be vowel-poor too ("hope" after a blob)
                if (
                    vowel
                    and vowels < VOWEL_FLOOR
                    and word_consonants >= 3
                    and word_vowels * 3 < word_consonants
                    and (cls == _LOW or run_len > SHORT_CAPS)
                ):
                    cost += SPARSE_VOWELS
                run_len += 1
                letter_cls = cls
                marks = 0
                line_letters += 1
                gap = ""
                tok |= _HAS_LETTER
            else:
                if cls == _MARK:
                    marks += 1
                    if marks > 2:
                        cost += STACKED_MARK
                else:
                    if cls != _DIGIT:
                        alnum = 0
                    if run_len:  # the word ends here
                        if (
                            run_len == 1
                            and word
                            and ch not in _APOSTROPHES
                            and run_before not in _APOSTROPHES
                            and not (run_before == " " and prev_tok == _HAS_DIGIT and tok == _HAS_LETTER)
                        ):  # "h e l l o", not "it's" nor a unit after a number ("8 h")
                            cost += ONE_LETTER_WORD
                        if run_len <= _NATO_MAX and word in NATO:
                            if nato_chain:
                                cost += NATO_NEXT
                                hint = prev_word_start
                            else:
                                cost += NATO_FIRST
                            nato_chain = True
                        elif run_len > 1:
                            nato_chain = False
                        if run_len > 1 and word:
                            key = f"{word}/{run_len}"
                            if key == last_word and run_start - last_word_end <= REPEAT_GAP:
                                cost += REPEATED_WORD - WORD_LETTER * (run_len - 1)  # "<span>H</span><span>"
                            last_word, last_word_end = key, run_start + run_len
                        prev_word_start = run_start
                        run_len = 0
                if cls == _DIGIT:
                    if digits == 0:
                        if len(gap) == 1 and gap in ".,:/-":
                            num_compound = True  # "1,234.5", "3.1", "2024-03-15", "12:30"
                        else:
                            prev_simple = not num_compound
                            num_compound = False
                            if prev_cls in (_LOW, _UP):
                                cost += LETTER_DIGIT
                            elif gap == " " and prev_simple:
                                cost += DIGIT_AFTER_SPACE
                            elif (gap == ", " or gap == "; ") and prev_simple:
                                cost += DIGIT_AFTER_COMMA
                            elif prev_low == "\\":
                                cost += ESCAPE
                    digits += 1
                    cost += DIGIT_SHORT if digits <= 4 else DIGIT_LONG
                    alnum += 1
                    if alnum > LONG_RUN_FREE:
                        cost += LONG_RUN
                    gap = ""
                    tok |= _HAS_DIGIT
                elif cls != _MARK:
                    if digits:
                        digits = 0
                        gap = ch
                    elif gap:
                        gap = gap + ch if len(gap) < 3 else "~~~"
                    if cls in (_PUNCT, _SYMBOL):
                        if ch == prev_low:
                            cost = PUNCT_REPEAT
                        elif prev_cls in (_PUNCT, _SYMBOL):
                            cost += PUNCT_GLUED
                        elif prev_cls == _SPACE and prev_tok == _HAS_PUNCT:
                            cost += PUNCT_WORD
                        tok |= _HAS_PUNCT
                    elif cls in (_NEWLINE, _SPACE):
                        if cls == _NEWLINE:
                            if line_letters == 1:
                                cost += ONE_LETTER_LINE
                            line_letters = 0
                        if tok:
                            prev_tok, tok = tok, 0
                    else:
                        tok |= _HAS_PUNCT
            # -- CUSUM over the costs; spans start at a token and end where S peaked -------------
            if cost > 0.0 or s > 0.0:
                t = s + cost
                end = -1
                if t <= 0.0:
                    s = peak = 0.0
                    confirmed = False
                else:
                    if s <= 0.0:  # a new excursion starts at this character's token
                        start = hint if hint >= 0 else min(token_start, pos)
                        peak = 0.0
                        flagged_end = 0
                        confirmed = False
                    s = t
                    if s > peak:
                        peak, peak_end = s, pos + 1
                        if not confirmed and s >= threshold and pos + 1 - start >= min_run:
                            confirmed = True
                        if confirmed:
                            end = pos + 1
                    elif s < peak - drop:
                        s = peak = 0.0
                        confirmed = False
                    elif confirmed and cls != _SPACE and cls != _NEWLINE and token_start < peak_end:
                        end = pos + 1  # the rest of the peak's word
                if end > 0:
                    first = max(start, flagged_end, pos + 1 - window)
                    if first < end:
                        if rep_end < first:  # not contiguous with the pending report: emit that one
                            if rep_end > rep_start:
                                out.append(UnnaturalSpan(rep_start, rep_end, rep_score))
                            rep_start = first
                        rep_end, rep_score, flagged_end = end, peak, end
            # token boundaries: whitespace, and every caseless-script letter (Chinese has no spaces)
            if cls in (_SPACE, _NEWLINE, _CASELESS):
                token_start = pos + 1
            prev2_low, prev_low, prev_cls = prev_low, (low or ch), cls
            pos += 1
        self._state = (
            s, peak, start, peak_end, flagged_end, confirmed,
            pos, prev_low, prev2_low, prev_cls,
            run_len, run_start, run_before, letter_cls, low_streak, caps_streak, switched, word,
            cluster, marks, alnum, vowels, word_vowels, word_consonants,
            digits, gap, num_compound,
            last_word, last_word_end, line_letters, token_start, prev_word_start, nato_chain, tok, prev_tok,
        )  # fmt: skip
        if rep_end > rep_start:
            out.append(UnnaturalSpan(rep_start, rep_end, rep_score))
        return out
