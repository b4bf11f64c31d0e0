"""How the unnatural-output benchmark feeds an answer to the detector and reads the spans back.

An answer goes to a fresh `UnnaturalTextDetector` in `DELTA`-character deltas, as a streamed model
answer would; the reported spans become a per-character mask, and a hidden blob counts as detected
when the mask covers `COVERED` of its characters. `unnatural.py` (the sections) and
`unnatural_report.py` (the report's wording) share these.
"""

from __future__ import annotations

from typing import Any

from ragshield.guards.release.unnatural import UnnaturalSpan, UnnaturalTextDetector

DELTA = 4
COVERED = 0.9  # a blob counts as detected when this share of its characters is flagged


def detect(text: str, delta: int = DELTA, **params: Any) -> list[UnnaturalSpan]:
    """The spans a fresh detector (`params` passed on) reports over `text` fed in `delta`-character
    deltas, the flush included."""
    detector = UnnaturalTextDetector(**params)
    spans: list[UnnaturalSpan] = []
    for i in range(0, len(text), delta):
        spans.extend(detector.feed(text[i : i + delta]))
    spans.extend(detector.flush())
    return spans


def flagged(spans: list[UnnaturalSpan], length: int) -> bytearray:
    """A mask of `length` bytes: 1 where a span covers the character, 0 elsewhere."""
    mask = bytearray(length)
    for span in spans:
        mask[span.start : span.end] = b"\x01" * (span.end - span.start)
    return mask
