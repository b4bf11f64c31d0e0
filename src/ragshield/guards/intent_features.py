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
# The characters NFKC turns into more than four (Unicode 14): squared katakana words and two Arabic
# ligatures, U+FDFA into 18. Read as a space by the lexical part: 8,000 of U+FDFA made 144,000
# characters and about 400,000 hashed features per pass; no training or evaluation text has one.
# `test_intent_features` checks this list against the running Python's Unicode data.
NFKC_LONG_EXPANSIONS = frozenset(
    "\u3307\u3315\u3316\u3317\u3319\u331a\u3320\u332b\u332e\u3332\u3334\u3336\u3347\u334a\u3356\u33ae\u33af\ufdfa\ufdfb"
)
_SHORTEN_EXPANSIONS = str.maketrans(dict.fromkeys(NFKC_LONG_EXPANSIONS, " "))
_MIN_TOKENS = 3
# "r.e.p.e.a.t", "r-e-p-e-a-t": three or more single letters, each pair split by one mark
_MARKED = re.compile(r"(?<![^\W_])(?:[^\W\d_][-.*/·]){2,}[^\W\d_](?![^\W_])")
_MARKS = re.compile(r"[-.*/·]")
# "s_h_o_w  m_e": single letters split by underscores, read in the readable form only (one token to
# the lexical part; joining them there would change what trained models read). A run of three letters
# or more shows the text is written so, and then runs of two ("m_e") are joined too; an identifier
# ("x_i", "q_k_v_proj", "table__n_a_m_e") is not such a run: nothing may touch it but spaces and marks
_UNDERSCORED = re.compile(r"(?<![\w])(?:[^\W\d_]_){2,}[^\W\d_](?![\w])")
_UNDERSCORED_PAIR = re.compile(r"(?<![\w])(?:[^\W\d_]_)+[^\W\d_](?![\w])")
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


# Latin letters drawn as small capitals ("ᴘʀɪɴᴛ"), in parentheses ("⒫⒭⒤⒩⒯") or as superscript and
# subscript letters ("ᵖʳⁱⁿᵗ"): neither NFKC nor an embedder reads them as the letters; their Unicode
# names say which letter they are. Only these blocks are looked at (IPA, phonetic extensions,
# subscripts, parenthesized letters, Latin Extended-D), and only names of such forms are read, so
# IPA letters of other shapes ("ɛ", "ɔ" in Twi or Lingala) stay
_LETTER_FORMS = re.compile("[\u0250-\u02ff\u1d00-\u1dbf\u2070-\u209f\u249c-\u24b5\ua720-\ua7ff]")
_FORM_NAME = re.compile(
    r"^(?:LATIN LETTER SMALL CAPITAL|PARENTHESIZED LATIN SMALL LETTER|MODIFIER LETTER (?:SMALL|CAPITAL)|"
    r"LATIN SUBSCRIPT SMALL LETTER|SUPERSCRIPT LATIN SMALL LETTER) ([A-Z])$"
)
# single letters split by symbols ("R🍓e🌿c🐝o", "请※把※检"): punctuation, arrows, shapes, dingbats and
# emoji (U+2010..U+2BFF, U+1F000..U+1FAFF), never a letter's own marks (Devanagari vowel signs are not
# word characters to `re`) nor CJK punctuation ("甲、乙、丙")
_SPLIT_SYMBOL = "(?:(?![\\w\\s])[\u2010-\u2bff\U0001f000-\U0001faff\ufe0f])"
_SYMBOL_SPLIT = re.compile(rf"(?<![^\W_])(?:[^\W\d_]{_SPLIT_SYMBOL}{{1,3}}){{2,}}[^\W\d_](?![^\W_])")
_SYMBOL = re.compile(_SPLIT_SYMBOL)


def _letter_form(match: re.Match[str]) -> str:
    named = _FORM_NAME.match(unicodedata.name(match.group(0), ""))
    return named.group(1).lower() if named else match.group(0)


def readable_form(text: str, version: int = FEATURE_VERSION) -> str | None:
    """What an obfuscated query says in plain letters, for the embedding parts, which read the
    raw text: letters joined (`join_letters`), spaced-out letters joined, and leetspeak digits
    read as letters when the text is written in it; from version 4 look-alike letters folded
    (`fold_lookalikes`); letters split by underscores or by symbols joined, and small-capital,
    parenthesized, superscript and subscript letters read as letters. None when the query has
    nothing of that (the common case: no second embedding)."""
    joined = _UNDERSCORED_PAIR.sub(lambda m: m.group(0).replace("_", ""), text) if _UNDERSCORED.search(text) else text
    joined = _LETTER_FORMS.sub(_letter_form, joined)
    joined = _SYMBOL_SPLIT.sub(lambda m: _SYMBOL.sub("", m.group(0)), joined)
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
    text = unicodedata.normalize("NFKC", text.translate(_SHORTEN_EXPANSIONS))
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
