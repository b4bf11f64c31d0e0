"""RagPipeline: the one orchestration. Uses FAKE parts (hashing embedder, scripted generator)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from ragshield.errors import InvalidQueryError
from ragshield.generators.scripted import EchoContextGenerator, ScriptedGenerator
from ragshield.guards.base import Defense, threshold_verdict
from ragshield.pipeline import DEFAULT_REFUSAL, RagPipeline
from ragshield.rag.prompting import PromptBuilder
from ragshield.types import Action, GenerationRequest, Query, Response, RetrievalResult, Verdict


@dataclass
class FakeTopScoreGuard:
    """FAKE query guard: blocks when the top similarity is at least `threshold`."""

    threshold: float
    name: str = "fake-top"

    def check(self, retrieval: RetrievalResult) -> Verdict:
        top = retrieval.similarities[0]
        return threshold_verdict(self.name, top, self.threshold, flagged_reason="high", passed_reason="low")


class RaisingGuard:
    name = "raiser"

    def check(self, retrieval: RetrievalResult) -> Verdict:
        raise RuntimeError("secret chunk text must not appear in the verdict")


@dataclass
class FakeWordMonitor:
    """FAKE output monitor: blocks when the produced text contains `word`."""

    word: str
    holdback_chars: int = 0
    text: str = ""

    def observe(self, delta: str) -> Verdict | None:
        self.text += delta
        if self.word in self.text:
            return Verdict("fake-word", Action.BLOCK, 1.0, 1.0, "word seen")
        return None

    def close(self) -> Verdict:
        return Verdict("fake-word", Action.ALLOW, 0.0, 1.0, "clean")

    def redact(self, text: str) -> str:
        return text


@dataclass
class FakeWordGuard:
    word: str
    name: str = "fake-word"

    def open(self, retrieval: RetrievalResult) -> FakeWordMonitor:
        return FakeWordMonitor(self.word, holdback_chars=len(self.word) - 1)


@dataclass
class FakePolicy:
    """FAKE policy: blocks a user after `limit` violations."""

    limit: int = 1
    name: str = "fake-policy"
    violations: dict[str, int] = field(default_factory=dict)

    def blocked_verdict(self, user_id: str) -> Verdict | None:
        if self.violations.get(user_id, 0) >= self.limit:
            return Verdict(self.name, Action.BLOCK, 1.0, 1.0, "user blocked")
        return None

    def record(self, user_id: str, *, violated: bool) -> Verdict | None:
        if violated:
            self.violations[user_id] = self.violations.get(user_id, 0) + 1
        return None


def _pipeline(fake_retriever, generator, defense: Defense = Defense(), **kw) -> RagPipeline:  # type: ignore[no-untyped-def]
    return RagPipeline(fake_retriever, generator, defense=defense, **kw)


def test_answer_carries_retrieval_scores_and_timings(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["the answer"])
    response = _pipeline(fake_retriever, generator).answer("What about headaches?")
    assert response.text == "the answer"
    assert response.retrieval is not None and len(response.retrieval.hits) == 3
    assert response.retrieval.similarities == sorted(response.retrieval.similarities, reverse=True)
    assert {"retrieve", "generate", "total"} <= set(response.timings_ms)
    prompt = generator.requests[0].prompt
    assert (
        prompt is not None
        and prompt.startswith("context: ")
        and prompt.endswith("question: What about headaches?\nanswer:")
    )


@pytest.mark.parametrize("text", ["", "   \n", "x" * 9000])
def test_empty_and_oversize_queries_raise(fake_retriever, text: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidQueryError):
        _pipeline(fake_retriever, ScriptedGenerator()).answer(text)


def test_blocked_query_gets_refusal_without_generation(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["should never be generated"])
    defense = Defense("fake", query_guards=[FakeTopScoreGuard(threshold=-1.0)])
    response = _pipeline(fake_retriever, generator, defense).answer("anything")
    assert response.text == DEFAULT_REFUSAL and response.finish_reason == "blocked"
    assert response.blocked_by == ["fake-top"]
    assert generator.requests == []
    assert response.timings_ms["total"] >= response.timings_ms["retrieve"]  # a refusal's latency counts too


def test_screen_runs_the_query_guards_and_never_generates(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["should never be generated"])
    refusing = _pipeline(fake_retriever, generator, Defense("fake", query_guards=[FakeTopScoreGuard(threshold=-1.0)]))
    refused = refusing.screen("anything")
    assert refused.finish_reason == "blocked" and refused.text == DEFAULT_REFUSAL
    assert refused.blocked_by == ["fake-top"]
    allowing = _pipeline(fake_retriever, generator, Defense("fake", query_guards=[FakeTopScoreGuard(threshold=2.0)]))
    screened = allowing.screen("anything")
    assert screened.finish_reason == "screened" and screened.text == "" and not screened.blocked
    assert screened.retrieval is not None and len(screened.retrieval.hits) == 3
    assert {"retrieve", "guard:fake-top", "total"} <= set(screened.timings_ms)
    assert generator.requests == []


def test_raising_guard_fails_closed_and_says_so(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["x"])
    response = _pipeline(fake_retriever, generator, Defense("r", query_guards=[RaisingGuard()])).answer("q")
    assert response.blocked and response.finish_reason == "blocked"
    verdict = response.verdicts[0]
    assert "failing closed" in verdict.reason and "secret" not in verdict.reason
    open_response = _pipeline(
        fake_retriever, generator, Defense("r", query_guards=[RaisingGuard()], fail_closed=False)
    ).answer("q")
    assert not open_response.blocked and "failing open" in open_response.verdicts[0].reason


@pytest.mark.parametrize("delta_chars", [1, 2, 3, 5, 50])
def test_output_block_halts_stream_before_the_word_reaches_the_client(fake_retriever, delta_chars: int) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["harmless prefix then SECRETWORD and more text"], delta_chars=delta_chars)
    pipeline = _pipeline(fake_retriever, generator, Defense("w", output_guards=[FakeWordGuard("SECRETWORD")]))
    items = list(pipeline.stream("q"))
    released = "".join(item for item in items if isinstance(item, str))
    final = items[-1]
    assert isinstance(final, Response)
    assert "SECR" not in released  # not even a prefix of the blocked word leaks
    assert final.text == released and final.finish_reason == "blocked"
    assert "harmless" in released or delta_chars == 50


def test_clean_stream_is_released_completely(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    text = "a clean answer with nothing to hide"
    generator = ScriptedGenerator([text], delta_chars=3)
    pipeline = _pipeline(fake_retriever, generator, Defense("w", output_guards=[FakeWordGuard("SECRETWORD")]))
    items = list(pipeline.stream("q"))
    assert "".join(i for i in items if isinstance(i, str)) == text
    assert items[-1].text == text and items[-1].finish_reason == "stop"  # type: ignore[union-attr]


class DyingGenerator:
    """FAKE generator that dies mid-stream, like a crashed model server."""

    name = "dying"

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        yield "partial "
        raise ConnectionError("server went away")


def test_generator_dying_mid_stream_ends_cleanly(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    response = _pipeline(fake_retriever, DyingGenerator()).answer("q")
    assert response.finish_reason == "error" and response.error == "ConnectionError"
    assert response.text == "partial "


def test_policy_blocks_a_user_after_violations_only_that_user(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    policy = FakePolicy(limit=1)
    defense = Defense("fake", query_guards=[FakeTopScoreGuard(threshold=-1.0)])
    pipeline = _pipeline(fake_retriever, ScriptedGenerator(["ok"]), defense, policy=policy)
    first = pipeline.answer(Query("attack", user_id="mallory"))
    assert first.finish_reason == "blocked"
    second = pipeline.with_defense(Defense()).answer(Query("benign", user_id="mallory"))
    assert second.finish_reason == "refused" and second.blocked_by == ["fake-policy"]
    other = pipeline.with_defense(Defense()).answer(Query("benign", user_id="alice"))
    assert other.text == "ok"


def test_echo_context_generator_copies_only_the_context(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    response = _pipeline(fake_retriever, EchoContextGenerator()).answer("q")
    assert response.retrieval is not None
    assert response.retrieval.hits[0].chunk.text[:100] in response.text
    assert "question:" not in response.text


def test_chat_layout_has_system_prompt(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["ok"])
    _pipeline(fake_retriever, generator, prompt_builder=PromptBuilder(layout="chat")).answer("q")
    request = generator.requests[0]
    assert request.prompt is None and request.messages[0].role == "system"
    assert "Question: q" in request.messages[1].content


@dataclass
class RaisingRedactGuard:
    """FAKE output guard whose monitor's redact() raises."""

    name: str = "bad-redactor"

    def open(self, retrieval: RetrievalResult) -> FakeWordMonitor:
        monitor = FakeWordMonitor("never-seen")

        def boom(text: str) -> str:
            raise RuntimeError("redactor crashed")

        monitor.redact = boom  # type: ignore[method-assign]
        return monitor


