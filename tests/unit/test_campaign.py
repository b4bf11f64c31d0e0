"""The campaign engine against FAKE targets (in-process, no network) and the local pipeline
with the FAKE retrieval stack: same queries as `run_attack`, retries, limits, resume."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragshield.attacks import make_attack, run_attack
from ragshield.attacks.rag_thief_jiang_2024 import RagThiefJiang2024
from ragshield.campaign import CampaignAborted, CampaignJob, CampaignSettings, Journal, run_campaign, run_campaigns
from ragshield.errors import ConfigError
from ragshield.generators.scripted import EchoContextGenerator, ScriptedGenerator
from ragshield.pipeline import RagPipeline
from ragshield.targets.base import TargetError, TargetReply
from ragshield.targets.local import LocalTarget
from ragshield.types import ChatMessage

CONTINUATIONS = "\n".join(f"{i}. continuation number {i} " + "word " * 5 for i in range(1, 11))


class FakeTarget:
    """FAKE target: answers `echo: <query>` after `delay_s`; the first attempt at every
    `busy_every`-th distinct query gets a 429 with `Retry-After: retry_after`."""

    name = "fake"
    url = "fake://target"

    def __init__(self, *, delay_s: float = 0.0, busy_every: int = 0, retry_after: float | None = 0.01) -> None:
        self.delay_s = delay_s
        self.busy_every = busy_every
        self.retry_after = retry_after
        self.calls: list[tuple[str, tuple[ChatMessage, ...]]] = []
        self.starts: list[float] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def send(self, query: str, history: Sequence[ChatMessage] = ()) -> TargetReply:
        self.starts.append(time.monotonic())
        first = all(text != query for text, _ in self.calls)
        self.calls.append((query, tuple(history)))
        if self.busy_every and first and len(self.calls) % self.busy_every == 0:
            raise TargetError(
                "fake://target answered HTTP 429", retryable=True, retry_after=self.retry_after, status=429
            )
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight -= 1
        return TargetReply(f"echo: {query}")

    async def aclose(self) -> None:
        return None


def job(tmp_path: Path, attack: Any, budget: int, seed: int = 0, name: str = "t.jsonl") -> CampaignJob:
    journal = Journal(
        tmp_path / name,
        header={"kind": "attack", "name": attack.name, "defense": "fake", "seed": seed},
        identity={"attack": attack.name, "seed": seed},
    )
    return CampaignJob(attack, budget, journal, seed)


def make(name: str) -> Any:
    """TGTB (a pool attack) or RAG-Thief with a FAKE scripted attacker LLM (a conversation)."""
    if name == "rag-thief":
        return RagThiefJiang2024(attacker=ScriptedGenerator([CONTINUATIONS]))
    return make_attack(name)


@pytest.mark.parametrize("name", ["tgtb", "rag-thief"])
def test_local_campaign_matches_run_attack(fake_retriever: object, tmp_path: Path, name: str) -> None:
    pipeline = RagPipeline(fake_retriever, EchoContextGenerator(), k=2)  # type: ignore[arg-type]
    local = run_attack(make(name), pipeline, budget=10, seed=3)
    campaign, stats = run_campaign(
        job(tmp_path, make(name), 10, seed=3), LocalTarget(pipeline), CampaignSettings(concurrency=4)
    )
    assert [(r.query.id, r.query.text, r.text) for r in campaign.responses] == [
        (r.query.id, r.query.text, r.text) for r in local.responses
    ]
    assert stats.answered == 10 and stats.failed == 0


def test_429_is_retried_with_retry_after_and_every_query_completes(tmp_path: Path) -> None:
    target = FakeTarget(busy_every=5, retry_after=0.05)
    transcript, stats = run_campaign(
        job(tmp_path, make_attack("tgtb"), 40), target, CampaignSettings(concurrency=8, initial_wait_s=0.01)
    )
    assert len(transcript.responses) == 40 and stats.failed == 0
    assert stats.retries == stats.statuses["429"] > 0
    assert [r.query.id for r in transcript.responses] == [f"tgtb-0-{n:05d}" for n in range(40)]


def test_in_flight_and_rate_limits_hold(tmp_path: Path) -> None:
    target = FakeTarget(delay_s=0.05)
    run_campaign(job(tmp_path, make_attack("tgtb"), 24), target, CampaignSettings(concurrency=3))
    assert target.most_in_flight == 3
    target = FakeTarget()
    run_campaign(job(tmp_path, make_attack("tgtb"), 11, name="r.jsonl"), target, CampaignSettings(rate=50.0))
    gaps = [b - a for a, b in zip(target.starts, target.starts[1:], strict=False)]
    # the limiter grants starts 1/50 s apart; the target sees them a little later, with the
    # event loop's jitter (a few ms on a busy machine), so: the span holds and nothing bunches
    assert target.starts[-1] - target.starts[0] >= 10 * 0.02 - 0.002
    assert min(gaps) >= 0.01


def test_multi_turn_sends_earlier_turns_in_order(tmp_path: Path) -> None:
    target = FakeTarget()
    transcript, _ = run_campaign(
        job(tmp_path, make_attack("tgtb"), 5), target, CampaignSettings(concurrency=8, history=2)
    )
    texts = [r.query.text for r in transcript.responses]
    assert [call[1] for call in target.calls][:3] == [
        (),
        (ChatMessage("user", texts[0]), ChatMessage("assistant", f"echo: {texts[0]}")),
        (
            ChatMessage("user", texts[0]),
            ChatMessage("assistant", f"echo: {texts[0]}"),
            ChatMessage("user", texts[1]),
            ChatMessage("assistant", f"echo: {texts[1]}"),
        ),
    ]
    assert len(target.calls[4][1]) == 4  # at most `history` earlier turns


class DownTarget(FakeTarget):
    async def send(self, query: str, history: Sequence[ChatMessage] = ()) -> TargetReply:
        raise TargetError("http://127.0.0.1:9/v1 failed (ConnectError: refused)", retryable=True, unreachable=True)


def test_unreachable_target_aborts_naming_url_and_cause(tmp_path: Path) -> None:
    settings = CampaignSettings(retries=1, initial_wait_s=0.001, max_failures_in_row=3)
    with pytest.raises(CampaignAborted) as caught:
        run_campaign(job(tmp_path, make_attack("tgtb"), 20), DownTarget(), settings)
    assert "fake://target" in str(caught.value) and "ConnectError" in str(caught.value)
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    assert len(lines) == 1  # only the header: nothing answered, nothing recorded


@pytest.mark.parametrize("name", ["tgtb", "rag-thief"])
def test_resume_after_cancel_loses_and_repeats_nothing(tmp_path: Path, name: str) -> None:
    """Cancelled at a random point (what Ctrl-C does), then rerun: each query answered once,
    and the queries are those of an uninterrupted run."""
    reference, _ = run_campaign(job(tmp_path, make(name), 30, name="ref.jsonl"), FakeTarget(), CampaignSettings())
    target = FakeTarget(delay_s=0.004)
    first = job(tmp_path, make(name), 30)
    stop_at = random.Random().randrange(1, len(reference.responses) - 1)

    async def interrupted() -> None:
        reached = asyncio.Event()

        def progress(done: int, total: int) -> None:
            if done >= stop_at:
                reached.set()

        task = asyncio.create_task(run_campaigns([first], target, CampaignSettings(concurrency=4), progress=progress))
        await reached.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    answered_first = len(first.journal.answered)
    assert 0 < answered_first < len(reference.responses)
    transcript, stats = run_campaign(job(tmp_path, make(name), 30), target, CampaignSettings(concurrency=4))
    assert stats.resumed == answered_first
    assert [(r.query.id, r.query.text) for r in transcript.responses] == [
        (r.query.id, r.query.text) for r in reference.responses
    ]
    rows = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()[1:]]
    assert sorted(row["number"] for row in rows) == list(range(len(reference.responses)))  # none lost or twice
    sent = [text for text, _ in target.calls]
    assert len(sent) - len(set(sent)) <= 4  # only the queries in flight at the cancel were sent twice


def test_journal_of_another_campaign_is_refused_and_cut_line_dropped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    run_campaign(job(tmp_path, make_attack("tgtb"), 3), FakeTarget(), CampaignSettings())
    with path.open("a") as handle:
        handle.write('{"query": {"text": "cut by a ki')
    reopened = job(tmp_path, make_attack("tgtb"), 3)
    assert sorted(reopened.journal.answered) == [0, 1, 2]
    assert path.read_text().endswith("}\n")
    with pytest.raises(ConfigError, match="another campaign"):
        job(tmp_path, make_attack("tgtb"), 3, seed=9)
