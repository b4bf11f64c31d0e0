"""Spelled-out views: characters written as words, Morse, markup or one per line.

`html-tags`, `numbered-lines` and `one-per-line` decode exactly on any text. `nato` and `morse`
spell only letters and digits (Morse also its ITU punctuation), so they decode to
`spelled_form(text, view)`: accents dropped, upper case, one space between words.
`digits-as-words` decodes exactly on text whose digit runs stand apart from letters and
which has no digit word of its own (`one`, `two`, ...): "Room 12, bed 3" round-trips, "2nd" does not.
"""

from __future__ import annotations

import random
import re
import string
import unicodedata
from collections.abc import Callable

from ragshield.errors import ConfigError

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# One word per letter, ICAO spelling.
_NATO_WORDS = (  # noqa: SIM905 - one string reads better than 26 list lines
    "Alfa Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliett Kilo Lima Mike November Oscar Papa "
    "Quebec Romeo Sierra Tango Uniform Victor Whiskey X-ray Yankee Zulu"
).split()
NATO = dict(zip(string.ascii_uppercase, _NATO_WORDS, strict=True))
NATO_SPELL = NATO | {str(digit): word.capitalize() for digit, word in enumerate(DIGIT_WORDS)}
# Every word a reader accepts (upper case), to its symbol: ICAO's "Alfa"/"Juliett", the common
# "Alpha"/"Juliet"/"Xray" and the digit words.
NATO_READ = (
    {word.upper(): letter for letter, word in NATO.items()}
    | {
        "ALPHA": "A",
        "JULIET": "J",
        "XRAY": "X",
        "WHISKY": "W",
    }
    | {word.upper(): str(digit) for digit, word in enumerate(DIGIT_WORDS)}
    | {"NINER": "9"}
)
NATO_WORD_GAPS = (" / ", " | ", "\n", " // ")
_MORSE_CODES = (  # noqa: SIM905
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --.. "
    "----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----."
).split()
# Letters, digits and the ITU punctuation (ITU-R M.1677-1).
MORSE = dict(zip(string.ascii_uppercase + string.digits, _MORSE_CODES, strict=True)) | {
    ".": ".-.-.-", ",": "--..--", "?": "..--..", "'": ".----.", "!": "-.-.--", "/": "-..-.", "(": "-.--.",
    ")": "-.--.-", "&": ".-...", ":": "---...", ";": "-.-.-.", "=": "-...-", "+": ".-.-.", "-": "-....-",
    "_": "..--.-", '"': ".-..-.", "$": "...-..-", "@": ".--.-.",
}  # fmt: skip
_MORSE_READ = {code: char for char, code in MORSE.items()}
# dots and dashes as other fonts and writers set them, folded to `.` and `-`
_MORSE_VARIANTS = {"·": ".", "•": ".", "−": "-", "–": "-", "—": "-", "_": "-"}
MORSE_FOLD = str.maketrans(_MORSE_VARIANTS)
MORSE_MARKS = ".-" + "".join(_MORSE_VARIANTS)  # every character a Morse code may be written with
# a regex class of them, for readers that find Morse in text
MORSE_MARK_CLASS = "[" + re.escape(MORSE_MARKS) + "]"
TAGS = ("b", "i", "u", "em", "strong", "span", 'span class="c"', "mark", "code")
NUMBER_LAYOUTS = ("{}. ", "{}) ", "{}: ", "{} - ")
_TAG = re.compile(r"<([a-z]+)(?: [^>]*)?>(.)</\1>", re.DOTALL)
_DIGIT_RUN = re.compile(r"\b(?:" + "|".join(DIGIT_WORDS) + r")(?:-(?:" + "|".join(DIGIT_WORDS) + r"))*\b", re.I)


def _ascii_words(text: str, alphabet: dict[str, str]) -> list[str]:
    """The words of `text` with accents dropped, upper-cased, keeping only symbols `alphabet` spells."""
    folded = "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))
    words = ("".join(char for char in word.upper() if char in alphabet) for word in folded.split())
    return [word for word in words if word]


