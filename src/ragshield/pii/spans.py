"""`pii_spans.jsonl`: the PII found in an index's chunks, stored as offsets and hashes.

One line per chunk that holds PII (chunks without PII have no line):

    {"chunk_id": "syn-00001#0", "spans": [{"kind": "person", "start": 25, "end": 39, "digest": "9f2c..."}]}

`start`/`end` are character offsets into the chunk text (end exclusive) and `digest` is
`pii_digest` of the value (SHA-256 of its normalised form). The values themselves are
never written: anyone holding the chunk can recover them, anyone holding only this file
can only confirm a guess.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragshield.errors import IndexLoadError
from ragshield.pii.digest import normalize_pii_value, pii_digest
from ragshield.pii.patterns import PiiMatch

if TYPE_CHECKING:
    from ragshield.pii.analyzer import PiiAnalyzer

__all__ = ["SPANS_FILE", "StoredSpan", "analyse_chunks", "read_pii_spans", "spans_of", "write_pii_spans"]

SPANS_FILE = "pii_spans.jsonl"
_DIGEST_CHARS = 64


@dataclass(frozen=True, slots=True)
class StoredSpan:
    """One PII span of a chunk: `kind`, offsets `start` (inclusive) and `end` (exclusive) in
    characters of the chunk text, and `digest` (`pii_digest` of the value, 64 hex characters)."""

    kind: str
    start: int
    end: int
    digest: str

    def to_dict(self) -> dict[str, str | int]:
        return {"kind": self.kind, "start": self.start, "end": self.end, "digest": self.digest}


def spans_of(matches: Iterable[PiiMatch]) -> tuple[StoredSpan, ...]:
    """The storable form of analyzer matches; a match whose value normalises to nothing is dropped."""
    return tuple(
        StoredSpan(match.kind, match.start, match.end, pii_digest(match.value))
        for match in matches
        if normalize_pii_value(match.value)
    )


def write_pii_spans(path: str | Path, rows: Iterable[tuple[str, Sequence[StoredSpan]]]) -> int:
    """Write (chunk id, spans) rows, skipping chunks without spans; returns the number of spans written.

    Written to a temporary name and renamed, so a crash never leaves a half-written file.
    """
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    total = 0
    with partial.open("w", encoding="utf-8") as handle:
        for chunk_id, spans in rows:
            if spans:
                handle.write(json.dumps({"chunk_id": chunk_id, "spans": [span.to_dict() for span in spans]}) + "\n")
                total += len(spans)
    partial.replace(target)
    return total


def read_pii_spans(path: str | Path) -> dict[str, tuple[StoredSpan, ...]]:
    """Chunk id -> stored spans, from a file written by `write_pii_spans`.

    Raises:
        IndexLoadError: the file cannot be read, or a line is not valid (the message names
            the file, the line number and what is wrong, and says how to rebuild).
    """
    source = Path(path)
    spans: dict[str, tuple[StoredSpan, ...]] = {}
    try:
        handle = source.open(encoding="utf-8")
    except OSError as error:
        raise IndexLoadError(
            f"cannot read {source} ({type(error).__name__}); rebuild the index: ragshield index"
        ) from error
    with handle:
        number = 0
        try:
            for number, line in enumerate(handle, start=1):  # noqa: B007 - the line number is reported on error
                if not line.strip():
                    continue
                chunk_id, row = _parse_line(line)
                if chunk_id in spans:
                    raise ValueError(f"chunk {chunk_id!r} appears twice")
                spans[chunk_id] = row
        except (ValueError, UnicodeDecodeError) as error:
            raise IndexLoadError(
                f"{source}: line {number}: {error}; rebuild the index with: ragshield index"
            ) from error
    return spans


def _parse_line(line: str) -> tuple[str, tuple[StoredSpan, ...]]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"invalid JSON ({error.msg})") from error
    if not isinstance(data, Mapping) or not isinstance(data.get("chunk_id"), str):
        raise ValueError("expected an object with a string 'chunk_id'")
    raw_spans = data.get("spans")
    if not isinstance(raw_spans, list) or not raw_spans:
        raise ValueError("expected a non-empty list 'spans'")
    return data["chunk_id"], tuple(_parse_span(raw) for raw in raw_spans)


def _parse_span(raw: object) -> StoredSpan:
    if not isinstance(raw, Mapping):
        raise ValueError("a span is not an object")
    kind, start, end, digest = raw.get("kind"), raw.get("start"), raw.get("end"), raw.get("digest")
    if not isinstance(kind, str) or not kind:
        raise ValueError("a span has no 'kind'")
    if type(start) is not int or type(end) is not int or not 0 <= start < end:
        raise ValueError(f"a span has invalid offsets start={start!r} end={end!r}")
    if not isinstance(digest, str) or len(digest) != _DIGEST_CHARS or not _is_hex(digest):
        raise ValueError("a span's 'digest' is not a 64-character SHA-256 hex digest")
    return StoredSpan(kind, start, end, digest)


def _is_hex(text: str) -> bool:
    return all(char in "0123456789abcdef" for char in text)


def analyse_chunks(
    chunks: Sequence[tuple[str, str]],
    analyzer: PiiAnalyzer,
    *,
    batch_size: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> Iterator[tuple[str, tuple[StoredSpan, ...]]]:
    """(chunk id, stored spans) for each (chunk id, text), in order; the index-time PII pass.

    `progress(done, total)` is called after each batch of `batch_size` chunks.
    """
    for start in range(0, len(chunks), batch_size):
        batch = chunks[start : start + batch_size]
        for (chunk_id, _), matches in zip(batch, analyzer.find_many([text for _, text in batch]), strict=True):
            yield chunk_id, spans_of(matches)
        if progress is not None:
            progress(min(start + batch_size, len(chunks)), len(chunks))
