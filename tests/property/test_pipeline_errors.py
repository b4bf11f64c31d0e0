"""The pipeline's one error path: a defense part that raises, at any stage and at any call, is
handled the same way (FAKE parts: a fixed retriever, a scripted generator, a faulty defense part).

* failing closed (the default): one BLOCK error verdict naming only the exception type, the
  request halts (a refusal before generation, nothing more released during it), and the user's
  policy window records one violation, exactly like a guard that blocked;
* failing open: one ALLOW error verdict, the part is skipped from then on, the answer goes on,
  and nothing is recorded against the user;
* either way a secret the output guards watch for never reaches the client, the response text is
  exactly what was streamed, and the policy records each request once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import Defense, Withheld
from ragshield.pipeline import DEFAULT_REFUSAL, RagPipeline
from ragshield.types import Action, Chunk, Query, Response, RetrievalResult, ScoredChunk, Verdict

PARTS = ("rewrite", "check", "decorate", "open", "observe", "withheld", "redact", "close")
BEFORE_GENERATION = ("rewrite", "check", "decorate", "open")
TIMING_KEY = {"rewrite": "rewrite:faulty", "decorate": "decorate:faulty"}  # the others: guard:faulty
SECRET = "SECRETWORD"
LEAKED_MESSAGE = "canary-7f3a9"  # in the exception message: must never reach a verdict


class FixedRetriever:
    """FAKE retriever: the same three chunks for every query."""

    def retrieve(self, query: Query, k: int) -> RetrievalResult:
        chunks = [Chunk(f"c{i}", f"d{i}", f"record {i} text") for i in range(3)]
        return RetrievalResult(query, tuple(ScoredChunk(chunk, 0.9 - 0.1 * i, i) for i, chunk in enumerate(chunks)))


@dataclass
class FaultyPart:
    """FAKE defense part of every kind (rewriter, query guard, decorator, output guard and its own
    monitor) whose method `fails` raises on its `on_call`-th call; every other call behaves."""

    fails: str
    on_call: int = 1
    name: str = "faulty"
    holdback_chars: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    fired: bool = False

    def _call(self, part: str) -> None:
        self.calls[part] = self.calls.get(part, 0) + 1
        if part == self.fails and self.calls[part] == self.on_call:
            self.fired = True
            raise RuntimeError(f"failed near {LEAKED_MESSAGE}")

    def rewrite(self, query: Query) -> Query:
        self._call("rewrite")
        return query

    def check(self, retrieval: RetrievalResult) -> Verdict:
        self._call("check")
        return Verdict(self.name, Action.ALLOW, 0.0, 1.0, "fine")

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        self._call("decorate")
        return retrieval

    def open(self, retrieval: RetrievalResult) -> FaultyPart:
        self._call("open")
        return self

    def observe(self, delta: str) -> Verdict | None:
        self._call("observe")
        return None

    def withheld(self, start: int, end: int) -> list[Withheld]:
        self._call("withheld")
        return []

    def redact(self, text: str) -> str:
        self._call("redact")
        return text

    def close(self) -> Verdict:
        self._call("close")
        return Verdict(self.name, Action.ALLOW, 0.0, 1.0, "clean")


@dataclass
class SecretWordGuard:
    """FAKE output guard: blocks once the produced text contains SECRET (holds back its length - 1)."""

    name: str = "secret-word"
    holdback_chars: int = len(SECRET) - 1
    text: str = ""

    def open(self, retrieval: RetrievalResult) -> SecretWordGuard:
        return SecretWordGuard()

    def observe(self, delta: str) -> Verdict | None:
        self.text += delta
        return Verdict(self.name, Action.BLOCK, 1.0, 1.0, "secret seen") if SECRET in self.text else None

    def close(self) -> Verdict:
        return Verdict(self.name, Action.ALLOW, 0.0, 1.0, "clean")


@dataclass
class RecordingPolicy:
    """FAKE per-user policy: never blocks, remembers every `record` call's `violated`."""

    name: str = "fake-policy"
    recorded: list[bool] = field(default_factory=list)

    def blocked_verdict(self, user_id: str) -> Verdict | None:
        return None

    def record(self, user_id: str, *, violated: bool) -> Verdict | None:
        self.recorded.append(violated)
        return None


