"""Text folding for `CanaryMatcher`: the per-character normalisations its streams run on.

* `folded`: NFKD + look-alike folding + casefolding (separators still present);
* `skeleton`: the letters and digits of the folded text (the skeleton stream);
* `hex_text`: the folded text reduced to ``0-9 a-f x`` (the hex stream);
* `base64_text`: the base64 alphabet with url-safe characters folded to standard (the base64 stream).

Every step works per character, so folding a text equals folding its characters one by one and
joining them: the streams do not depend on how the answer is split into deltas, and a raw window can
be folded character by character to map a hit back to raw offsets (`ragshield.guards.canary.spans`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from ragshield.guards.canary.confusables import CONFUSABLES as _CONFUSABLES
from ragshield.guards.canary.confusables import INVISIBLE_LETTERS

_SKELETON_TABLE: dict[int, Any] = {ord(key): value for key, value in _CONFUSABLES.items()}
_SKELETON_TABLE.update({ord(ch): None for ch in INVISIBLE_LETTERS})
_NOT_ALNUM = re.compile(r"[\W_]+")
_NOT_HEX = re.compile(r"[^0-9a-fx]+")
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/]+")
_ASCII_ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CONFUSABLE = re.compile("[" + re.escape("".join(_CONFUSABLES) + "".join(INVISIBLE_LETTERS)) + "]")


def _ascii_deleter(keep: bytes) -> bytes:
    return bytes(code for code in range(128) if code not in keep)


# for ASCII text, bytes.translate deletes characters ~10x faster than a regex substitution
_DROP_NOT_ALNUM = _ascii_deleter(_ASCII_ALNUM)
_DROP_NOT_HEX = _ascii_deleter(b"0123456789abcdefx")
_DROP_NOT_BASE64 = _ascii_deleter(_ASCII_ALNUM + b"+/")


def _keep(text: str, pattern: re.Pattern[str], drop: bytes) -> str:
    """`text` without the characters `pattern` matches (`drop`: the same set, for ASCII text)."""
    if text.isascii():
        return text.encode("ascii").translate(None, drop).decode("ascii")
    return pattern.sub("", text)


def folded(text: str) -> str:
    """NFKD + homoglyph folding + casefolding (separators still present).

    Equal to translate -> NFKD -> translate -> casefold -> translate with the look-alike table
    (folding before NFKD, which turns some look-alikes such as lunate sigma into other letters, and
    after casefolding, so lower-case entries catch upper-case look-alikes too). The table steps run
    only when a look-alike is present: `str.translate` with a dict is slow.
    """
    if text.isascii():  # the common case: NFKD and the table change nothing
        return text.lower()
    table = _SKELETON_TABLE
    if _CONFUSABLE.search(text) is not None:
        text = text.translate(table)
    text = unicodedata.normalize("NFKD", text)
    if _CONFUSABLE.search(text) is not None:
        text = text.translate(table)
    text = text.casefold()
    return text.translate(table) if _CONFUSABLE.search(text) is not None else text


def alnum_only(folded_text: str) -> str:
    """The letters and digits of already folded text."""
    return _keep(folded_text, _NOT_ALNUM, _DROP_NOT_ALNUM)


def hex_only(folded_text: str) -> str:
    """The ``0-9 a-f x`` characters of already folded text."""
    return _keep(folded_text, _NOT_HEX, _DROP_NOT_HEX)


def skeleton(text: str) -> str:
    """The letters and digits of `text` after NFKD, homoglyph folding and casefolding."""
    return alnum_only(folded(text))


def hex_text(text: str) -> str:
    """`text` as the hex stream sees it."""
    return hex_only(folded(text))


def base64_text(text: str) -> str:
    """`text` as the base64 stream sees it: case kept, url-safe ``-_`` folded to ``+/``."""
    text = text if text.isascii() else unicodedata.normalize("NFKD", text)
    return _keep(text.replace("-", "+").replace("_", "/"), _NOT_BASE64, _DROP_NOT_BASE64)


@lru_cache(maxsize=4096)
def skeleton_char(char: str) -> str:
    return skeleton(char)


@lru_cache(maxsize=4096)
def hex_char(char: str) -> str:
    return hex_text(char)


@lru_cache(maxsize=4096)
def base64_char(char: str) -> str:
    return base64_text(char)
