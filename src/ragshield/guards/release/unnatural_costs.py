"""The unnatural-output detector's cost model: how unlike natural text each character is.

Each character is scored from its character class (Unicode category, so any script works), its
neighbours and the shape of the word or number it belongs to:

* natural: letters continuing a word of one case shape (lower-case, Capitalised, ALL CAPS or a
  caseless script such as Chinese or Japanese) earn a negative cost, so prose in any language
  drifts down;
* unnatural: case switches inside a word, letters glued to digits, one-letter words and one-letter
  lines, vowel-less consonant clusters and very long words (Latin and Cyrillic), a letter repeating
  the one two places back (filler interleaving) or doubling the previous one, long digit runs and
  numbers separated by a bare space or comma, escape sequences, punctuation glued to punctuation or
  punctuation-only words, symbols, format and private-use characters, stacked combining marks and
  consecutive NATO spelling-alphabet words (the one word-level pattern) each add a positive cost.

The constants are in score units (higher = more suspicious). `char_info` gives what the scanner
(`unnatural.py`) needs per character; `word_costs` gives the costs of a whole word of ASCII letters
at once, so the scanner need not walk ordinary prose a character at a time.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

# character classes (letters first: `cls <= CASELESS` is a letter)
LOW, UP, CASELESS, MARK, DIGIT, SPACE, NEWLINE, PUNCT, SYMBOL, FORMAT, OTHER = range(11)
HAS_LETTER, HAS_DIGIT, HAS_PUNCT = 1, 2, 4  # token content bits
# vowel flags for the consonant-cluster rule (Latin and Cyrillic letters only)
NOT_LATIN, CONSONANT, VOWEL = 0, 1, 2

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
SYMBOL_COST = 0.1  # a math, currency or modifier symbol below U+2000 ("=", "$", "°")
EMOJI = 0.5  # a symbol from U+2000 on (arrows, emoji, regional indicators)
FORMAT_COST = 0.8  # an invisible format character (tag characters, zero-width)
OTHER_COST = 1.0  # a control, private-use, surrogate or unassigned code point
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
NATO_MAX = 8  # the longest NATO word; a word keeps this many of its first letters
APOSTROPHES = frozenset("'’ʼ`")
_VOWELS = frozenset("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœāăąēĕėęěīĭįıōŏőūŭůűųаеёиоуыэюяіїєѣ")

_CACHE_MAX = 8192
# character -> (class, vowel flag, lower-case form of a cased letter or "", base cost of the class)
INFO: dict[str, tuple[int, int, str, float]] = {}


def _classify(ch: str) -> tuple[int, int, str, float]:
    cat = unicodedata.category(ch)
    major = cat[0]
    if major == "L":
        if cat in ("Ll", "Lu", "Lt"):
            low = ch.lower()[:1]
            base = unicodedata.normalize("NFD", low)[0]
            flag = NOT_LATIN
            if "a" <= base <= "z" or "\u0400" <= base <= "\u04ff" or low in _VOWELS:
                flag = VOWEL if low in _VOWELS or base in _VOWELS else CONSONANT
            return (LOW if cat == "Ll" else UP), flag, low, 0.0
        return CASELESS, NOT_LATIN, "", 0.0
    if ch in "\n\x0b\x0c\u2028\u2029":
        return NEWLINE, NOT_LATIN, "", 0.0
    if major == "Z" or ch in "\t\r":
        return SPACE, NOT_LATIN, "", 0.0
    if major == "M":
        return MARK, NOT_LATIN, "", 0.0
    if cat == "Nd":
        return DIGIT, NOT_LATIN, "", 0.0
    if major == "P":
        return PUNCT, NOT_LATIN, "", 0.0
    if major in "SN":  # symbols, and numbers that are not digits (², ½, Ⅻ)
        return SYMBOL, NOT_LATIN, "", SYMBOL_COST if ch < "\u2000" else EMOJI
    if cat == "Cf":
        return FORMAT, NOT_LATIN, "", FORMAT_COST
    return OTHER, NOT_LATIN, "", OTHER_COST


def char_info(ch: str) -> tuple[int, int, str, float]:
    """What the scanner needs to know about one character (cached in `INFO`): its class, vowel
    flag, lower-case form (cased letters only, else "") and the base cost of its class."""
    info = INFO.get(ch)
    if info is None:
        info = _classify(ch)
        if len(INFO) < _CACHE_MAX:
            INFO[ch] = info
    return info


for _code in range(128):
    char_info(chr(_code))


class WordCosts(NamedTuple):
    """The costs and end state of a word of ASCII letters (`[A-Z]?[a-z]+`) that starts after a
    character that is neither a letter nor a digit, scored as the scanner scores it letter by letter.

    Attributes:
        costs: per letter (score units; higher = more unnatural).
        positive: some letter costs more than 0 (a doubled letter, an alternation, a cluster).
        rise: the largest sum of consecutive costs (>= 0): the most the word alone can raise the
            CUSUM by.
        vowels: per letter, True for a vowel (every ASCII letter is a vowel or a consonant).
        word: the first `NATO_MAX` letters, lower-cased.
        lower: the whole word, lower-cased.
        low_streak: lower-case letters in a row at its end.
        cluster: consonants in a row at its end.
        vowel_count: vowels in the word.
        consonant_count: consonants in the word.
        key: how the scanner remembers the word to spot a repeat (first letters and length).
        plain_end: the word's end costs nothing unless it repeats the previous word (two or
            more letters, not a NATO word).
        share_floor: the lowest running vowel share at the word's start for which these costs
            hold: a vowel-poor word ("drink", "tests") pays `SPARSE_VOWELS` only while the share
            is below `VOWEL_FLOOR`, and the share can fall at most by a factor ``1 - VOWEL_RATE``
            per consonant; 0.0 for a word the rule never reaches.
    """

    costs: tuple[float, ...]
    positive: bool
    rise: float
    vowels: tuple[bool, ...]
    word: str
    lower: str
    low_streak: int
    cluster: int
    vowel_count: int
    consonant_count: int
    key: str
    plain_end: bool
    share_floor: float


WORD_COSTS: dict[str, WordCosts] = {}  # `word_costs`'s cache
_SHARE_MARGIN = 1e-9  # far above the rounding of a word's float steps of the running share


def word_costs(token: str) -> WordCosts:
    """The costs of the word in `token` (a trailing space is ignored; see `WordCosts`), cached per token."""
    if token in WORD_COSTS:
        return WORD_COSTS[token]
    letters = token.rstrip(" ")
    lower = letters.lower()
    costs: list[float] = []
    flags: list[bool] = []
    cluster = vowel_count = consonant_count = 0
    sparse_consonants = 0  # consonants up to the last letter where the vowel-share rule may apply
    for index, low in enumerate(lower):
        # the same rules and the same order of additions as the scanner (bit-identical costs)
        cost = 0.0
        if index:
            cost += WORD_LETTER  # after a lower-case letter, or after the word's one capital
        if index + 1 > LONG_RUN_FREE:
            cost += LONG_RUN
        if index:
            previous = lower[index - 1]
            before = lower[index - 2] if index >= 2 else ""  # the character before the word is no letter
            if low == before and low != previous:
                cost += ALTERNATION
            elif low == previous and previous != before:
                cost += DOUBLING
        vowel = char_info(low)[1] == VOWEL
        if vowel:
            cluster = 0
            vowel_count += 1
        else:
            cluster += 1
            if cluster > CLUSTER_FREE:
                cost += CLUSTER
            consonant_count += 1
        if consonant_count >= 3 and vowel_count * 3 < consonant_count:
            sparse_consonants = consonant_count  # the rule applies here if the share is below the floor
        costs.append(cost)
        flags.append(vowel)
    rise = run = 0.0
    for cost in costs:
        run = max(0.0, run + cost)
        rise = max(rise, run)
    # the share after the letter at `sparse_consonants` is at least start * (1 - rate) ** consonants
    # (a vowel only raises it); the margin covers the floats' rounding in the scanner's steps
    share_floor = VOWEL_FLOOR / (1.0 - VOWEL_RATE) ** sparse_consonants + _SHARE_MARGIN if sparse_consonants else 0.0
    found = WordCosts(
        tuple(costs),
        rise > 0.0,
        rise,
        tuple(flags),
        lower[:NATO_MAX],
        lower,
        len(letters) - (not letters[0].islower()),
        cluster,
        vowel_count,
        consonant_count,
        f"{lower[:NATO_MAX]}/{len(lower)}",
        len(lower) > 1 and lower not in NATO,
        share_floor,
    )
    if len(WORD_COSTS) < _CACHE_MAX:
        WORD_COSTS[token] = found
    return found
