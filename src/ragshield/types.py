"""Frozen data objects that flow one way through the pipeline.

Every object is a frozen, slotted dataclass that converts to and from plain JSON
(`to_dict` / `from_dict`), so transcripts written as JSONL can rebuild metrics and
reports without re-running any model.

Score conventions used everywhere in ragshield:

* `ScoredChunk.similarity` is a cosine similarity in [-1, 1]; higher = closer to the query.
* `Verdict.score` is a suspicion score; higher = more suspicious. A guard blocks when
  `score >= threshold`.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

JSONValue = Any  # a value json.dumps accepts; kept loose on purpose for evidence payloads


def new_id() -> str:
    """A fresh random identifier (32 hex characters)."""
    return uuid.uuid4().hex


class Action(StrEnum):
    """What a guard decided for one query or one output."""

    ALLOW = "allow"
    BLOCK = "block"
    REDACT = "redact"


@dataclass(frozen=True, slots=True)
class Document:
    """One record of a knowledge base before chunking (an email, a dialogue, ...)."""

    id: str
    text: str
    metadata: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, JSONValue]:
        return {"id": self.id, "text": self.text, "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> Document:
        return cls(id=str(data["id"]), text=str(data["text"]), metadata=dict(data.get("metadata", {})))


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a document that is embedded and retrieved as a unit.

    `position` is the chunk's index within its document (0-based).
    """

    id: str
    doc_id: str
    text: str
    position: int = 0
    metadata: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "id": self.id,
            "doc_id": self.doc_id,
            "text": self.text,
            "position": self.position,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> Chunk:
        return cls(
            id=str(data["id"]),
            doc_id=str(data["doc_id"]),
            text=str(data["text"]),
            position=int(data.get("position", 0)),
            metadata=dict(data.get("metadata", {})),
        )


