"""The audit log: one JSON line per decision, with ids, hashes and numbers only.

A line records who asked (user id, request id), which chunks were retrieved (ids and
cosine similarities), every guard's verdict (guard, action, score where higher = more
suspicious, threshold, reason, evidence), the final action and the stage timings in
milliseconds. It never holds the query text, chunk text, canaries or detected PII values:
the query is kept as a SHA-256 prefix and a length.

Verdict evidence is by contract ids, hashes and numbers already; `Scrubber` enforces that a
second time, because a guard bug must not turn the audit log into a copy of the knowledge
base. Any string (or whitespace-separated token) that contains one of this request's
canaries, or of 8+ characters that occurs in a retrieved chunk or in the query, is replaced
by `sha256:<16 hex>`; strings over `MAX_STRING_CHARS` are hashed whole. This can only catch
values of this request (its chunks, its query, its canaries), and may over-hash a common
phrase that also occurs in a chunk: it is a backstop, not the contract.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ragshield.types import JSONValue, Response, RetrievalResult, Verdict

MAX_STRING_CHARS = 200
MIN_SECRET_TOKEN_CHARS = 8
_PUNCTUATION = ".,;:!?()[]{}'\""


def digest(text: str) -> str:
    """`sha256:` plus the first 16 hex digits of the SHA-256 of `text` (UTF-8)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


class Scrubber:
    """Replaces secrets of one request (canaries, chunk text, the query) in audit values by hashes.

    Args:
        canaries: the canaries inserted for this request (from the decorated retrieval's markers).
        texts: texts whose substrings must not appear (retrieved chunk texts, the query).
    """

    def __init__(self, canaries: Iterable[str] = (), texts: Iterable[str] = ()) -> None:
        self._canaries = tuple(c for c in canaries if c)
        self._texts = tuple(t for t in texts if t)

    def _secret(self, text: str) -> bool:
        folded = text.casefold()
        if any(canary.casefold() in folded for canary in self._canaries):
            return True
        return len(text) >= MIN_SECRET_TOKEN_CHARS and any(text in source for source in self._texts)

    def string(self, text: str) -> str:
        """`text` with every secret span hashed (the whole string when it is long or secret).

        Spans are runs of space-separated tokens, longest first from each position, so a
        multi-word value such as a phone number or a name is hashed whole.
        """
        if len(text) > MAX_STRING_CHARS or self._secret(text):
            return digest(text)
        tokens = text.split(" ")
        cleaned: list[str] = []
        start = 0
        while start < len(tokens):
            for end in range(len(tokens), start, -1):
                span = " ".join(tokens[start:end]).strip(_PUNCTUATION)
                if span and self._secret(span):
                    cleaned.append(digest(span))
                    start = end
                    break
            else:
                cleaned.append(tokens[start])
                start += 1
        return " ".join(cleaned)

    def value(self, value: JSONValue) -> JSONValue:
        """A JSON value with every string scrubbed (mapping keys included)."""
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, Mapping):
            return {self.string(str(key)): self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.value(item) for item in value]
        if isinstance(value, bool | int | None):
            return value
        if isinstance(value, float):
            return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
        return self.string(str(value))


def scrubber_for(
    retrieval: RetrievalResult | None,
    decorated: RetrievalResult | None = None,
    *,
    extra_texts: Sequence[str] = (),
) -> Scrubber:
    """The scrubber for one request: its canaries, its chunk texts and its query."""
    canaries: list[str] = []
    texts: list[str] = list(extra_texts)
    for result in (retrieval, decorated):
        if result is None:
            continue
        texts.append(result.query.text)
        texts.extend(hit.chunk.text for hit in result.hits)
        for values in result.markers.values():
            canaries.extend(values)
    return Scrubber(canaries, texts)


def verdict_record(verdict: Verdict, scrubber: Scrubber) -> dict[str, JSONValue]:
    """A verdict as an audit entry (every string scrubbed; infinite scores written as strings)."""
    return {
        "guard": verdict.guard,
        "action": verdict.action.value,
        "score": scrubber.value(verdict.score),
        "threshold": scrubber.value(verdict.threshold),
        "reason": scrubber.string(verdict.reason),
        "evidence": scrubber.value(dict(verdict.evidence)),
    }


def decision_record(
    *,
    request_id: str,
    endpoint: str,
    user_id: str,
    action: str,
    response: Response | None,
    scrubber: Scrubber,
    query_text: str | None = None,
    extra_verdicts: Sequence[Verdict] = (),
    detail: Mapping[str, JSONValue] | None = None,
) -> dict[str, JSONValue]:
    """One audit line.

    `action` is the final decision: `allow`, `block` (a guard blocked the query or the
    answer), `refuse` (the user is blocked), `timeout` or `error`.
    """
    verdicts = list(response.verdicts if response is not None else ()) + list(extra_verdicts)
    retrieval = response.retrieval if response is not None else None
    text = query_text if query_text is not None else (response.query.text if response is not None else "")
    record: dict[str, JSONValue] = {
        "ts": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"),
        "request_id": request_id,
        "endpoint": endpoint,
        "user_id": user_id,
        "action": action,
        "blocked_by": [v.guard for v in verdicts if v.blocked],
        "verdicts": [verdict_record(v, scrubber) for v in verdicts],
        "chunk_ids": [hit.chunk.id for hit in retrieval.hits] if retrieval else [],
        "similarities": [round(hit.similarity, 6) for hit in retrieval.hits] if retrieval else [],
        "finish_reason": response.finish_reason if response is not None else None,
        "timings_ms": dict(response.timings_ms) if response is not None else {},
        "query_sha256": digest(text),
        "query_chars": len(text),
        "output_chars": len(response.text) if response is not None else 0,
        "error": response.error if response is not None else None,
    }
    if detail:
        record["detail"] = scrubber.value(dict(detail))
    return record


class AuditLog:
    """Appends audit lines to a JSONL file (thread-safe; each line is flushed when written).

    Args:
        path: the JSONL file (parent folders are created); None disables the log.
    """

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._handle: IO[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        if self._handle is None:
            return
        line = json.dumps(record, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        with self._lock:
            self._handle.write(line + "\n")
            self._handle.flush()

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None
