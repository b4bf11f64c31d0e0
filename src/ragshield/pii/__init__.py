"""PII found in texts and stored with the index: the analyzer, the value digest, the stored spans and
the per-chunk store that release guards read.

Importing this package loads no model: presidio loads on the first `find`, spaCy on the
first `find` that runs NER (extra `ner`).
"""

from __future__ import annotations

from ragshield.pii.analyzer import PATTERN_KINDS, PiiAnalyzer, PiiMatch
from ragshield.pii.digest import normalize_pii_value, pii_digest
from ragshield.pii.ner import ner_available
from ragshield.pii.spans import SPANS_FILE, StoredSpan, read_pii_spans
from ragshield.pii.store import ChunkPiiStore, PiiValue, open_chunk_pii_store

__all__ = [
    "PATTERN_KINDS",
    "SPANS_FILE",
    "ChunkPiiStore",
    "PiiAnalyzer",
    "PiiMatch",
    "PiiValue",
    "StoredSpan",
    "ner_available",
    "normalize_pii_value",
    "open_chunk_pii_store",
    "pii_digest",
    "read_pii_spans",
]