@dataclass(frozen=True, slots=True)
class Query:
    """A user query as the RAG system receives it."""

    text: str
    user_id: str = "anonymous"
    session_id: str | None = None
    id: str = field(default_factory=new_id)

    def to_dict(self) -> dict[str, JSONValue]:
        return {"id": self.id, "text": self.text, "user_id": self.user_id, "session_id": self.session_id}

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> Query:
        return cls(
            text=str(data["text"]),
            user_id=str(data.get("user_id", "anonymous")),
            session_id=data.get("session_id"),
            id=str(data.get("id") or new_id()),
        )


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    """A retrieved chunk with its cosine similarity to the query (higher = closer) and rank (0 = best)."""

    chunk: Chunk
    similarity: float
    rank: int

    def to_dict(self) -> dict[str, JSONValue]:
        return {"chunk": self.chunk.to_dict(), "similarity": self.similarity, "rank": self.rank}

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> ScoredChunk:
        return cls(Chunk.from_dict(data["chunk"]), float(data["similarity"]), int(data["rank"]))


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """The top-k chunks for a query, sorted by similarity (descending).

    `markers` maps a chunk id to the canary strings a `ContextDecorator` inserted into
    that chunk's text for this request only; the knowledge base itself is never modified.
    """

    query: Query
    hits: tuple[ScoredChunk, ...]
    markers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # the retriever's embedding of the query text (L2-normalised), so query guards that read
    # the same embedder's vector (`intent`) need no second forward pass; not serialised and
    # not compared: transcripts stay as they were, and two results of one query stay equal
    query_vector: tuple[float, ...] | None = field(default=None, compare=False, repr=False)
    # the query guards whose verdict on this request is an intent signal (flagged but answered,
    # `shield`'s intent layer): set by the pipeline after the query guards so that a decorator can
    # escalate (`shield` places canaries only on flagged requests); not serialised, not compared
    signals: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @property
    def similarities(self) -> list[float]:
        """Cosine similarities of the hits, best first."""
        return [hit.similarity for hit in self.hits]

    @property
    def chunk_ids(self) -> list[str]:
        return [hit.chunk.id for hit in self.hits]

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "query": self.query.to_dict(),
            "hits": [hit.to_dict() for hit in self.hits],
            "markers": {key: list(value) for key, value in self.markers.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> RetrievalResult:
        return cls(
            query=Query.from_dict(data["query"]),
            hits=tuple(ScoredChunk.from_dict(hit) for hit in data.get("hits", [])),
            markers={key: tuple(value) for key, value in data.get("markers", {}).items()},
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    """One guard's decision.

    `score` is higher = more suspicious; the guard blocks when `score >= threshold`. Each guard's
    score has its own scale; `risk` puts every guard on one scale in [0, 1] (see `risk_of`).
    `evidence` holds ids, hashes and numbers only, never canaries, chunk text or PII.
    """

    guard: str
    action: Action
    score: float
    threshold: float
    reason: str
    evidence: Mapping[str, JSONValue] = field(default_factory=dict)

    @property
    def blocked(self) -> bool:
        return self.action is Action.BLOCK

    @property
    def risk(self) -> float:
        """`risk_of(score, threshold)`: in [0, 1], monotone in `score`, 0.5 at the threshold."""
        return risk_of(self.score, self.threshold)

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "guard": self.guard,
            "action": self.action.value,
            "score": self.score,
            "threshold": self.threshold,
            "risk": self.risk,
            "reason": self.reason,
            "evidence": dict(self.evidence),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> Verdict:
        return cls(
            guard=str(data["guard"]),
            action=Action(data["action"]),
            score=float(data["score"]),
            threshold=float(data["threshold"]),
            reason=str(data["reason"]),
            evidence=dict(data.get("evidence", {})),
        )


#: the logistic's width as a share of the threshold's size (at least 1 unit of the score)
RISK_SOFTNESS = 0.1
_BELOW_HALF = math.nextafter(0.5, 0.0)


def risk_of(score: float, threshold: float) -> float:
    """One risk scale for every guard: `1 / (1 + exp(-(score - threshold) / w))`, w = 0.1 max(|threshold|, 1).

    In [0, 1] and monotone in the raw `score`; exactly 0.5 at the guard's threshold (its calibrated
    operating point: the target false-positive rate on benign traffic when the guard was fitted),
    so `risk >= 0.5` exactly when `score >= threshold`. A guard that failed closed (score +inf)
    has risk 1; NaN (no rank) is treated as the worst case, 1. The mapping per guard is in
    docs/risk.md.
    """
    if math.isnan(score) or score == math.inf:
        return 1.0
    if score == -math.inf:
        return 0.0
    if not math.isfinite(threshold):
        return 1.0 if score >= threshold else 0.0
    width = RISK_SOFTNESS * max(abs(threshold), 1.0)
    z = min(50.0, max(-50.0, (score - threshold) / width))
    risk = 1.0 / (1.0 + math.exp(-z))
    # rounding near the threshold must not move a score across 0.5
    return max(0.5, risk) if score >= threshold else min(_BELOW_HALF, risk)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """What a generator receives.

    `prompt` is set for completion-style layouts (the TGTB `context: ... answer:` layout);
    chat generators then send it as a single user message. Otherwise `messages` is used.
    `max_tokens` counts generated tokens; `temperature` 0 means greedy decoding.
    """

    messages: tuple[ChatMessage, ...]
    prompt: str | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int | None = 0
    stop: tuple[str, ...] = ()

    def as_text(self) -> str:
        """The request as one plain string (the completion prompt, or the messages joined)."""
        if self.prompt is not None:
            return self.prompt
        return "\n\n".join(message.content for message in self.messages)


@dataclass(frozen=True, slots=True)
class Response:
    """Exactly what the client received, plus the verdicts and per-stage timings.

    `text` is the text delivered to the client (after any holdback, halt or redaction).
    `timings_ms` maps a stage name (`retrieve`, `guard:<name>`, `generate`, ...) to milliseconds.
    `retrieval` is the undecorated retrieval (chunk ids, similarities); None when the query
    was refused before retrieval (blocked user, invalid query).
    """

    query: Query
    text: str
    retrieval: RetrievalResult | None
    verdicts: tuple[Verdict, ...] = ()
    finish_reason: str = "stop"  # stop | length | blocked | refused | error | cancelled | screened (RagPipeline.screen)
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None  # set when generation failed; names the exception type only

    @property
    def blocked(self) -> bool:
        return any(verdict.blocked for verdict in self.verdicts)

    @property
    def blocked_by(self) -> list[str]:
        return [verdict.guard for verdict in self.verdicts if verdict.blocked]

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "query": self.query.to_dict(),
            "text": self.text,
            "retrieval": None if self.retrieval is None else self.retrieval.to_dict(),
            "verdicts": [verdict.to_dict() for verdict in self.verdicts],
            "finish_reason": self.finish_reason,
            "timings_ms": dict(self.timings_ms),
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> Response:
        retrieval = data.get("retrieval")
        return cls(
            query=Query.from_dict(data["query"]),
            text=str(data["text"]),
            retrieval=None if retrieval is None else RetrievalResult.from_dict(retrieval),
            verdicts=tuple(Verdict.from_dict(v) for v in data.get("verdicts", [])),
            finish_reason=str(data.get("finish_reason", "stop")),
            timings_ms={key: float(value) for key, value in data.get("timings_ms", {}).items()},
            error=data.get("error"),
        )


@dataclass(frozen=True, slots=True)
class Transcript:
    """A run's responses in order, labelled with what produced them.

    `kind` is `attack` or `benign`; `name` is the attack name (or benign set name);
    `defense` is the defense registry name (`none` when undefended).
    """

    kind: str
    name: str
    defense: str
    responses: tuple[Response, ...]
    seed: int = 0

    def write_jsonl(self, path: str | Path) -> None:
        """Write a header line then one line per response."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        header = {"kind": self.kind, "name": self.name, "defense": self.defense, "seed": self.seed}
        with target.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps({"transcript": header}) + "\n")
            for response in self.responses:
                handle.write(json.dumps(response.to_dict(), ensure_ascii=False) + "\n")

    @classmethod
    def read_jsonl(cls, path: str | Path) -> Transcript:
        lines = iter_jsonl(path)
        header = next(lines, None)
        if header is None or "transcript" not in header:
            raise ValueError(f"{path}: not a ragshield transcript (missing header line)")
        meta = header["transcript"]
        responses = tuple(Response.from_dict(line) for line in lines)
        return cls(meta["kind"], meta["name"], meta["defense"], responses, int(meta.get("seed", 0)))


def iter_jsonl(path: str | Path) -> Iterator[dict[str, JSONValue]]:
    """Yield the JSON objects of a JSONL file, skipping blank lines.

    Raises:
        ValueError: a line is not a JSON object (the message names the file and line).
    """
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: invalid JSON ({error.msg})") from error
            if not isinstance(value, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object per line")
            yield value


def write_jsonl(path: str | Path, rows: Iterable[Mapping[str, JSONValue]]) -> None:
    """Write mappings as JSONL, creating parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
