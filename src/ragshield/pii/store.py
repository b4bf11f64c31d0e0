"""The PII values of retrieved chunks, for guards that keep them from being released.

`open_chunk_pii_store(index_dir)` returns a `ChunkPiiStore` whose `values(chunk)` are the
PII values of an original (undecorated) chunk:

* `source == "index"`: from the spans `ragshield index` stored in `pii_spans.jsonl`.
  Every stored span is checked against the chunk text (offsets in range, digest of the
  value at those offsets equal to the stored digest); a chunk whose spans do not all
  verify, whose text differs from the indexed text, or that the index does not hold, is
  analysed afresh instead. A value whose digest does not verify is never returned.
* `source == "request-time"`: the analyzer runs on each chunk when it is first asked for
  (slower: tens of milliseconds per chunk with NER), for an index built before PII
  indexing, with `--no-pii`, or with fewer recognizers than the analyzer runs.

Results are cached per chunk (bounded LRU). PII values are secrets: this module logs
chunk ids, counts and recognizer names only.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragshield.errors import IndexLoadError
from ragshield.pii.analyzer import PiiAnalyzer, PiiMatch
from ragshield.pii.digest import normalize_pii_value, pii_digest
from ragshield.pii.spans import SPANS_FILE, StoredSpan, read_pii_spans
from ragshield.rag.index import read_manifest
from ragshield.rag.store import read_chunks
from ragshield.types import Chunk

__all__ = ["ChunkPiiStore", "PiiValue", "open_chunk_pii_store"]

log = logging.getLogger(__name__)

DEFAULT_CACHE_SIZE = 4096
INDEX = "index"
REQUEST_TIME = "request-time"


@dataclass(frozen=True, slots=True)
class PiiValue:
    """One PII value of a chunk: `kind` (person, email, ...), the `value` as written in the
    chunk (a secret: never log it; it is left out of `repr`), and `digest` (`pii_digest(value)`)."""

    kind: str
    value: str = field(repr=False)
    digest: str


def _fingerprint(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class ChunkPiiStore:
    """PII values per chunk, from stored index spans or found at request time.

    Args:
        analyzer: runs on chunks without verified stored spans (and on every chunk when
            `spans` is None).
        spans: chunk id -> stored spans (None: request-time store).
        fingerprints: chunk id -> fingerprint of the indexed text, for every chunk of the
            index (with or without spans); required with `spans`.
        recognizers: names of the recognizers behind the values.
        cache_size: chunks whose values are kept (least recently used dropped first).
    """

    def __init__(
        self,
        analyzer: PiiAnalyzer,
        *,
        spans: Mapping[str, Sequence[StoredSpan]] | None = None,
        fingerprints: Mapping[str, bytes] | None = None,
        recognizers: Sequence[str] | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
    ) -> None:
        if spans is not None and fingerprints is None:
            raise ValueError("a store with index spans needs the fingerprints of the indexed chunks")
        self.analyzer = analyzer
        self.source = REQUEST_TIME if spans is None else INDEX
        self.recognizers = tuple(recognizers if recognizers is not None else analyzer.recognizers)
        self._spans = spans
        self._fingerprints = fingerprints or {}
        self._cache_size = max(1, cache_size)
        self._cache: OrderedDict[tuple[str, bytes], tuple[PiiValue, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self.fallbacks = 0  # chunks analysed at request time although the store reads the index
        self._frequency: Counter[str] | None = None

    def chunk_frequency(self, digest: str) -> int | None:
        """In how many indexed chunks a value with this digest was found (None for a request-time
        store). A value found in many chunks (a clinic's name, a site's domain, a term the NER
        model misreads as a place) belongs to no single record; guards may treat it as public."""
        if self._spans is None:
            return None
        with self._lock:
            if self._frequency is None:
                self._frequency = Counter(
                    digest for spans in self._spans.values() for digest in {span.digest for span in spans}
                )
        return self._frequency[digest]

    def values(self, chunk: Chunk) -> tuple[PiiValue, ...]:
        """The PII values of `chunk` (the original chunk, not a canary-decorated copy), in text
        order, each (kind, value) once; every returned digest equals `pii_digest(value)`."""
        return self.values_for([chunk])[0]

    def values_for(self, chunks: Sequence[Chunk]) -> tuple[tuple[PiiValue, ...], ...]:
        """`values` of each chunk; the chunks that need the analyzer are analysed in one batch
        (one `nlp.pipe` call for a retrieval's k chunks)."""
        keys = [(chunk.id, _fingerprint(chunk.text)) for chunk in chunks]
        results: dict[int, tuple[PiiValue, ...]] = {}
        with self._lock:
            for position, key in enumerate(keys):
                cached = self._cache.get(key)
                if cached is not None:
                    self._cache.move_to_end(key)
                    results[position] = cached
        to_analyse: list[int] = []
        for position, chunk in enumerate(chunks):
            if position in results:
                continue
            stored = self._from_index(chunk, keys[position][1])
            if stored is None:
                to_analyse.append(position)
            else:
                results[position] = stored
        if to_analyse:
            found = self.analyzer.find_many([chunks[position].text for position in to_analyse])
            for position, matches in zip(to_analyse, found, strict=True):
                results[position] = _from_matches(matches)
        with self._lock:
            for position, key in enumerate(keys):
                self._cache[key] = results[position]
                self._cache.move_to_end(key)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return tuple(results[position] for position in range(len(chunks)))

    def _from_index(self, chunk: Chunk, fingerprint: bytes) -> tuple[PiiValue, ...] | None:
        """The verified stored values of `chunk`, or None when it must be analysed."""
        if self._spans is None:
            return None
        if self._fingerprints.get(chunk.id) != fingerprint:
            reason = "is not in the index" if chunk.id not in self._fingerprints else "differs from the indexed text"
            self._fallback(f"chunk {chunk.id!r} {reason}")
            return None
        verified = _verified(chunk.text, self._spans.get(chunk.id, ()))
        if verified is None:
            self._fallback(f"a stored PII span of chunk {chunk.id!r} does not verify")
            return None
        return verified

    def _fallback(self, why: str) -> None:
        self.fallbacks += 1
        log.warning("%s; analysing it at request time", why)


def _verified(text: str, spans: Sequence[StoredSpan]) -> tuple[PiiValue, ...] | None:
    """The values at the stored spans, or None when any span is out of range or its digest differs."""
    values: list[PiiValue] = []
    for span in spans:
        if span.end > len(text):
            return None
        value = text[span.start : span.end]
        if pii_digest(value) != span.digest:
            return None
        values.append(PiiValue(span.kind, value, span.digest))
    return _unique(values)


def _from_matches(matches: Sequence[PiiMatch]) -> tuple[PiiValue, ...]:
    return _unique(
        PiiValue(match.kind, match.value, pii_digest(match.value))
        for match in matches
        if normalize_pii_value(match.value)
    )


def _unique(values: Iterable[PiiValue]) -> tuple[PiiValue, ...]:
    seen: set[tuple[str, str]] = set()
    kept: list[PiiValue] = []
    for value in values:
        if (value.kind, value.value) not in seen:
            seen.add((value.kind, value.value))
            kept.append(value)
    return tuple(kept)


def open_chunk_pii_store(
    index_dir: str | Path | None, *, analyzer: PiiAnalyzer | None = None, cache_size: int = DEFAULT_CACHE_SIZE
) -> ChunkPiiStore:
    """The PII store for the index folder `index_dir` (None: no index, request-time store).

    Reads the spans when the index was built with a PII pass that ran at least the
    analyzer's recognizers; otherwise logs one line saying how to rebuild the index with
    spans and returns a request-time store.

    Args:
        index_dir: the folder written by `ragshield index`, or None.
        analyzer: the analyzer for request-time detection and fallbacks (default:
            `PiiAnalyzer()`, with NER when the `ner` extra is installed).
        cache_size: chunks whose values are cached.

    Raises:
        IndexLoadError: the folder has no readable manifest; the manifest lists PII
            recognizers but `pii_spans.jsonl` is missing; a line of `pii_spans.jsonl` or
            `chunks.jsonl` is invalid (the message names the file and line).
    """
    analyzer = analyzer or PiiAnalyzer()
    if index_dir is None:
        return ChunkPiiStore(analyzer, cache_size=cache_size)
    folder = Path(index_dir)
    manifest = read_manifest(folder)
    rebuild = f"ragshield index --corpus {manifest.corpus} --out {folder}"
    if not manifest.pii_recognizers:
        log.warning(
            "index %s has no stored PII spans; PII is found at request time (slower); rebuild with PII spans: %s",
            folder,
            rebuild,
        )
        return ChunkPiiStore(analyzer, cache_size=cache_size)
    missing = [name for name in analyzer.recognizers if name not in manifest.pii_recognizers]
    if missing:
        install = "pip install 'ragshield[ner]', then " if any(name.startswith("spacy:") for name in missing) else ""
        log.warning(
            "index %s stores PII spans without %d recognizer(s) the analyzer runs (%s); PII is found at request "
            "time (slower); rebuild with PII spans: %s%s",
            folder,
            len(missing),
            ", ".join(missing),
            install,
            rebuild,
        )
        return ChunkPiiStore(analyzer, cache_size=cache_size)
    path = folder / SPANS_FILE
    if not path.is_file():
        raise IndexLoadError(
            f"index at {folder} lists PII recognizers but {path} is missing; rebuild it with: {rebuild}"
        )
    spans = read_pii_spans(path)
    return ChunkPiiStore(
        analyzer,
        spans=spans,
        fingerprints=_chunk_fingerprints(folder),
        recognizers=manifest.pii_recognizers,
        cache_size=cache_size,
    )


def _chunk_fingerprints(folder: Path) -> dict[str, bytes]:
    try:
        return {chunk.id: _fingerprint(chunk.text) for chunk in read_chunks(folder)}
    except (OSError, ValueError, KeyError) as error:
        raise IndexLoadError(
            f"cannot read the chunks of {folder} ({error}); rebuild it with: ragshield index"
        ) from error
