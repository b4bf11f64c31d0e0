"""The one normalisation and hash of PII values, shared by the index, the store and the guards.

A value is compared and stored by `pii_digest(value)`: SHA-256 (hex) of
`normalize_pii_value(value)`. Normalising keeps only what identifies the value, so
"Norma Fisher", "NORMA  FISHER" and "norma-fisher" share a digest, as do "(487) 647-5938"
and "487.647.5938".
"""

from __future__ import annotations

import hashlib
import unicodedata

__all__ = ["normalize_pii_value", "pii_digest"]


def normalize_pii_value(value: str) -> str:
    """`value` in Unicode NFKC, case-folded, with every character that is not a letter or a digit removed.

    NFKC first so that full-width digits and ligatures become their plain forms before
    the letter/digit filter; casefold (not lower) so that e.g. German sharp s matches "ss".
    """
    folded = unicodedata.normalize("NFKC", value).casefold()
    return "".join(char for char in folded if char.isalnum())


def pii_digest(value: str) -> str:
    """SHA-256 hex digest (64 characters) of `normalize_pii_value(value)`."""
    return hashlib.sha256(normalize_pii_value(value).encode("utf-8")).hexdigest()
