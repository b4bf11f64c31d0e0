"""Executable definitions of the views a copied text can be released in, for tests and worst-case targets.

A *view* is a way to write a text so that a verbatim matcher no longer sees it: look-alike letters,
letter ciphers, base-N encodings, escapes, spelled-out symbols, reshuffles and near-copies (the
encodings listed in issue 13). `encode(text, view, rng)` writes any Unicode text (a whole record
with spaces and punctuation) in one view, drawing its random details (separators, shifts, line
wrapping, ...) from `rng`, so a fixed seed gives a fixed output. `decode(text, view)` inverts the
views where that is well defined (`DECODABLE_VIEWS`); tests use it to prove that the encoded text
still carries the whole original.

This is a bottom-layer module: it imports only the standard library and `ragshield.errors`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ragshield.encodings import basen, ciphers, escapes, letters, reshuffles, spelled
from ragshield.encodings.spelled import spelled_form
from ragshield.errors import ConfigError, RagShieldError

__all__ = ["DECODABLE_VIEWS", "EXACT_VIEWS", "VIEWS", "ViewDecodeError", "decode", "encode", "spelled_form"]

_ENCODERS: dict[str, Callable[[str, random.Random], str]] = {
    "plain": lambda text, rng: text,
    **letters.ENCODERS,
    **ciphers.ENCODERS,
    **basen.ENCODERS,
    **escapes.ENCODERS,
    **spelled.ENCODERS,
    **reshuffles.ENCODERS,
}
_DECODERS: dict[str, Callable[[str], str]] = {
    "plain": lambda text: text,
    **ciphers.DECODERS,
    **basen.DECODERS,
    **escapes.DECODERS,
    **spelled.DECODERS,
    **reshuffles.DECODERS,
}

VIEWS: tuple[str, ...] = (
    "plain",
    # letter look-alikes and extras
    "case",
    "separators",
    "zero-width",
    "homoglyph",
    "fullwidth",
    "combining",
    "math-alphabet",
    "small-caps",
    "regional-indicator",
    "tag-chars",
    "latin-hook",
    # letter ciphers
    "reversed",
    "rot13",
    "caesar",
    "rot47",
    "atbash",
    "leetspeak",
    # base-N
    "base64",
    "base64-urlsafe",
    "base32",
    "base85",
    "ascii85",
    "base64-of-base64",
    "base64-utf16",
    "hex",
    "hex-utf16",
    "uuencode",
    # escapes and number spellings
    "url",
    "url-double",
    "url-mixed",
    "html-entity",
    "binary",
    "octal-escapes",
    "decimal-codes",
    "unicode-escapes",
    "digits-as-words",
    # markup and spelling-out
    "html-tags",
    "numbered-lines",
    "one-per-line",
    "nato",
    "morse",
    # reshuffles and near-copies
    "interleaved",
    "doubled",
    "reordered-groups",
    "one-edit",
)
DECODABLE_VIEWS: tuple[str, ...] = tuple(view for view in VIEWS if view in _DECODERS)
# Views whose `decode` gives back exactly the encoded text, whatever it was. `nato` and `morse`
# give `spelled_form(text, view)`; `digits-as-words` is exact only on the texts its module describes.
EXACT_VIEWS: tuple[str, ...] = tuple(
    view for view in DECODABLE_VIEWS if view not in ("nato", "morse", "digits-as-words")
)


class ViewDecodeError(RagShieldError, ValueError):
    """A text is not valid in the view it was decoded as (bad padding, stray symbols, unknown words)."""


def _check(view: str, valid: tuple[str, ...], what: str) -> None:
    if view not in valid:
        raise ConfigError(f"unknown {what} {view!r}; valid: {', '.join(valid)}")


def encode(text: str, view: str, rng: random.Random) -> str:
    """`text` written in `view` (one of `VIEWS`), with its random details drawn from `rng`.

    Characters a view cannot write stay as they are (letter views), or are dropped where the view
    spells only letters and digits (`nato`, `morse`). Every view except `plain` changes any text
    of seven or more distinct words that holds a digit and one of the letters a, e, i, o and is
    not a palindrome (shorter texts can come out unchanged: `reordered-groups` needs two groups).

    Raises:
        ConfigError: unknown view (the message lists the valid ones).
    """
    _check(view, VIEWS, "view")
    return _ENCODERS[view](text, rng)


def decode(text: str, view: str) -> str:
    """The text that `encode(..., view, rng)` wrote, for the views in `DECODABLE_VIEWS`.

    Exact for `EXACT_VIEWS`; `nato` and `morse` give `spelled_form(original, view)`.

    Raises:
        ConfigError: `view` is unknown or has no well-defined decoding (`caesar` needs its shift,
            look-alike views are many-to-one, `reordered-groups` and `one-edit` lose information).
        ViewDecodeError: `text` is not valid in `view` (bad base64 padding, an unknown Morse code, ...).
    """
    _check(view, DECODABLE_VIEWS, "view to decode (others have no well-defined decoding)")
    try:
        return _DECODERS[view](text)
    # binascii.Error and UnicodeDecodeError are ValueErrors; chr() of a code point past 2**63 overflows
    except (ValueError, KeyError, IndexError, OverflowError) as error:
        raise ViewDecodeError(f"the text is not valid {view}: {type(error).__name__}") from error
