"""Optional OpenTelemetry spans of the pipeline stages.

One span per request (`ragshield.request`) with a child per stage (`ragshield.policy`,
`ragshield.rewrite`, `ragshield.retrieve`, `ragshield.query_guards`, `ragshield.decorate`,
`ragshield.open`, `ragshield.generate`, `ragshield.close`, `ragshield.record`). The request span
is a child of whatever span is current when the request starts (e.g. the web framework's).

Spans carry ids, counts, durations and verdict names only: never the query text, chunk text,
canaries or PII, and never an exception message (only its type). Without `opentelemetry-api`
(extra `tracing`), or while no SDK tracer provider is configured, no span object is created at
all. Spans are started without being made current, so they survive a stream consumed across
threads or abandoned part-way (an abandoned request's span still ends).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ragshield.types import Query, Response, Verdict

trace: Any
try:
    from opentelemetry import trace
except ImportError:  # the extra `tracing` is not installed: every span is the no-op below
    trace = None

TRACER_NAME = "ragshield.pipeline"
AttributeValue = str | int | float | bool | Sequence[str] | Sequence[int]


def active_tracer(provider: Any) -> Any:
    """The tracer of `provider` (else the global one), or None when nothing would record spans."""
    if trace is None:
        return None
    if provider is None:
        provider = trace.get_tracer_provider()
        # the API's defaults drop every span: skip creating them
        if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
            return None
    return provider.get_tracer(TRACER_NAME)


def verdict_names(verdicts: Sequence[Verdict]) -> list[str]:
    """`guard:action` for each verdict, e.g. `intent:block` (names only, no reasons or evidence)."""
    return [f"{verdict.guard}:{verdict.action.value}" for verdict in verdicts]


class StageSpan:
    """One stage's span; every method is a no-op when tracing is off."""

    def __init__(self, span: Any) -> None:
        self._span = span

    def set(self, key: str, value: AttributeValue) -> None:
        """Set the attribute `ragshield.<key>` (ids, counts and names only)."""
        if self._span is not None:
            self._span.set_attribute(f"ragshield.{key}", value)

    def error(self, error: BaseException) -> None:
        """Mark the span failed, naming only the exception type (messages can quote chunk text)."""
        if self._span is not None and trace is not None:
            self._span.set_attribute("error.type", type(error).__name__)
            self._span.set_status(trace.Status(trace.StatusCode.ERROR))

    def verdicts(self, verdicts: Sequence[Verdict]) -> None:
        """Name the verdicts the stage added (`ragshield.verdicts`)."""
        if verdicts:
            self.set("verdicts", verdict_names(verdicts))


class RequestSpans:
    """The spans of one request; `tracer_provider` None means the global provider."""

    def __init__(self, query: Query, defense: str, *, tracer_provider: Any = None) -> None:
        tracer = active_tracer(tracer_provider)
        self._tracer = tracer
        self._root = None
        self._context = None
        if tracer is not None:
            attributes = {"ragshield.query.id": query.id, "ragshield.defense": defense}
            self._root = tracer.start_span("ragshield.request", attributes=attributes)
            self._context = trace.set_span_in_context(self._root) if trace is not None else None

    @contextmanager
    def stage(self, name: str) -> Iterator[StageSpan]:
        """A child span for one stage, ended however the stage ends."""
        if self._tracer is None:
            yield StageSpan(None)
            return
        span = self._tracer.start_span(f"ragshield.{name}", context=self._context)
        try:
            yield StageSpan(span)
        finally:
            span.end()

    def finish(self, response: Response) -> None:
        """End the request span with the outcome: finish reason, blocking guards, sizes."""
        if self._root is None:
            return
        self._root.set_attribute("ragshield.finish_reason", response.finish_reason)
        self._root.set_attribute("ragshield.blocked_by", response.blocked_by)
        self._root.set_attribute("ragshield.verdicts", verdict_names(response.verdicts))
        self._root.set_attribute("ragshield.response.chars", len(response.text))
        if response.retrieval is not None:
            self._root.set_attribute("ragshield.retrieval.hits", len(response.retrieval.hits))
        for stage, milliseconds in response.timings_ms.items():
            self._root.set_attribute(f"ragshield.timing_ms.{stage}", milliseconds)
        self.end()

    def end(self) -> None:
        """End the request span (idempotent; `finish` calls it; a stream abandoned early needs it)."""
        if self._root is not None:
            self._root.end()
            self._root = None
