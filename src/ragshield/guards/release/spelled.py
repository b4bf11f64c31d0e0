"""`SpelledView`: NATO phonetic words, digit words and Morse code read back as characters.

A copy spelled out word by word (`Alfa Bravo`, `one-two`, `.- -...`) folds to nothing useful in the
text view; this view reads each such token back as the character it stands for, keeps other words
as they are (digits written as words inside plain text), and feeds the folded result to one track.
It follows the answer only from its first spelled token on (plus the text just before it).

A number between NATO words is read two ways, by two instances, each for its own track: as the
number, read as a digit word is (`Bravo 2 Charlie 3 Delta 4`, a postcode B2C 3D4, whose digits
count), and as a word that parts the letters as any parting word (`Alfa 1 Bravo 2 Charlie 3 ...`, a
counter; `Alfa Bravo 7 Charlie Delta 3`, noise), so a copy is read whole by whichever keeps it whole;
no one rule tells the record's digits from a counter.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ragshield.encodings.spelled import MORSE, MORSE_FOLD, MORSE_MARK_CLASS, MORSE_MARKS, NATO_READ
from ragshield.guards.release.fold import fold_text_at
from ragshield.guards.release.views import HoldingView

# the NATO and digit words and the Morse codes of `ragshield.encodings` (one table for writing
# and reading them), lower case: the view folds case anyway
_SPELLED = {word.lower().replace("-", ""): symbol.lower() for word, symbol in NATO_READ.items()}
_MORSE = {code: char.lower() for char, code in MORSE.items()}
# `X-ray` is one token (ICAO spells it with a hyphen, which writers also set as U+2010, U+2011 or an
# en dash): split there it was read as the words `x` and `ray`, and a NATO copy broke at every x
# (found by a long random sweep, session 34); `X ray` with a space is made one such token too. It is
# read as `x` after a spelled word, a Morse letter or a word parting two, or before a NATO letter
# (a copy's first letter, `X-ray Alfa Victor`); in prose ("an X-ray of the knee") it is the word it is
_HYPHENS = "-\u2010\u2011\u2013"
_X_RAY = rf"(?<![^\W\d_])(?i:x[{_HYPHENS}]ray)"
_TOKEN = re.compile(rf"{_X_RAY}|[^\W\d_]+|\d+|{MORSE_MARK_CLASS}+")
_WORD, _MORSE_CODE, _XRAY = 0, 1, 2  # what a token is: a word or number, a Morse code, an X-ray
_PROSE, _SPELLED_WORD, _MORSE_LETTER, _GAP = 0, 1, 2, 3  # what the token read last was
# the parting words remembered: two or three taking turns (`Alfa stop Bravo break Charlie stop ...`)
# part from their second round; more would read ever more prose between NATO words as nothing
_PARTING_WORDS = 3
# different parting words in one gap (`stop // break`), at most; a word's repeats are free (`stop stop
# stop stop`: counted, the fourth was read as a word and the copy broke at every gap)
_PENDING_WORDS = 3
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


def _remember(parting: tuple[str, ...], word: str) -> tuple[str, ...]:
    """`parting` with `word` as its newest, the oldest dropped beyond `_PARTING_WORDS`."""
    if parting and parting[-1] == word:
        return parting
    return (*(seen for seen in parting if seen != word), word)[-_PARTING_WORDS:]


@dataclass
class SpelledView(HoldingView):
    """The answer with NATO words, digit words and Morse code read back as characters, other words
    kept (digits written as words inside plain text), folded, for one track. `numbers_part`: a
    number (digits to `str.isdigit`, `²` and `①` too) parts NATO words as a parting word does; else
    it is read as the number, as a digit word."""

    numbers_part: bool = False

    _active: bool = False  # a spelled token was seen: from there on this view follows the answer
    _recent: str = ""  # the text before that, so a run can start before the first spelled token
    _recent_offset: int = 0
    _streak: int = 0  # NATO letter words read so far in a row (one parting word between words allowed)
    _last: int = _PROSE  # what the last token read was (`_SPELLED_WORD`: a NATO or digit word)
    # a word or dash after a spelled word (and the copy's parting words after it), kept until the
    # next token shows what it is
    _pending: list[tuple[str, int]] = field(default_factory=list)
    _pending_words: tuple[str, ...] = ()  # the different words among them
    # the words read as text right after a lone NATO word, or read as nothing: any of them parts the next pairs
    _parting: tuple[str, ...] = ()
    _held_x: tuple[str, int] | None = None  # a lone `x`, kept until the next token shows whether `ray` follows
    _maybe_x: tuple[int, int] | None = None  # an X-ray after prose (offsets of x and ray): x if a NATO letter follows

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

    def flush(self) -> None:
        # the held tokens too: at the end of the answer nothing follows, so they are the text's own
        carry, self._carry = self._carry, ""
        self._feed(carry, self._carry_offset, final=True)

    def _tokens(self, text: str, start: int, final: bool) -> Iterator[tuple[str, int, str | None, int, int]]:
        """The tokens of `text`: (token, offset, the character it reads as or None, kind, offset of
        `ray` in an X-ray); a lone `x` with `ray` after it (also in the next feed) is one X-ray."""
        held, self._held_x = self._held_x, None
        for match in _TOKEN.finditer(text):
            token, at = match.group(), start + match.start()
            if held is not None:
                if token.lower() == "ray":
                    yield f"{held[0]} {token}", held[1], "x", _XRAY, at
                    held = None
                    continue
                yield held[0], held[1], None, _WORD, held[1]
                held = None
            if token[0] in MORSE_MARKS:
                # Morse stands alone between spaces or slashes; a hyphen inside `two-five` is not `t`
                alone = _standalone(text, match.start(), match.end())
                char = _MORSE.get(token.translate(MORSE_FOLD)) if alone else None
                if char is not None:  # unknown Morse or punctuation: nothing
                    yield token, at, char, _MORSE_CODE, at
            elif len(token) == 5 and token[1] in _HYPHENS:  # `X-ray` (`_TOKEN`'s only such token)
                yield token, at, "x", _XRAY, at + 2
            elif token in ("x", "X"):
                held = (token, at)
            # a number is a token of digits to `str.isdigit` (nothing here needs its value): `\d`, and
            # superscript and circled digits (a counter `Alfa ¹ Bravo ² ...`)
            elif token.isdigit() and not self.numbers_part:
                yield token, at, token, _WORD, at  # a number read as the number, as a digit word is
            else:
                yield token, at, _SPELLED.get(token.lower()), _WORD, at
        if held is not None and final:
            yield held[0], held[1], None, _WORD, held[1]
        elif held is not None:
            self._held_x = held

    def _feed(self, text: str, start: int, final: bool = False) -> None:
        if not text and not final:
            return
        if not self._active:
            # both readings start at the first spelled token: the one that parts numbers once started
            # at the first number (and the 160 characters before it), and a copy begun further back
            # was cut in two, one half in each reading, each within the allowance (review 36)
            if not _spelled_hint(text):
                self._recent, self._recent_offset = (self._recent + text)[-_RECENT_CHARS:], start + len(text)
                self._recent_offset -= len(self._recent)
                return
            self._active = True
            text, start = self._recent + text, start - len(self._recent)
            self._recent = ""
        chars: list[str] = []
        owners: list[int] = []
        streak, last, pending, parting = self._streak, self._last, self._pending, self._parting
        pending_words = self._pending_words
        maybe_x = self._maybe_x
        for token, at, char, kind, ray_at in self._tokens(text, start, final):
            if maybe_x is not None:
                # an X-ray after prose is a copy's first x when a NATO letter follows (`X-ray Alfa ...`)
                if kind == _WORD and char is not None and char.isalpha():
                    chars.append("x")
                    owners.append(maybe_x[0])
                    streak, last = 1, _SPELLED_WORD
                else:
                    chars.append("xray")
                    owners.extend((maybe_x[0], maybe_x[1], maybe_x[1], maybe_x[1]))
                maybe_x = None
            if kind == _XRAY and last == _PROSE and not pending:
                maybe_x = (at, ray_at)
                continue
            morse = kind == _MORSE_CODE
            spelled = not morse and char is not None
            # a word or number, or a lone dash, may part two NATO words
            may_part = (not morse and char is None) or (morse and len(token) == 1)
            low = token.lower()
            number = low.isdigit()  # a word here only where numbers part (else it is `spelled`)
            again = low in pending_words or (
                bool(pending) and (number or (len(pending_words) < _PENDING_WORDS and low in parting))
            )
            if again and may_part:
                # the parting word again, or another of the copy's, across a word gap (`Sierra stop // stop
                # Tango`, `Delta stop / break Echo`, `Echo 7 | 8 Foxtrot`)
                pending.append((low, at))
                pending_words += () if number or low in pending_words else (low,)
                continue
            if pending:
                # one word ("break", "space") or a lone dash between two spelled words of a copy
                # spelled in NATO words parts them: read as nothing, so the letters stay one run;
                # followed by anything else it is the text's own ("... zero zero Smith Street")
                if spelled:
                    for word in pending_words:
                        parting = _remember(parting, word)
                else:
                    for word, word_at in pending:
                        chars.append(word)
                        owners.extend([word_at] * len(word))
                pending, pending_words = [], ()
            elif may_part and last == _SPELLED_WORD and (number or streak >= 2 or low in parting):
                # a number, any word after two NATO words, or a word seen between lone ones again
                # (`Alfa stop Bravo stop ...`, `Alfa stop Bravo break Charlie stop ...`: words between
                # every pair never let two stand together)
                pending, pending_words, last = [(low, at)], () if number else (low,), _PROSE
                continue
            if not spelled:
                # a word right after NATO letters (not digit words alone: "one and two and three" is prose)
                if last == _SPELLED_WORD and streak >= 1:
                    parting, last = _remember(parting, low), _GAP
                elif last == _GAP and parting and low == parting[-1]:
                    pass  # the same word again right after (`Alfa stop stop Bravo`): still the gap
                else:
                    parting, last = (), _MORSE_LETTER if morse else _PROSE
                streak = 0
            elif char is not None:
                if char.isalpha():
                    streak += 1  # NATO letter words make the streak; digit words keep it
                last = _SPELLED_WORD
            if kind == _XRAY:  # the x, with `ray` after a space owned by `ray`
                chars.append("x")
                owners.append(at)
            else:
                chars.append(token if char is None else char)
                owners.extend([at] * len(chars[-1]))
        if final:
            if maybe_x is not None:
                chars.append("xray")
                owners.extend((maybe_x[0], maybe_x[1], maybe_x[1], maybe_x[1]))
            for word, word_at in pending:
                chars.append(word)
                owners.extend([word_at] * len(word))
            maybe_x, pending, pending_words = None, [], ()
        self._streak, self._last, self._pending, self._parting = streak, last, pending, parting
        self._pending_words = pending_words
        self._maybe_x = maybe_x
        self.track.feed(*fold_text_at("".join(chars), owners))
