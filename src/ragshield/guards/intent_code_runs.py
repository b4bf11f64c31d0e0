"""Runs of one code per symbol in a query read back, for `intent_decoding.decoded_form`: 8-bit
binary groups, decimal character codes, Morse and NATO words (`codes_decoded`). The gate (which
runs are read) is described in `intent_decoding`."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from contextlib import suppress
from itertools import islice, pairwise

from ragshield.encodings import ViewDecodeError, decode
from ragshield.encodings.spelled import MORSE_FOLD, MORSE_MARK_CLASS, MORSE_MARKS, NATO_READ
from ragshield.guards.intent_languages import other_script_letter, script_of
from ragshield.guards.intent_vocabulary import (
    MIN_SCRIPT_LETTERS,
    plain_text,
    printable,
    printable_part,
    vocabulary_words,
)

_NATO_WORD = "|".join(sorted((re.escape(word) for word in NATO_READ), key=len, reverse=True))
_NATO_CODE = re.compile(rf"(?<!\w)(?:{_NATO_WORD})(?!\w)", re.IGNORECASE)
# "(espacio)", "[space]", "(next word)": a gap, whatever words it holds
_NATO_ASIDE = r"\([^()\n]{1,20}\)|\[[^\[\]\n]{1,20}\]"
_NATO_CODE_OR_ASIDE = re.compile(rf"{_NATO_ASIDE}|{_NATO_CODE.pattern}", re.IGNORECASE)
# what may stand between two NATO words: spaces, punctuation and dashes ("Alfa-Lima", "delta, alfa",
# "ALFA — TANGO") or a spoken word gap ("Echo, break, Victor", "(espacio)"); possessive, at most
# eight pieces, so a client's long run is still read once
_NATO_GAP_WORDS = "break|stop|space|pause|next|then|and|espacio|espace|spazio|leerzeichen"
_NATO_GAP = rf"(?:[\s,;:./|\-\u2013\u2014]|{_NATO_ASIDE}|(?:{_NATO_GAP_WORDS})(?!\w)){{1,8}}+"
# a mark between two NATO words that can only end a spelled word; a space, a hyphen or a comma
# may stand between letters
_NATO_WORD_END = re.compile(rf"[/|\n.;:\u2013\u2014(\[]|(?:{_NATO_GAP_WORDS})|\s\s", re.IGNORECASE)
# one Morse code, in any of the dots and dashes of MORSE_FOLD, not part of a word or a longer run
_NOT_MORSE_OR_WORD = "[\\w" + re.escape(MORSE_MARKS) + "]"
_MORSE_SYMBOL = rf"{MORSE_MARK_CLASS}{{1,7}}(?!{_NOT_MORSE_OR_WORD})"
# runs of one code per symbol; like the blobs, a run starts only where its first code starts and
# is taken whole (possessive), so a client's long run is read once. Each entry: the run, its
# view, one code of it
_CODE_RUNS: tuple[tuple[re.Pattern[str], str, re.Pattern[str]], ...] = (
    (
        re.compile(r"(?<![01])(?:0b)?+[01]{8}(?:[\s,;/|-]{0,4}+(?:0b)?+[01]{8})*+"),
        "binary",
        re.compile(r"[01]{8}"),
    ),
    # up to four digits: the Latin, Greek, Cyrillic, Hebrew, Arabic and Indic letters, not the
    # five-digit CJK range, where a list of ZIP codes would read as Chinese
    (re.compile(r"(?<!\d)\d{2,4}(?!\d)(?:[\s,;./|-]{1,4}+\d{2,4}(?!\d))*+"), "decimal-codes", re.compile(r"\d+")),
    (
        re.compile(rf"(?<!{_NOT_MORSE_OR_WORD}){_MORSE_SYMBOL}(?:(?:[ \t]*+[/|\n]++[ \t]*+|[ \t]++){_MORSE_SYMBOL})*+"),
        "morse",
        re.compile(r"[.-]+"),
    ),
    (
        re.compile(rf"(?<![\w-])(?:{_NATO_WORD})(?!\w)(?:{_NATO_GAP}(?:{_NATO_WORD})(?!\w))*+", re.IGNORECASE),
        "nato",
        _NATO_CODE,
    ),
)
# scripts written without spaces between words (Chinese, Japanese and Korean: `_CJK_RUN`)
_UNSPACED_SCRIPTS = frozenset({"THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN"})
_MIN_CODES = 8  # codes in a run: shorter runs are numbers, dashes and names, not hidden commands
_SPELLED_VIEWS = ("morse", "nato")  # they spell words apart, upper case


def _one_code(code: str, view: str) -> str:
    """The printable character one code of `view` stands for, or "" (an unknown code, a control character)."""
    try:
        return printable_part(decode(code, view))
    except ViewDecodeError:
        return ""


def _code_text(run: str, view: str, code: re.Pattern[str]) -> str | None:
    """What a run of binary bytes, decimal character codes, Morse or NATO words says, when it reads
    as words (`_reads_as_words`); else None. Morse and NATO are split into words by `_words_of`
    and read code by code, in lower case (their codes carry no case). A binary or decimal run
    without the space's code is read word by word at its gaps (`_words_of`), then whole; each word
    is decoded whole (a character of several UTF-8 bytes), else code by code (`_code_word`). A run
    whose codes mostly rise or mostly fall is a sorted list of numbers, not text, and is not read
    as another script (postcodes 3585-3630 spell Thai consonants)."""
    codes = list(code.finditer(run))
    if view in _SPELLED_VIEWS:
        words = _nato_words(run) if view == "nato" else _words_of(run, codes, None)
        decoded = " ".join("".join(_one_code(symbol, view) for symbol in word) for word in words).lower()
        return decoded if _reads_as_words(decoded) else None
    # binary and decimal: a run with the space's code is one text; one without it, word by word at
    # its gaps, and whole when that does not read (a character's bytes broken over lines)
    values = [int(match.group(0), 2 if view == "binary" else 10) for match in codes]
    readings = [[[match.group(0) for match in codes]]]  # one word: the whole run
    if ord(" ") not in values:
        readings.insert(0, _words_of(run, codes, None))
    scripts = not _sorted_list(values)
    for words in readings:
        decoded = " ".join(_code_word(word, view) for word in words)
        if _reads_as_words(decoded, long_words=len(words) > 1, scripts=scripts):
            return decoded
    return None


def _sorted_list(values: list[int]) -> bool:
    """Do four in five steps between the codes go the same way (a sorted list of numbers)?"""
    steps = [after - before for before, after in pairwise(values) if after != before]
    rising = sum(step > 0 for step in steps)
    return len(steps) >= 4 and 5 * max(rising, len(steps) - rising) >= 4 * len(steps)


def _code_word(codes: list[str], view: str) -> str:
    """What one word of binary or decimal codes says: decoded whole (a character of several UTF-8
    bytes), else code by code, dropping the codes that stand for no printable character."""
    with suppress(ViewDecodeError):
        decoded = decode(" ".join(codes), view)
        if printable(decoded):
            return decoded
    return "".join(_one_code(symbol, view) for symbol in codes)


def _reads_as_words(decoded: str, *, long_words: bool = False, scripts: bool = True) -> bool:
    """Plain text with two words of the vocabulary (of four letters or more with `long_words`: a
    table of numbers split at its line breaks spells short words by chance), or, with `scripts`,
    words of another script (`_one_other_script`)."""
    if scripts and printable(decoded) and _one_other_script(decoded, unspaced=True):
        return True
    if not plain_text(decoded):
        return False
    hits = vocabulary_words(decoded, min_letters=4 if long_words else 3)
    return hits >= 2 or (scripts and _one_other_script(decoded))


def _one_other_script(text: str, *, unspaced: bool = False) -> bool:
    """At least `MIN_SCRIPT_LETTERS` letters, all of one script of `other_script_letter` (Cyrillic,
    Greek, Arabic, ...), words set apart by plain spaces: words of a language that the vocabulary,
    which is ASCII, cannot vouch for (a list of years decodes to N'Ko, and tab or form-feed codes
    are no word gaps). With `unspaced`, only a script written without spaces (Thai, Lao, Khmer,
    Burmese, Tibetan), which `plain_text`'s three words cannot find, with its vowel and tone signs:
    one mark for ten letters or more (consonants alone are a list of numbers)."""
    letters = [char for char in text if char.isalpha()]
    if len(letters) < MIN_SCRIPT_LETTERS or not all(map(other_script_letter, letters)):
        return False
    scripts = {script_of(char) for char in letters}
    if unspaced and (not scripts <= _UNSPACED_SCRIPTS or 10 * _marks(text) < len(letters)):
        return False
    return len(scripts) == 1 and not any(c.isspace() and c != " " for c in text)


def _marks(text: str) -> int:
    """Vowel and tone signs (Unicode marks) in `text`."""
    return sum(unicodedata.category(char).startswith("M") for char in text)


def _nato_words(run: str) -> list[list[str]]:
    """The NATO words of a run, split where one spelled word ends. A mark that can only end a word
    (" / ", a line break, two spaces, an em dash, ", break,", "(espacio)") does, where the run has
    one; else the mark written most often between two codes stands between letters ("Alfa-Lima",
    "delta, alfa", a space) and any other between words. Words in an aside are no codes."""
    codes = [match for match in _NATO_CODE_OR_ASIDE.finditer(run) if match.group(0)[0] not in "(["]
    return _words_of(run, codes, _NATO_WORD_END)


def _words_of(run: str, codes: list[re.Match[str]], word_end: re.Pattern[str] | None) -> list[list[str]]:
    """`codes` (matches in `run`) grouped into words. A gap between two codes that `word_end` finds
    ends a word, where the run has one; else the gap written most often stands between letters
    and any other between words ("112|114 || 97|108", one code per line and a blank line)."""
    if not codes:
        return []
    gaps = [run[before.end() : after.start()] for before, after in pairwise(codes)]
    ends = [word_end is not None and word_end.search(gap) is not None for gap in gaps]
    if not any(ends):
        kinds = [_gap_kind(gap) for gap in gaps]
        within = Counter(kinds).most_common(1)[0][0] if kinds else ""
        ends = [kind != within for kind in kinds]
    words: list[list[str]] = [[codes[0].group(0)]]
    for code, end in zip(codes[1:], ends, strict=True):
        if end:
            words.append([])
        words[-1].append(code.group(0))
    return words


def _gap_kind(gap: str) -> str:
    """A gap between two codes, for `_words_of`: its marks ("," "|" "||" "break"), or for white
    space alone one space, a wider gap, a line break or a blank line."""
    mark = " ".join(gap.lower().split())
    if mark:
        return mark
    lines = gap.count("\n")
    return "\n\n" if lines > 1 else "\n" if lines else "\t" if "\t" in gap else "  " if len(gap) > 1 else " "


def codes_decoded(text: str) -> str:
    """`text` with each run of binary bytes, decimal codes, Morse or NATO words that reads as text decoded."""
    for pattern, view, code in _CODE_RUNS:

        def replace(match: re.Match[str], view: str = view, code: re.Pattern[str] = code) -> str:
            run = match.group(0)
            if view == "morse":
                run = run.translate(MORSE_FOLD)
            many = sum(1 for _ in islice(code.finditer(run), _MIN_CODES)) == _MIN_CODES
            decoded = _code_text(run, view, code) if many else None
            return match.group(0) if decoded is None else decoded

        text = pattern.sub(replace, text)
    return text