def test_raising_redactor_withholds_text_and_fails_closed(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    pipeline = _pipeline(
        fake_retriever, ScriptedGenerator(["some text"]), Defense("r", output_guards=[RaisingRedactGuard()])
    )
    response = pipeline.answer("q")
    assert response.text == "" and response.finish_reason == "blocked"
    assert response.blocked_by == ["bad-redactor"] and "guard:bad-redactor" in response.timings_ms


def test_a_halting_monitor_is_recorded_once(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    generator = ScriptedGenerator(["text then SECRETWORD"], delta_chars=4)
    pipeline = _pipeline(fake_retriever, generator, Defense("w", output_guards=[FakeWordGuard("SECRETWORD")]))
    response = pipeline.answer("q")
    assert [verdict.guard for verdict in response.verdicts] == ["fake-word"]


class FakeCutGenerator:
    """FAKE generator: a few deltas, then the empty `StreamEnd("length")` marker a backend sends
    when max_tokens cut the answer."""

    name = "fake-cut"

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        from ragshield.generators.base import StreamEnd

        yield from ("The answer ", "was cut")
        yield StreamEnd("length")


def test_an_answer_cut_by_the_token_limit_says_length(fake_retriever) -> None:  # type: ignore[no-untyped-def]
    items = list(_pipeline(fake_retriever, FakeCutGenerator()).stream(Query("what helps a cough?")))
    final = items[-1]
    assert isinstance(final, Response)
    assert final.text == "The answer was cut" and final.finish_reason == "length"
    assert "".join(item for item in items[:-1] if isinstance(item, str)) == "The answer was cut"


def test_a_cancelled_answer_stops_within_one_delta_and_is_not_counted_for_the_user() -> None:
    from ragshield.generators.base import CancelToken, cancel_scope
    from ragshield.guards.policy import MemoryStore, SlidingWindowPolicy
    from ragshield.types import Query as _Query

    class _Retriever:  # FAKE retriever (unit test): no chunks
        def retrieve(self, query: _Query, k: int) -> object:
            from ragshield.types import RetrievalResult

            return RetrievalResult(query, ())

    token = CancelToken()
    produced: list[str] = []

    class _Words:  # FAKE model: cancels its caller after three words
        name = "fake-words"

        def stream(self, request: object):  # type: ignore[no-untyped-def]
            for number in range(100):
                if number == 3:
                    token.cancel()
                produced.append("w")
                yield "word "

    class _RecordingPolicy(SlidingWindowPolicy):  # FAKE-ish: the real policy, counting its records
        recorded = 0

        def record(self, user_id: str, *, violated: bool) -> object:  # type: ignore[override]
            type(self).recorded += 1
            return super().record(user_id, violated=violated)

    pipeline = RagPipeline(_Retriever(), _Words(), policy=_RecordingPolicy(MemoryStore(), window=5, k=1))  # type: ignore[arg-type]
    with cancel_scope(token):
        response = pipeline.answer(_Query("hello", user_id="gone"))
    assert response.finish_reason == "cancelled"
    assert len(produced) <= 5
    assert _RecordingPolicy.recorded == 0  # an answer never delivered is not a query of the user's window
    pipeline.answer(_Query("hello", user_id="gone"))
    assert _RecordingPolicy.recorded == 1
