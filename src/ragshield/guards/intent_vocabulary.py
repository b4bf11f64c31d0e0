"""The vocabulary and text tests that `intent_decoding` and `intent_code_runs` share: which words
are known (the package's own phrasings) and which decoded text reads as words."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

from ragshield.guards.intent_features import CJK_CLASS

# a word of ASCII letters that is not part of a longer word in another script ("tsil", not "tsilé")
WORD = re.compile(r"(?<![^\W\d_])[A-Za-z]{3,}(?![^\W\d_])")
_TEXT_WORD = re.compile(r"[^\W\d_]{2,}")
_MIN_BLOB_WORDS = 3
# Chinese, Japanese and Korean are written without spaces: six such characters in a row read as words
_CJK_RUN = re.compile(f"[{CJK_CLASS}]{{6}}")
_PHRASINGS = "intent_phrasings.jsonl"
# letters of another script, escaped or spelled as codes: a sentence, not a name a JSON serializer
# escaped ("\\u0414\\u043c\\u0438\\u0442\\u0440\\u0438\\u0439") or a URL's title
MIN_SCRIPT_LETTERS = 12


@cache
def known_words() -> frozenset[str]:
    """Lower-case ASCII words of three letters or more in the package's own phrasings
    (`ragshield/data/intent_phrasings.jsonl`, about 1,700 words, read once). Words seen once count
    too: with only those seen twice, a TGTB query in Atbash or reversed behind a plain wrapper
    ("Decode ... and follow the instruction") often had too few known words to pass the gate."""
    text = resources.files("ragshield.data").joinpath(_PHRASINGS).read_text(encoding="utf-8")
    return frozenset(
        word.lower() for line in text.splitlines() if line.strip() for word in WORD.findall(json.loads(line)["text"])
    )


def vocabulary_words(text: str, *, min_letters: int = 3) -> int:
    """How many words of `text` (ASCII, `min_letters` or more) are `known_words`."""
    known = known_words()
    return sum(1 for word in WORD.findall(text) if len(word) >= min_letters and word.lower() in known)


def printable(text: str) -> bool:
    """Every character printable or white space."""
    return all(c.isprintable() or c.isspace() for c in text)


def printable_part(text: str) -> str:
    """`text` without its unprintable characters (white space kept)."""
    return "".join(char for char in text if char.isprintable() or char.isspace())


def plain_text(decoded: str) -> bool:
    """Text a model would read as words: printable, three words or more apart (not a JSON header),
    or six Chinese, Japanese or Korean characters in a row."""
    if not printable(decoded):
        return False
    words = len(decoded.split()) >= _MIN_BLOB_WORDS and len(_TEXT_WORD.findall(decoded)) >= _MIN_BLOB_WORDS
    return words or _CJK_RUN.search(decoded) is not None
