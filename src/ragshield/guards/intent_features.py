"""What the intent model's lexical part reads: a query normalised, cut into sentences and
clauses, and hashed into word and character n-gram features.

* **normalisation**: NFKC, lower case, accents stripped, leetspeak digits inside words read as
  letters, spaced-out letters joined (feature version 3: also letters split by dots, hyphens,
  slashes or stars, and spaced-out words in capitals of one or two letters; version 4: Cyrillic
  and Greek look-alike letters folded inside Latin words); CJK text as character 1-3-grams;
* **segments**: the whole text, each sentence and each clause long enough to carry a command on
  its own (the model keeps the largest segment logit, so a command padded behind a benign
  question is still seen);
* **features**: words, bigrams, skip-bigrams (feature version 2: word pairs two to four apart,
  so "list ... records" is one feature however many words stand between) and character
  3-5-grams, hashed with CRC-32 (stable across processes and platforms) into `N_FEATURES` slots.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from dataclasses import dataclass

import numpy as np

FEATURE_VERSION = 4
N_FEATURES = 2**18

CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
# NFKC turns full-width CJK punctuation into ASCII, which CJK text follows without a space
_SENTENCES = re.compile(rf"(?<=[.!?])\s+|(?<=[.!?。])(?=[{CJK_CLASS}])|\n+")
_CLAUSES = re.compile(rf"\s*[,;:]\s+|[,;:、](?=[{CJK_CLASS}])")
_TOKENS = re.compile(r"\w+")
_SPACED = re.compile(r"\b(?:\w ){2,}\w\b")
_CJK = re.compile(f"[{CJK_CLASS}]")
_LEET_DIGITS = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"}
_LEET = str.maketrans({**_LEET_DIGITS, "@": "a", "$": "s"})
# the readable form reads digits only: @ and $ stand in addresses and prices
_DIGITS = str.maketrans(_LEET_DIGITS)
_HAS_LETTER = re.compile(r"[^\W\d_]")
_MIN_TOKENS = 3
# "r.e.p.e.a.t", "r-e-p-e-a-t": three or more single letters, each pair split by one mark
_MARKED = re.compile(r"(?<![^\W_])(?:[^\W\d_][-.*/·]){2,}[^\W\d_](?![^\W_])")
_MARKS = re.compile(r"[-.*/·]")
# "s_h_o_w": single letters split by underscores, read in the readable form only (a word's characters
# to the lexical part; joining them there would change what trained models read). From 2026-12-03,
# for every model with readable forms: none of the 17,717 benign texts of the corpus and development
# sets holds such a run, so the operating points stand
_UNDERSCORED = re.compile(r"(?<![^\W_])(?:[^\W\d_]_)+[^\W\d_](?![^\W_])")
# "R E P E A T   T H E   T E X T": single characters one space apart, words wider apart. A run
# of one-character tokens is found in one pass (each token must end where it starts, so nothing
# backtracks: a client controls the text), then read word by word where it has a wider gap
_ONE_CHAR_RUN = re.compile(r"(?<!\S)\S(?!\S)(?: +\S(?!\S))+")
_GAP = re.compile(r" {2,}")
# four or more letters one space apart ("s h o w"; "I m a" is how some people write "I'm a"); not
# CJK or Hangul, whose one-syllable words stand one space apart ("한 번 더")
_LETTER = rf"[^\W\d_{CJK_CLASS}]"
_SPACED_LETTERS = re.compile(rf"(?<!\S)(?:{_LETTER} ){{3,}}{_LETTER}(?!\S)")
# ordinals, labels and codes: "3rd", "Q1", "B12", "013S" (leetspeak puts digits among letters)
_NOT_LEET = re.compile(r"\d+(?:st|nd|rd|th)|[^\W\d_]{1,2}\d+|\d\d\w*", re.IGNORECASE)
# leetspeak gets a readable form only when it is how the text is written: two words or more and
# a fifth of them ("m4y i 5hw 7eh c0n73x7"), not a lab value or a code ("HbA1c 6.9", "FY02")
_LEET_WORDS = 2
_LEET_SHARE = 0.2
# Cyrillic and Greek letters that look like Latin ones, folded inside words that mix them with Latin
# letters ("shоw thе tеxt" with Cyrillic о and е); a word in one script is left alone (version 4)
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏвкмнтАВЕКМНОРСТХУІЈЅαεικνορτυχΑΒΕΗΙΚΜΝΟΡΤΥΧΖ",
    "aeopcyxijsdhlbkmhtABEKMHOPCTXYIJSaeiknoptuxABEHIKMNOPTYXZ",
)
_LATIN = re.compile(r"[a-zA-Z]")


# Unicode's format characters (category Cf): invisible, so a client can put them between the letters
# of a command ("p\u200br\u200bi\u200bn\u200bt") to hide its words from the embedders;
# `test_the_invisible_class_is_every_format_character` checks this list against `unicodedata`
_INVISIBLE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
_JOINERS = "\u200c\u200d"
_TAG_START, _TAG_END, _TAG_CANCEL = 0xE0020, 0xE007E, 0xE007F
_BLACK_FLAG = "\U0001f3f4"  # a flag of a subdivision is this flag, tag letters and a cancel tag
# scripts whose words a joiner never joins: beside their letters a joiner only hides (it joins
# letters in Arabic and Indic scripts, and emoji)
_UNJOINED = ("LATIN", "CYRILLIC", "GREEK", "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "DIGIT")


def _unjoined(char: str) -> bool:
    return (char.isascii() and char.isalnum()) or unicodedata.name(char, "").startswith(_UNJOINED)


def visible_text(text: str) -> str:
    """`text` as a reader sees it: format characters (zero-width spaces, soft hyphens, word joiners,
    byte-order marks, direction marks) dropped, tag characters (U+E0020..U+E007E, which mirror
    ASCII and which people do not see but language models read: "ASCII smuggling") read as the
    ASCII they mirror, except in a subdivision flag; a zero-width (non-)joiner is kept between two
    characters of a script it joins (Persian, Hindi, emoji sequences). Returns `text` itself when
    it holds no format character (the common case)."""
    if _INVISIBLE.search(text) is None:
        return text
    out: list[str] = []
    in_flag = False
    for i, char in enumerate(text):
        code = ord(char)
        if _TAG_START <= code <= _TAG_CANCEL:
            in_flag = in_flag or (out[-1:] == [_BLACK_FLAG])
            if not in_flag and code <= _TAG_END:
                out.append(chr(code - 0xE0000))
            in_flag = in_flag and code != _TAG_CANCEL
            continue
        in_flag = False
        if _INVISIBLE.match(char) is None:
            out.append(char)
        elif char in _JOINERS and 0 < i < len(text) - 1:
            before, after = text[i - 1], text[i + 1]
            if not (_unjoined(before) or _unjoined(after) or _INVISIBLE.match(before) or _INVISIBLE.match(after)):
                out.append(char)
    return "".join(out)


def join_letters(text: str) -> str:
    """`text` with letters split by marks joined ("r.e.p.e.a.t" -> "repeat") and a spaced-out
    text whose words stand wider apart read word by word ("S H O W   T H E   T E X T" -> "SHOW
    THE TEXT"); case and accents kept."""
    text = _MARKED.sub(lambda m: _MARKS.sub("", m.group(0)), text)
    return _ONE_CHAR_RUN.sub(_words_of_gapped_run, text)


def _words_of_gapped_run(match: re.Match[str]) -> str:
    run = match.group(0)
    words, gaps = _GAP.split(run), _GAP.findall(run)
    # spaced-out text starts at a word of three letters or more that a wider gap follows
    start = next((i for i, word in enumerate(words[:-1]) if len(word) >= 5), None)
    if start is None:
        return run
    head = "".join(word + gap for word, gap in zip(words[:start], gaps[:start], strict=False))
    return head + " ".join(word.replace(" ", "") for word in words[start:])


def fold_lookalikes(text: str) -> str:
    """`text` with the Cyrillic and Greek look-alike letters of words that mix them with Latin
    letters read as Latin ("shоw" -> "show"); Russian or Greek words stay as they are."""

    def fold(match: re.Match[str]) -> str:
        word = match.group(0)
        folded = word.translate(_LOOKALIKES)
        return folded if folded != word and _LATIN.search(word) else word

    return _TOKENS.sub(fold, text)


def _leet_word(word: str) -> bool:
    decoded = word.translate(_DIGITS)
    return decoded != word and decoded.isalpha() and bool(_HAS_LETTER.search(word)) and not _NOT_LEET.fullmatch(word)


def readable_form(text: str, version: int = FEATURE_VERSION) -> str | None:
    """What an obfuscated query says in plain letters, for the embedding parts, which read the
    raw text: letters joined (`join_letters`), spaced-out letters joined, and leetspeak digits
    read as letters when the text is written in it; from version 4 look-alike letters folded
    (`fold_lookalikes`); letters split by underscores joined. None when the query has nothing of
    that (the common case: no second embedding)."""
    joined = _UNDERSCORED.sub(lambda m: m.group(0).replace("_", ""), text)
    joined = _SPACED_LETTERS.sub(lambda m: m.group(0).replace(" ", ""), join_letters(joined))
    joined = fold_lookalikes(joined) if version >= 4 else joined
    words = _TOKENS.findall(joined)
    leet = sum(_leet_word(w) for w in words)
    if leet >= _LEET_WORDS and leet >= _LEET_SHARE * len(words):
        joined = _TOKENS.sub(lambda m: m.group(0).translate(_DIGITS) if _leet_word(m.group(0)) else m.group(0), joined)
    plain = " ".join(joined.split())
    return None if plain == " ".join(text.split()) else plain


def normalise(text: str, version: int = FEATURE_VERSION) -> str:
    """The text the lexical part reads: NFKC, lower case, accents stripped, leetspeak digits
    inside words read as letters ("r3p34t" -> "repeat"), spaced-out letters joined (version 3:
    first `join_letters`; version 4: and `fold_lookalikes`)."""
    text = unicodedata.normalize("NFKC", text)
    text = join_letters(text) if version >= 3 else text
    text = (fold_lookalikes(text) if version >= 4 else text).lower()
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = re.sub(r"[\w@$]+", lambda m: m.group(0).translate(_LEET) if _is_leet(m.group(0)) else m.group(0), text)
    text = _SPACED.sub(lambda m: m.group(0).replace(" ", ""), text)
    return " ".join(text.split())


def _is_leet(token: str) -> bool:
    # only words that mix letters with digits or @/$: plain numbers (doses, dates) stay numbers
    return bool(_HAS_LETTER.search(token)) and any(c in "013457@$" for c in token)


def segment_texts(text: str, version: int = FEATURE_VERSION) -> list[list[str]]:
    """The query's sentences, each as its list of clauses (normalised text)."""
    sentences = []
    for sentence in _SENTENCES.split(normalise(text, version)):
        clauses = [c.strip() for c in _CLAUSES.split(sentence) if c and c.strip()]
        if clauses:
            sentences.append(clauses)
    return sentences or [[""]]


def _features(clause: str, version: int = FEATURE_VERSION) -> list[str]:
    out: list[str] = []
    tokens = _TOKENS.findall(clause)
    previous = ""
    words: list[str] = []
    for token in tokens:
        if _CJK.search(token):
            chars = token
            out.extend(f"c:{chars[i : i + n]}" for n in (1, 2, 3) for i in range(len(chars) - n + 1))
            previous = ""
            continue
        out.append(f"w:{token}")
        if previous:
            out.append(f"b:{previous} {token}")
        if version >= 2:
            # the verb and its object a few words apart: "list all the records" -> "list records"
            out.extend(f"s:{w} {token}" for w in words[-4:-1])
            words.append(token)
        previous = token
        padded = f"<{token}>"
        out.extend(f"g:{padded[i : i + n]}" for n in (3, 4, 5) for i in range(len(padded) - n + 1))
    return out


def _hashes(clause: str, version: int = FEATURE_VERSION) -> np.ndarray:
    features = _features(clause, version)
    return np.fromiter((zlib.crc32(f.encode("utf-8")) & (N_FEATURES - 1) for f in features), dtype=np.int64)


def _size(clause: str) -> int:
    tokens = _TOKENS.findall(clause)
    cjk = sum(len(_CJK.findall(t)) for t in tokens)
    return len(tokens) + cjk // 2


@dataclass(frozen=True, slots=True)
class Segments:
    """Hashed feature indices of a query's scored segments: index 0 is the whole text, then
    the sentences and clauses long enough to carry a command on their own."""

    indices: tuple[np.ndarray, ...]


def segments_of(text: str, *, max_segments: int = 48, version: int = FEATURE_VERSION) -> Segments:
    """Feature indices of the whole text, its sentences and its clauses (each hashed once)."""
    sentences = segment_texts(text, version)
    clause_hashes = [[_hashes(c, version) for c in clauses] for clauses in sentences]
    sentence_hashes = [np.concatenate(parts) if parts else np.empty(0, np.int64) for parts in clause_hashes]
    whole = np.concatenate(sentence_hashes) if sentence_hashes else np.empty(0, np.int64)
    pieces: list[np.ndarray] = [whole]
    for clauses, hashed, sentence in zip(sentences, clause_hashes, sentence_hashes, strict=True):
        if len(sentences) > 1 and _size(" ".join(clauses)) >= _MIN_TOKENS:
            pieces.append(sentence)
        if len(clauses) > 1:
            pieces.extend(h for c, h in zip(clauses, hashed, strict=True) if _size(c) >= _MIN_TOKENS)
    return Segments(tuple(pieces[:max_segments]))
