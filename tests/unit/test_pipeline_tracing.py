"""OpenTelemetry spans of the pipeline stages (FAKE parts; the SDK's in-memory exporter).

The spans must describe a request (which stages ran, how long, which guard decided what) without
carrying what the request is about: no query text, chunk text or canary in any attribute.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest

from ragshield.generators.scripted import EchoContextGenerator
from ragshield.guards.base import Defense
from ragshield.pipeline import RagPipeline
from ragshield.pipeline.tracing import active_tracer
from ragshield.types import Action, Query, Response, RetrievalResult, Verdict

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk is not installed (extra 'dev')")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

CANARY = "zq7-canary-81f2e0"
QUERY = "what helps with a stiff neck in the morning"


@dataclass
class FakeCanaryDecorator:
    """FAKE decorator: writes CANARY into the first retrieved chunk (the copying model repeats it)."""

    name: str = "fake-canary"

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        first, *rest = retrieval.hits
        marked = replace(first, chunk=replace(first.chunk, text=f"{CANARY} {first.chunk.text}"))
        return replace(retrieval, hits=(marked, *rest), markers={first.chunk.id: (CANARY,)})


@dataclass
class FakeCanaryMonitor:
    """FAKE output guard and monitor: blocks when CANARY is produced."""

    name: str = "fake-canary"
    holdback_chars: int = len(CANARY) - 1
    text: str = ""

    def open(self, retrieval: RetrievalResult) -> FakeCanaryMonitor:
        return FakeCanaryMonitor()

    def observe(self, delta: str) -> Verdict | None:
        self.text += delta
        return Verdict(self.name, Action.BLOCK, 1.0, 1.0, "canary seen") if CANARY in self.text else None

    def close(self) -> Verdict:
        return Verdict(self.name, Action.ALLOW, 0.0, 1.0, "clean")


@dataclass
class FakeAllowPolicy:
    """FAKE per-user policy that never blocks."""

    name: str = "fake-policy"

    def blocked_verdict(self, user_id: str) -> Verdict | None:
        return None

    def record(self, user_id: str, *, violated: bool) -> Verdict | None:
        return None


CANARY_DEFENSE = Defense("canary-fake", decorators=[FakeCanaryDecorator()], output_guards=[FakeCanaryMonitor()])


def _traced(fake_retriever: Any, defense: Defense = CANARY_DEFENSE) -> tuple[RagPipeline, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    pipeline = RagPipeline(
        fake_retriever, EchoContextGenerator(), defense=defense, policy=FakeAllowPolicy(), tracer_provider=provider
    )
    return pipeline, exporter


def test_each_stage_is_a_child_span_of_the_request(fake_retriever: Any) -> None:
    pipeline, exporter = _traced(fake_retriever)
    response = pipeline.answer(Query(QUERY, user_id="alice"))
    assert response.finish_reason == "blocked" and CANARY not in response.text
    spans = {span.name: span for span in exporter.get_finished_spans()}
    stages = {"policy", "retrieve", "query_guards", "decorate", "open", "generate", "close", "record"}
    assert {f"ragshield.{stage}" for stage in stages} | {"ragshield.request"} == set(spans)
    request = spans.pop("ragshield.request")
    assert all(span.parent is not None and span.parent.span_id == request.context.span_id for span in spans.values())
    assert request.attributes is not None
    assert request.attributes["ragshield.finish_reason"] == "blocked"
    assert tuple(request.attributes["ragshield.blocked_by"]) == ("fake-canary",)
    assert request.attributes["ragshield.query.id"] == response.query.id
    assert request.attributes["ragshield.timing_ms.total"] == response.timings_ms["total"]
    assert tuple(spans["ragshield.generate"].attributes["ragshield.verdicts"]) == ("fake-canary:block",)  # type: ignore[index]


def test_spans_carry_no_query_text_chunk_text_or_canary(fake_retriever: Any) -> None:
    pipeline, exporter = _traced(fake_retriever)
    response: Response = pipeline.answer(Query(QUERY, user_id="alice"))
    assert response.retrieval is not None
    chunk_texts = [hit.chunk.text for hit in response.retrieval.hits]
    values = [str(value) for span in exporter.get_finished_spans() for value in (span.attributes or {}).values()]
    assert values
    for value in values:
        assert QUERY not in value and CANARY not in value and "alice" not in value
        assert not any(len(value) >= 12 and value in text for text in chunk_texts)


def test_an_abandoned_stream_still_ends_its_request_span(fake_retriever: Any) -> None:
    pipeline, exporter = _traced(fake_retriever, Defense())
    stream = pipeline.stream(Query(QUERY))
    assert isinstance(next(stream), str)  # the client reads one piece and goes away
    stream.close()
    assert "ragshield.request" in {span.name for span in exporter.get_finished_spans()}


def test_without_a_configured_sdk_no_span_is_created() -> None:
    # the tests never install a global tracer provider: the API's default drops every span
    assert active_tracer(None) is None