def _run(
    part: FaultyPart, text: str, *, fail_closed: bool, delta_chars: int = 4
) -> tuple[str, Response, RecordingPolicy, ScriptedGenerator]:
    """(released text, final response, policy, generator) of one streamed request."""
    defense = Defense(
        "faulty",
        rewriters=[part],
        query_guards=[part],
        decorators=[part],
        output_guards=[part, SecretWordGuard()],
        fail_closed=fail_closed,
    )
    policy, generator = RecordingPolicy(), ScriptedGenerator([text], delta_chars=delta_chars)
    pipeline = RagPipeline(FixedRetriever(), generator, defense=defense, policy=policy)
    items = list(pipeline.stream(Query("q", user_id="u")))
    response = items[-1]
    assert isinstance(response, Response)
    return "".join(item for item in items[:-1] if isinstance(item, str)), response, policy, generator


def _error_verdicts(response: Response) -> list[Verdict]:
    return [verdict for verdict in response.verdicts if "error_type" in verdict.evidence]


@pytest.mark.parametrize("fails", PARTS)
def test_a_failing_part_fails_closed_the_same_way_at_every_stage(fails: str) -> None:
    released, response, policy, generator = _run(FaultyPart(fails), "a clean answer", fail_closed=True)
    (error,) = _error_verdicts(response)
    assert error.guard == "faulty" and error.action is Action.BLOCK
    assert error.reason == "guard error (RuntimeError); failing closed (blocked)"
    assert LEAKED_MESSAGE not in repr(response.verdicts)
    assert response.finish_reason == "blocked" and "faulty" in response.blocked_by
    assert policy.recorded == [True]  # one violation, as for any block
    assert TIMING_KEY.get(fails, "guard:faulty") in response.timings_ms
    if fails in BEFORE_GENERATION:
        assert response.text == DEFAULT_REFUSAL and generator.requests == []
    elif fails != "close":  # close runs after the stream: what was checked and released stays released
        assert released == response.text == ""


@pytest.mark.parametrize("fails", PARTS)
def test_a_failing_part_fails_open_the_same_way_at_every_stage(fails: str) -> None:
    released, response, policy, _ = _run(FaultyPart(fails), "a clean answer", fail_closed=False)
    (error,) = _error_verdicts(response)
    assert error.guard == "faulty" and error.action is Action.ALLOW
    assert error.reason == "guard error (RuntimeError); failing open (allowed)"
    assert response.finish_reason == "stop" and not response.blocked
    assert released == response.text == "a clean answer"
    assert policy.recorded == [False]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fails=st.sampled_from(PARTS),
    on_call=st.integers(1, 6),
    fail_closed=st.booleans(),
    words=st.lists(st.sampled_from(("fever", "cough", "rest", "water", "sleep")), min_size=1, max_size=12),
    secret_at=st.one_of(st.none(), st.integers(0, 12)),
    delta_chars=st.integers(1, 9),
)
def test_whatever_part_fails_and_when_the_error_path_is_one(
    fails: str, on_call: int, fail_closed: bool, words: list[str], secret_at: int | None, delta_chars: int
) -> None:
    if secret_at is not None:
        words.insert(min(secret_at, len(words)), SECRET)
    part = FaultyPart(fails, on_call)
    released, response, policy, _ = _run(part, " ".join(words), fail_closed=fail_closed, delta_chars=delta_chars)

    assert SECRET[:4] not in released  # not even a prefix of the watched secret leaks
    assert released == response.text or (released == "" and response.text == DEFAULT_REFUSAL)
    errors = _error_verdicts(response)
    assert len(errors) == int(part.fired)  # one verdict per failure, none without one
    assert policy.recorded == [response.blocked]  # one record per request: violated iff something blocked
    if part.fired and fail_closed:
        assert "faulty" in response.blocked_by and response.finish_reason == "blocked"
    if part.fired and not fail_closed:
        assert "faulty" not in response.blocked_by
        assert response.blocked == (SECRET in words)
