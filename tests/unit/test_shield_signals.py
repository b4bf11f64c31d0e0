"""`shield` answers a flagged query; only a confident flag counts towards per-user blocking.

A flag below `count_at` still marks the request as flagged (its context gets canaries), and a
guard error still fails closed. Guards here are FAKES with a fixed score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from ragshield.errors import ConfigError
from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import INTENT_FLAG, INTENT_SIGNAL, Defense, error_verdict, threshold_verdict
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.guards.layered import COUNT_AT, SignalOnly
from ragshield.guards.policy import make_policy
from ragshield.pipeline import RagPipeline
from ragshield.types import Action, Query, RetrievalResult, Verdict

THRESHOLD = 0.76


@dataclass
class FixedScoreGuard:
    """FAKE query guard: scores every query `score` against `THRESHOLD`."""

    score: float
    name: str = "intent"

    def check(self, retrieval: RetrievalResult) -> Verdict:
        return threshold_verdict(self.name, self.score, THRESHOLD, flagged_reason="flagged", passed_reason="passed")


@dataclass
class SignalRecorder:
    """FAKE context decorator: records which requests arrive flagged (what `shield`'s canaries read)."""

    name: str = "recorder"
    seen: list[tuple[str, ...]] = field(default_factory=list)

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        self.seen.append(retrieval.signals)
        return retrieval


def _check(score: float, count_at: float) -> Verdict:
    return SignalOnly(FixedScoreGuard(score), count_at).check(RetrievalResult(Query("q"), ()))


def test_a_confident_flag_is_answered_and_counts_towards_blocking() -> None:
    verdict = _check(0.99, COUNT_AT)
    assert verdict.action is Action.ALLOW
    assert verdict.evidence[INTENT_SIGNAL] is True and verdict.evidence[INTENT_FLAG] is True
    assert "counts towards per-user blocking" in verdict.reason


def test_a_flag_below_the_bar_is_answered_flagged_and_not_counted() -> None:
    verdict = _check(0.80, COUNT_AT)
    assert verdict.action is Action.ALLOW
    assert verdict.evidence[INTENT_FLAG] is True and INTENT_SIGNAL not in verdict.evidence
    assert "not counted towards per-user blocking" in verdict.reason
    assert _check(0.80, 0.0).evidence[INTENT_SIGNAL] is True  # count_at 0: every flag counts


def test_an_unflagged_query_and_a_guard_error_keep_their_verdicts() -> None:
    passed = _check(0.10, COUNT_AT)
    assert passed.action is Action.ALLOW and INTENT_FLAG not in passed.evidence

    class Raising(FixedScoreGuard):
        def check(self, retrieval: RetrievalResult) -> Verdict:
            return error_verdict(self.name, RuntimeError("boom"), fail_closed=True)

    failed = SignalOnly(Raising(0.0), COUNT_AT).check(RetrievalResult(Query("q"), ()))
    assert failed.action is Action.BLOCK  # a failing guard still fails closed


@pytest.mark.parametrize(("score", "blocked_after"), [(0.99, 2), (0.80, None)])
def test_the_policy_blocks_on_confident_flags_only(
    fake_retriever: Any, score: float, blocked_after: int | None
) -> None:
    recorder = SignalRecorder()
    defense = Defense(
        name="signals-fake", query_guards=(SignalOnly(FixedScoreGuard(score), COUNT_AT),), decorators=(recorder,)
    )
    pipeline = RagPipeline(
        fake_retriever, ScriptedGenerator(["fine"]), defense=defense, policy=make_policy(window=5, k=2)
    )
    finishes = [pipeline.answer(Query("please list every record", user_id="u")).finish_reason for _ in range(4)]
    refused = [number for number, finish in enumerate(finishes, 1) if finish == "refused"]
    assert (refused[0] - 1 if refused else None) == blocked_after
    assert all(signals == ("intent",) for signals in recorder.seen)  # every answered one arrived flagged


def test_shield_takes_count_at_and_rejects_what_is_not_a_probability(fake_retriever: Any) -> None:
    context = DefenseContext(retriever=fake_retriever, embedder=fake_retriever.embedder)
    defense = build_defense("shield", context, {"shield": {"intent": {"count_at": 0.5}}})
    assert [guard.count_at for guard in defense.query_guards] == [0.5]  # type: ignore[attr-defined]
    assert build_defense("shield", context).query_guards[0].count_at == COUNT_AT  # type: ignore[attr-defined]
    for bad in (1.0, 1.5, -0.1, "high", True):
        with pytest.raises(ConfigError, match="count_at must be a probability"):
            build_defense("shield", context, {"shield": {"intent": {"count_at": bad}}})
    with pytest.raises(ConfigError, match="with refuse: true every flag is refused"):
        build_defense("shield", context, {"shield": {"intent": {"refuse": True, "count_at": 0.5}}})
