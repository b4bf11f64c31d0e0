"""`SpelledView`: NATO phonetic words, digit words and Morse code read back as characters.

A copy spelled out word by word (`Alfa Bravo`, `one-two`, `.- -...`) folds to nothing useful in the
text view; this view reads each such token back as the character it stands for, keeps other words
as they are (digits written as words inside plain text), and feeds the folded result to one track.
It follows the answer only from its first spelled token on (plus the text just before it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragshield.encodings.spelled import MORSE, MORSE_FOLD, MORSE_MARK_CLASS, MORSE_MARKS, NATO_READ
from ragshield.guards.release.fold import fold_text_at
from ragshield.guards.release.views import HoldingView

# the NATO and digit words and the Morse codes of `ragshield.encodings` (one table for writing
# and reading them), lower case: the view folds case anyway
_SPELLED = {word.lower().replace("-", ""): symbol.lower() for word, symbol in NATO_READ.items()}
_MORSE = {code: char.lower() for char, code in MORSE.items()}
# `X-ray` is one token (ICAO spells it with a hyphen, which writers also set as U+2010, U+2011 or an
# en dash): split there it was read as the words `x` and `ray`, and a NATO copy broke at every x
# (found by a long random sweep, session 34). It is read as `x` only after a spelled word or a word
# parting two (`pending`): in prose ("an X-ray of the knee") it is the word it is
_HYPHENS = "-\u2010\u2011\u2013"
_HYPHENED = {word.lower(): symbol.lower() for word, symbol in NATO_READ.items() if "-" in word}
_TO_HYPHEN = str.maketrans(dict.fromkeys(_HYPHENS, "-"))
_X_RAY = rf"(?<![^\W\d_])(?i:x[{_HYPHENS}]ray)"
_TOKEN = re.compile(rf"{_X_RAY}|[^\W\d_]+|\d+|{MORSE_MARK_CLASS}+")
_RECENT_CHARS = 160
_SPELLED_WORDS = frozenset(_SPELLED)
_LATIN_WORD = re.compile(r"[a-z]+")
_MORSE_HINT = re.compile(rf"(?:^|\s){MORSE_MARK_CLASS}{{1,6}}(?=\s|$)")
_LONGEST_SPELLED = 24
# the token `_TOKEN` reads last; Morse marks with the word before them (`FOUR-`): held alone, a
# dash began the next feed and was read as a standalone Morse `t`; an `X-ray` whole or begun (`X-r`),
# with the marks after it: cut inside, `X-` was fed and `ray` read later as a word of its own
_LAST_RUN = re.compile(
    rf"(?:(?<![^\W\d_])(?i:x[{_HYPHENS}](?:r(?:a(?:y{MORSE_MARK_CLASS}*)?)?)?)"
    rf"|(?:[^\W\d_]+|\d+){MORSE_MARK_CLASS}+|[^\W\d_]+|\d+|{MORSE_MARK_CLASS}+)\Z"
)
_SPELLED_BYTES = frozenset(word.encode("ascii") for word in _SPELLED)
_LETTER_RUNS = bytes(code if 97 <= code <= 122 else 32 for code in range(256))  # a-z kept, the rest a space


def _spelled_hint(text: str) -> bool:
    """May `text` hold a spelled token: a NATO or digit word, or Morse between spaces?"""
    if text.isascii():  # at C speed: the runs of letters as bytes; Morse needs `.`, `-` or `_`
        words = text.encode("ascii").lower().translate(_LETTER_RUNS).split()
        return not _SPELLED_BYTES.isdisjoint(words) or (
            ("." in text or "-" in text or "_" in text) and _MORSE_HINT.search(text) is not None
        )
    return not _SPELLED_WORDS.isdisjoint(_LATIN_WORD.findall(text.lower())) or _MORSE_HINT.search(text) is not None


def _standalone(text: str, start: int, end: int) -> bool:
    """Is text[start:end] bounded by whitespace, `/` or the ends of the text?"""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return (before.isspace() or before == "/") and (after.isspace() or after == "/")


@dataclass
class SpelledView(HoldingView):
    """The answer with NATO words, digit words and Morse code read back as characters, other words
    kept (digits written as words inside plain text), folded, for one track."""

    _active: bool = False  # a spelled token was seen: from there on this view follows the answer
    _recent: str = ""  # the text before that, so a run can start before the first spelled token
    _recent_offset: int = 0
    _streak: int = 0  # NATO letter words read so far in a row (one parting word between words allowed)
    _after_spelled: bool = False  # the last token read was a NATO or digit word
    _pending: tuple[str, int] | None = None  # a word or dash after one, kept until the next token shows what it is
    _separator: str = ""  # the word read as text right after a lone spelled word: it may part every pair

    def _cut(self, text: str) -> int:
        # hold the last, maybe unfinished whitespace-separated token; `str.split` splits where `\s`
        # matches, at C speed from the end. A longer one (`THREE-ZERO-FIVE-...`, digit words
        # joined by hyphens) is held from the start of its last run of letters, digits or Morse
        # marks (with the word before them): cut anywhere else, a word was read as two (`SEV` and
        # `EN`) and the copy broke there
        if not text or text[-1].isspace():
            return len(text)
        token = text.rsplit(None, 1)[-1]
        if len(token) < _LONGEST_SPELLED:
            return len(text) - len(token)
        floor = len(token) - _LONGEST_SPELLED
        run = _LAST_RUN.search(token, floor)  # a run found at `floor` itself may go on before it: too long
        return len(text) - len(run.group()) if run is not None and run.start() > floor else len(text)

    def _feed(self, text: str, start: int) -> None:
        if not text:
            return
        if not self._active:
            if not _spelled_hint(text):
                self._recent, self._recent_offset = (self._recent + text)[-_RECENT_CHARS:], start + len(text)
                self._recent_offset -= len(self._recent)
                return
            self._active = True
            text, start = self._recent + text, start - len(self._recent)
            self._recent = ""
        chars: list[str] = []
        owners: list[int] = []
        streak, after_spelled, pending, separator = self._streak, self._after_spelled, self._pending, self._separator
        for match in _TOKEN.finditer(text):
            token = match.group()
            morse = token[0] in MORSE_MARKS
            if morse:
                # Morse stands alone between spaces or slashes; a hyphen inside `two-five` is not `t`
                alone = _standalone(text, match.start(), match.end())
                char = _MORSE.get(token.translate(MORSE_FOLD)) if alone else None
                if char is None:
                    continue  # unknown Morse or punctuation: nothing
            elif len(token) == 5 and token[1] in _HYPHENS:  # `X-ray` (`_TOKEN`'s only such token)
                char = _HYPHENED.get(token.lower().translate(_TO_HYPHEN)) if after_spelled or pending else None
            else:
                char = _SPELLED.get(token.lower())
            spelled = not morse and char is not None
            if pending is not None and pending[0] in ("x", "X") and token.lower() == "ray":
                # `X ray`, the space set for ICAO's hyphen, where a word parting two NATO words would be
                # (`pending`): the x; in prose ("an X ray") `X` is never pending, so it stays two words
                chars.append("x")
                owners.append(pending[1])
                pending, after_spelled, streak = None, True, streak + 1
                continue
            if pending is not None and not spelled and token.lower() == pending[0].lower():
                continue  # the parting word again, across a word gap (`Sierra stop // stop Tango`)
            if pending is not None and token in ("x", "X") and pending[0] not in ("x", "X"):
                # a parting word before `X ray` (`Bravo stop X ray`): the x may follow, so it waits in its place
                pending = (token, start + match.start())
                continue
            if pending is not None:
                # one word ("break", "space") or a lone dash between two spelled words of a copy
                # spelled in NATO words parts them: read as nothing, so the letters stay one run;
                # followed by anything else it is the text's own ("... zero zero Smith Street")
                if not spelled:
                    chars.append(pending[0])
                    owners.extend([pending[1]] * len(pending[0]))
                pending = None
            elif (
                after_spelled
                and (streak >= 2 or token.lower() == separator)
                and ((not morse and char is None) or (morse and len(token) == 1))
            ):
                # after two NATO words, or the same word again after one (`Alfa stop Bravo stop ...`:
                # a word between every pair never lets two stand together)
                pending, after_spelled = (token, start + match.start()), False
                continue
            if not spelled:
                # a word right after NATO letters (not digit words alone: "one and two and three" is prose)
                separator = token.lower() if after_spelled and streak >= 1 else ""
                streak = 0
            elif char is not None and char.isalpha():
                streak += 1  # NATO letter words make the streak; digit words keep it
            after_spelled = spelled
            chars.append(token if char is None else char)
            owners.extend([start + match.start()] * len(chars[-1]))
        self._streak, self._after_spelled, self._pending, self._separator = streak, after_spelled, pending, separator
        self.track.feed(*fold_text_at("".join(chars), owners))