def spelled_form(text: str, view: str) -> str:
    """What `decode(encode(text, view), view)` returns for `nato` and `morse` (they spell only some symbols).

    Raises:
        ConfigError: `view` is not `nato` or `morse`.
    """
    if view not in ("nato", "morse"):
        raise ConfigError(f"spelled_form is defined for the nato and morse views, not {view!r}")
    return " ".join(_ascii_words(text, NATO_SPELL if view == "nato" else MORSE))


def digits_as_words(text: str, rng: random.Random) -> str:
    """Every digit as its English word; a run of digits hyphenated (`12` -> `one-two`); letters kept."""
    style = rng.choice((str.lower, str.capitalize, str.upper))

    def run(match: re.Match[str]) -> str:
        return "-".join(style(DIGIT_WORDS[int(digit)]) for digit in match[0])

    return re.sub(r"[0-9]+", run, text)


def _undigit_words(text: str) -> str:
    def run(match: re.Match[str]) -> str:
        return "".join(str(DIGIT_WORDS.index(word.lower())) for word in match[0].split("-"))

    return _DIGIT_RUN.sub(run, text)


def html_tags(text: str, rng: random.Random) -> str:
    """Every letter and digit wrapped in a random tag (`<b>J</b><span>o</span>`); other text HTML-escaped."""
    pieces = []
    for char in text:
        if char.isalnum():
            tag = rng.choice(TAGS)
            pieces.append(f"<{tag}>{char}</{tag.split()[0]}>")
        else:
            pieces.append(char.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    return "".join(pieces)


def _untag(text: str) -> str:
    return _TAG.sub(lambda match: match[2], text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def numbered_lines(text: str, rng: random.Random) -> str:
    """One character per line, numbered from 1 (`1. J`, `2) J`, `1: J` or `1 - J`)."""
    layout = rng.choice(NUMBER_LAYOUTS)
    return "\n".join(layout.format(number) + char for number, char in enumerate(text, start=1))


def _unnumber(text: str) -> str:
    """Read `<n><mark> <char>\\n` lines in order; the character may itself be a newline."""
    chars: list[str] = []
    position = 0
    prefix = re.compile(r"(\d+)(?:\. |\) |: | - )")
    while position < len(text):
        match = prefix.match(text, position)
        if match is None or int(match[1]) != len(chars) + 1:
            raise ConfigError(f"line {len(chars) + 1} of the numbered text does not start with its number")
        chars.append(text[match.end()])
        position = match.end() + 2  # the character and its line break
    return "".join(chars)


def one_per_line(text: str, rng: random.Random) -> str:
    """One character per line."""
    del rng
    return "\n".join(text)


def nato(text: str, rng: random.Random) -> str:
    """Letters as NATO phonetic words and digits as digit words (`Juliett Oscar`); words split by a random mark.

    Other symbols are dropped and accents removed (`decode` returns `spelled_form(text, "nato")`).
    """
    gap = rng.choice(NATO_WORD_GAPS)
    return gap.join(" ".join(NATO_SPELL[char] for char in word) for word in _ascii_words(text, NATO_SPELL))


def _unnato(text: str) -> str:
    words = re.split(r"\s*(?:/+|\|)\s*|\n", text)
    letters = ("".join(NATO_READ[token.upper().replace("-", "")] for token in word.split()) for word in words)
    return " ".join(word for word in letters if word)


def morse(text: str, rng: random.Random) -> str:
    """Letters, digits and ITU punctuation in Morse, one space between symbols and ` / ` between words."""
    del rng
    return " / ".join(" ".join(MORSE[char] for char in word) for word in _ascii_words(text, MORSE))


def _unmorse(text: str) -> str:
    words = text.split(" / ")
    return " ".join("".join(_MORSE_READ[code] for code in word.split()) for word in words if word.strip())


ENCODERS: dict[str, Callable[[str, random.Random], str]] = {
    "digits-as-words": digits_as_words,
    "html-tags": html_tags,
    "numbered-lines": numbered_lines,
    "one-per-line": one_per_line,
    "nato": nato,
    "morse": morse,
}
DECODERS: dict[str, Callable[[str], str]] = {
    "digits-as-words": _undigit_words,
    "html-tags": _untag,
    "numbered-lines": _unnumber,
    "one-per-line": lambda text: text[::2],
    "nato": _unnato,
    "morse": _unmorse,
}
