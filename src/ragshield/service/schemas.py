"""Request and response bodies: OpenAI-compatible chat completions (whole and SSE chunks),
the guard endpoints, and the OpenAI error shape.

Chat requests accept the fields OpenAI clients send and ignore sampling settings
(`max_tokens`, `temperature`, ...): generation settings belong to the server config, so a
client cannot lengthen answers past what the defenses were calibrated for.

Verdict scores are higher = more suspicious; similarities are cosine (higher = closer).
"""

from __future__ import annotations

import math
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragshield.guards.canary.canaries import CANARY_ALPHABET, MIN_LENGTH
from ragshield.types import Chunk, Verdict

MAX_MESSAGES = 256
MAX_GUARD_CHUNKS = 100
MAX_CHUNK_CHARS = 100_000
MAX_ID_CHARS = 512
# client-supplied canaries (`markers` of /v1/guard/output) are checked before the matcher builds
# its automaton: ragshield draws 12 symbols from CANARY_ALPHABET, 2 per chunk by default and
# with `per_chunk: auto` one per ~130 characters of chunk text (about 1,950 for a full 256 kB
# body), so these caps admit every marker set ragshield issues while bounding the matcher's work
# (about 4 s of CPU at the total cap, on a worker thread); /v1/guard/output also requires each
# canary to occur in its chunk's text when the context is sent
MAX_CANARY_CHARS = 64
MAX_CANARIES_PER_CHUNK = 1024
MAX_CANARIES_TOTAL = 2048
_CANARY_SYMBOLS = frozenset(CANARY_ALPHABET)


class _Loose(BaseModel):
    """Accepts (and ignores) fields OpenAI clients send that ragshield does not use."""

    model_config = ConfigDict(extra="allow")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- chat completions: requests ------------------------------------------------------------


class ContentPart(_Loose):
    type: str
    text: str | None = None


class ChatMessageIn(_Loose):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        """The message text; list content must hold text parts only.

        Raises:
            ValueError: a non-text content part (images, audio, ...).
        """
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        pieces: list[str] = []
        for part in self.content:
            if part.type != "text" or part.text is None:
                raise ValueError(f"content parts of type {part.type!r} are not supported; send text")
            pieces.append(part.text)
        return "".join(pieces)


class StreamOptions(_Loose):
    include_usage: bool = False


class ChatCompletionRequest(_Loose):
    """`POST /v1/chat/completions`; the last user message is the query."""

    model: str
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int | None = None
    user: str | None = None


# -- chat completions: responses ------------------------------------------------------------


class VerdictOut(BaseModel):
    """A guard's verdict as JSON (score higher = more suspicious; infinite scores as strings); `risk` is
    the score on the one scale in [0, 1] shared by every guard (0.5 at its threshold, docs/risk.md)."""

    model_config = ConfigDict(ser_json_inf_nan="strings")

    guard: str
    action: str
    score: float
    threshold: float
    risk: float
    reason: str
    evidence: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, verdict: Verdict) -> VerdictOut:
        return cls(
            guard=verdict.guard,
            action=verdict.action.value,
            score=verdict.score,
            threshold=verdict.threshold,
            risk=verdict.risk,
            reason=verdict.reason,
            evidence=dict(verdict.evidence),
        )


class RagshieldInfo(BaseModel):
    """The ragshield extension of a completion: whether (and where) a guard blocked.

    `stage`: `query` (before generation), `output` (during or after generation), `policy`
    (the user is blocked) or None. `verdicts` only when the server sets `expose_verdicts`.
    """

    request_id: str
    blocked: bool
    stage: str | None = None
    verdicts: list[VerdictOut] | None = None


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: str
    logprobs: None = None


class Usage(BaseModel):
    """Tokens of the client's query and of the released answer (the model's tokenizer when the
    generator has one, else whitespace-separated words)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int = Field(default_factory=lambda: int(time.time()))
    model: str
    choices: list[Choice]
    ragshield: RagshieldInfo
    usage: Usage | None = None


class Delta(BaseModel):
    role: Literal["assistant"] | None = None
    content: str | None = None


class ChunkChoice(BaseModel):
    index: int = 0
    delta: Delta
    finish_reason: str | None = None
    logprobs: None = None


class ChatCompletionChunk(BaseModel):
    """One SSE `data:` object of a streamed completion."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    ragshield: RagshieldInfo | None = None
    usage: Usage | None = None


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "ragshield"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorBody(BaseModel):
    """The OpenAI error shape, also sent as the last SSE event of a stream a guard halted."""

    error: ErrorDetail


# -- guard endpoints ------------------------------------------------------------------------


class GuardChunk(_Strict):
    """A chunk the application retrieved: its id, text and cosine similarity to the query."""

    id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    text: str = Field("", max_length=MAX_CHUNK_CHARS)
    similarity: float
    doc_id: str | None = Field(None, max_length=MAX_ID_CHARS)

    @field_validator("similarity")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("similarity must be a finite number (cosine, in [-1, 1])")
        return value

    def chunk(self) -> Chunk:
        return Chunk(id=self.id, doc_id=self.doc_id or self.id, text=self.text)


class GuardQueryRequest(_Strict):
    """`POST /v1/guard/query`: the query and the chunks the application retrieved for it."""

    query: str
    chunks: list[GuardChunk] = Field(default_factory=list, max_length=MAX_GUARD_CHUNKS)
    user: str | None = Field(None, max_length=256)


class GuardQueryResponse(BaseModel):
    """The verdict on a query, and the context to give the model when it is allowed.

    `context` holds the chunks as the model must see them (with canaries when a canary
    defense is configured) and `markers` the canaries per chunk id: send both back with the
    model's answer to `/v1/guard/output`, and never show them to the end user.
    """

    request_id: str
    action: Literal["allow", "block"]
    blocked_by: list[str]
    verdicts: list[VerdictOut]
    context: list[GuardChunk]
    markers: dict[str, list[str]]


class GuardOutputRequest(_Strict):
    """`POST /v1/guard/output`: the model's answer and the context it answered from."""

    query: str
    context: list[GuardChunk] = Field(default_factory=list, max_length=MAX_GUARD_CHUNKS)
    markers: dict[str, list[str]] = Field(default_factory=dict)
    output: str = Field(max_length=MAX_CHUNK_CHARS)
    user: str | None = Field(None, max_length=256)

    @field_validator("markers")
    @classmethod
    def _canaries(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return check_markers(value)


def check_markers(markers: dict[str, list[str]]) -> dict[str, list[str]]:
    """`markers` when every canary could have come from ragshield (see `MAX_CANARY_CHARS`).

    Raises:
        ValueError: more than `MAX_GUARD_CHUNKS` chunk ids, `MAX_CANARIES_PER_CHUNK` canaries in
            one chunk or `MAX_CANARIES_TOTAL` in all; a canary shorter than `MIN_LENGTH` or
            longer than `MAX_CANARY_CHARS`, or with a symbol outside `CANARY_ALPHABET` (the
            message names the chunk and the position, never the canary).
    """
    if len(markers) > MAX_GUARD_CHUNKS:
        raise ValueError(f"markers name at most {MAX_GUARD_CHUNKS} chunks (got {len(markers)})")
    total = 0
    for chunk_id, canaries in markers.items():
        if not 1 <= len(chunk_id) <= MAX_ID_CHARS:
            raise ValueError(f"marker chunk ids have 1 to {MAX_ID_CHARS} characters")
        if len(canaries) > MAX_CANARIES_PER_CHUNK:
            raise ValueError(f"at most {MAX_CANARIES_PER_CHUNK} canaries per chunk (chunk {chunk_id[:64]!r})")
        total += len(canaries)
        if total > MAX_CANARIES_TOTAL:
            raise ValueError(f"at most {MAX_CANARIES_TOTAL} canaries in all")
        for position, canary in enumerate(canaries):
            if not MIN_LENGTH <= len(canary) <= MAX_CANARY_CHARS or not _CANARY_SYMBOLS.issuperset(canary):
                raise ValueError(
                    f"canary {position} of chunk {chunk_id[:64]!r} is not one ragshield issued: canaries have "
                    f"{MIN_LENGTH} to {MAX_CANARY_CHARS} symbols from {CANARY_ALPHABET!r}; send the markers "
                    "/v1/guard/query returned"
                )
    return markers


class GuardOutputResponse(BaseModel):
    """The verdict on an answer; `text` is what may be shown (cut where a guard halted it,
    redacted where a guard redacts; the refusal when blocked)."""

    request_id: str
    action: Literal["allow", "block"]
    blocked_by: list[str]
    verdicts: list[VerdictOut]
    text: str
