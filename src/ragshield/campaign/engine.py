"""The campaign engine: drive attacks against a `Target` concurrently, politely and resumably.

How adaptive attacks stay correct with many requests in flight: an attack whose queries do
not depend on the answers (a `PoolAttack`: TGTB, PIDE, the canary attacks) is expanded into its
whole query list up front, and those queries are independent, so up to `concurrency` of them
are in flight at once. An attack that learns from answers (RAG-Thief, Pirates) is one
conversation: its next query is asked for only after the previous answer arrived, exactly as
`run_attack` does, so it is never fed answers out of order. Several attacks run side by side
(`run_campaigns`), sharing the in-flight limit and the rate limit. When `history` > 0 every
attack is a conversation (turn n carries the answers to turns before it), so it runs in order.

The attack sees the same (query, answer) pairs and draws from the same `random.Random(seed)`
as under `run_attack`, and query ids are `<attack>-<seed>-<n>` as there, so with the same seed a
campaign against a deterministic target sends the same queries as the local run.

Resume: each answered query is appended to the journal (`ragshield.campaign.journal`) at once.
Rerunning the same campaign reads it back: a pool attack sends only the queries not answered
yet; a conversation replays its recorded answers into the attack (nothing is sent) and goes on
from the first unanswered turn. Nothing answered is lost or sent twice.

Failures: a request is retried (`ragshield.campaign.limits`); a query that still fails is left
out of the journal (a rerun tries it again) and ends its conversation. When `max_failures_in_row`
queries fail with no answer in between, the target is taken to be down and the campaign stops
with `CampaignAborted`, which names the URL and the cause.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragshield.attacks.base import Attack, Exchange, PoolAttack
from ragshield.campaign.journal import Journal
from ragshield.campaign.limits import RateLimiter, retrying
from ragshield.errors import ConfigError, RagShieldError
from ragshield.targets.base import Target, TargetError, TargetReply
from ragshield.types import ChatMessage, Query, Response, Transcript

log = logging.getLogger(__name__)

MAX_BUDGET = 10_000  # queries per attack; the CanaryRAG paper's campaigns use 1,500
DEFAULT_MAX_QUERY_CHARS = 8000  # the pipeline's limit; longer queries are cut, as run_attack does


class CampaignAborted(RagShieldError):
    """The target stopped answering: `url` and `cause` say where and why."""

    def __init__(self, url: str, cause: str) -> None:
        super().__init__(f"target {url} is not answering: {cause}")
        self.url = url
        self.cause = cause


@dataclass(frozen=True)
class CampaignSettings:
    """How a campaign talks to its target.

    Args:
        concurrency: requests in flight at most (independent queries only; module docstring).
        rate: request starts per second at most, retries included (None: no limit).
        timeout_s: seconds one request may take before it is abandoned (and retried).
        retries: further attempts after a retryable failure (timeouts, 408, 429, 5xx).
        history: earlier turns sent with each query (0: single-turn). Forces in-order sending.
        max_failures_in_row: failed queries in a row (no answer between) that stop the campaign.
        user_id: the user id queries carry (local targets apply per-user policies to it).
        initial_wait_s / max_wait_s: the back-off's first and longest wait, in seconds.
    """

    concurrency: int = 8
    rate: float | None = None
    timeout_s: float = 60.0
    retries: int = 5
    history: int = 0
    max_failures_in_row: int = 5
    user_id: str = "attacker"
    initial_wait_s: float = 0.5
    max_wait_s: float = 30.0

    def __post_init__(self) -> None:
        if not 1 <= self.concurrency <= 256:
            raise ConfigError(f"concurrency must be in [1, 256], got {self.concurrency}")
        if self.timeout_s <= 0:
            raise ConfigError(f"timeout must be > 0 seconds, got {self.timeout_s}")
        if self.max_failures_in_row < 1:
            raise ConfigError("max_failures_in_row must be >= 1")


@dataclass(frozen=True)
class CampaignJob:
    """One attack of a campaign: the attack, its budget, its seed and its journal."""

    attack: Attack
    budget: int
    journal: Journal
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.budget <= MAX_BUDGET:
            raise ConfigError(f"the query budget must be in [0, {MAX_BUDGET}], got {self.budget}")


@dataclass
class CampaignStats:
    """Counts of one campaign run (this process only; `resumed` counts answers read back)."""

    answered: int = 0
    resumed: int = 0
    failed: int = 0
    requests: int = 0
    retries: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    causes: Counter[str] = field(default_factory=Counter)
    elapsed_s: float = 0.0
    first_request: float | None = None
    last_request: float | None = None

    def as_dict(self) -> dict[str, Any]:
        span = (self.last_request - self.first_request) if self.first_request and self.last_request else 0.0
        return {
            "answered": self.answered,
            "resumed": self.resumed,
            "failed": self.failed,
            "requests": self.requests,
            "retries": self.retries,
            "statuses": dict(self.statuses),
            "failure_causes": dict(self.causes.most_common(5)),
            "elapsed_s": round(self.elapsed_s, 3),
            # request starts per second over the span from the first to the last start
            "request_rate": round((self.requests - 1) / span, 3) if span > 0 and self.requests > 1 else None,
        }


Progress = Callable[[int, int], None]  # (queries done, queries planned)


class _Run:
    """The shared state of one `run_campaigns` call."""

    def __init__(self, target: Target, settings: CampaignSettings, total: int, progress: Progress | None) -> None:
        self.target = target
        self.settings = settings
        self.limiter = RateLimiter(settings.rate)
        self.slots = asyncio.Semaphore(settings.concurrency)
        self.stats = CampaignStats()
        self.total = total
        self.done = 0
        self.progress = progress
        self.failures_in_row = 0
        self.last_cause = ""
        self.max_chars = int(getattr(target, "max_query_chars", DEFAULT_MAX_QUERY_CHARS))

    def advance(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _retried(self, error: TargetError) -> None:
        self.stats.retries += 1
        self.stats.statuses[str(error.status or "error")] += 1

    async def _attempt(self, text: str, history: Sequence[ChatMessage]) -> TargetReply:
        await self.limiter.acquire()
        now = time.monotonic()
        self.stats.requests += 1
        self.stats.first_request = self.stats.first_request or now
        self.stats.last_request = now
        try:
            return await asyncio.wait_for(self.target.send(text, history), self.settings.timeout_s)
        except TimeoutError:
            raise TargetError(
                f"{self.target.url} timed out after {self.settings.timeout_s:g}s", retryable=True
            ) from None

    async def send(self, text: str, history: Sequence[ChatMessage]) -> TargetReply | None:
        """The reply, or None when every attempt failed (counted; may abort the campaign)."""
        try:
            async with self.slots:
                policy = retrying(
                    retries=self.settings.retries,
                    initial_wait_s=self.settings.initial_wait_s,
                    max_wait_s=self.settings.max_wait_s,
                    on_retry=self._retried,
                )
                reply: TargetReply = await policy(self._attempt, text, history)
        except TargetError as error:
            self.stats.failed += 1
            self.stats.statuses[str(error.status or "error")] += 1
            self.stats.causes[str(error)] += 1
            self.failures_in_row += 1
            self.last_cause = str(error)
            log.warning("query failed after retries: %s", error)
            if self.failures_in_row >= self.settings.max_failures_in_row:
                raise CampaignAborted(self.target.url, str(error)) from error
            return None
        self.failures_in_row = 0
        self.stats.answered += 1
        self.stats.statuses["200"] += 1
        return reply

    def query(self, job: CampaignJob, proposal: Query, number: int) -> Query:
        text = proposal.text
        if len(text) > self.max_chars:
            log.warning("attack %s query of %d characters cut to %d", job.attack.name, len(text), self.max_chars)
            text = text[: self.max_chars]
        session = f"{job.attack.name}-{job.seed}"
        return replace(
            proposal, text=text, user_id=self.settings.user_id, session_id=session, id=f"{session}-{number:05d}"
        )


def as_response(query: Query, reply: TargetReply) -> Response:
    """The `Response` a transcript records: the pipeline's own for a local target (with the
    campaign's query), else what a client saw (text, finish reason, latency; no retrieval)."""
    if reply.response is not None:
        return replace(reply.response, query=query)
    return Response(query, reply.text, None, finish_reason=reply.finish_reason, timings_ms={"total": reply.latency_ms})


def _history(seen: Sequence[Exchange], turns: int) -> tuple[ChatMessage, ...]:
    messages: list[ChatMessage] = []
    for query, text in seen[-turns:] if turns else ():
        messages += [ChatMessage("user", query.text), ChatMessage("assistant", text)]
    return tuple(messages)


def _pool_queries(attack: Attack, budget: int, seed: int) -> list[Query]:
    """A pool attack's first `budget` queries, asked for as `run_attack` asks (its answers do
    not matter to it, so placeholders stand in for them)."""
    rng = random.Random(seed)
    seen: list[Exchange] = []
    queries: list[Query] = []
    for _ in range(budget):
        proposal = attack.next_query(tuple(seen), rng)
        if proposal is None:
            break
        queries.append(proposal)
        seen.append((proposal, ""))
    return queries


async def _run_pool(run: _Run, job: CampaignJob) -> None:
    queries = [
        run.query(job, proposal, n) for n, proposal in enumerate(_pool_queries(job.attack, job.budget, job.seed))
    ]
    run.total -= job.budget - len(queries)

    async def one(number: int, query: Query) -> None:
        reply = await run.send(query.text, ())
        if reply is not None:
            job.journal.append(number, as_response(query, reply), reply.metadata)
        run.advance()

    pending = [one(n, query) for n, query in enumerate(queries) if n not in job.journal.answered]
    run.stats.resumed += len(queries) - len(pending)
    for _ in range(len(queries) - len(pending)):
        run.advance()
    await _all(pending)


async def _all(coroutines: Sequence[Any]) -> None:
    """Run the coroutines together; when one raises (an aborted campaign, a cancel), the others
    are cancelled before the error goes on, so none writes to a journal after it is closed."""
    tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _run_conversation(run: _Run, job: CampaignJob) -> None:
    rng = random.Random(job.seed)
    seen: list[Exchange] = []
    for number in range(job.budget):
        # an LLM-driven attack thinks for a while: off the event loop, so other attacks go on
        proposal = await asyncio.to_thread(job.attack.next_query, tuple(seen), rng)
        if proposal is None:
            log.info("attack %s stopped after %d queries", job.attack.name, number)
            run.total -= job.budget - number
            return
        query = run.query(job, proposal, number)
        recorded = job.journal.answered.get(number)
        if recorded is not None:
            if recorded.query.text != query.text:
                log.warning(
                    "attack %s turn %d differs from its transcript; continuing from the transcript",
                    job.attack.name,
                    number,
                )
            seen.append((recorded.query, recorded.text))
            run.stats.resumed += 1
            run.advance()
            continue
        reply = await run.send(query.text, _history(seen, run.settings.history))
        if reply is None:
            run.total -= job.budget - number  # a conversation cannot go on without this answer
            return
        response = as_response(query, reply)
        job.journal.append(number, response, reply.metadata)
        seen.append((query, response.text))
        run.advance()


async def run_campaigns(
    jobs: Sequence[CampaignJob], target: Target, settings: CampaignSettings, *, progress: Progress | None = None
) -> tuple[list[Transcript], CampaignStats]:
    """Run every job against `target` (module docstring: scheduling, resume, failures).

    Returns the transcripts (journal order of the jobs, queries in order) and the counts.

    Raises:
        CampaignAborted: `max_failures_in_row` queries failed in a row (the target is down).
    """
    run = _Run(target, settings, sum(job.budget for job in jobs), progress)
    started = time.perf_counter()
    try:
        await _all(
            [
                _run_pool(run, job)
                if isinstance(job.attack, PoolAttack) and settings.history == 0
                else _run_conversation(run, job)
                for job in jobs
            ]
        )
    finally:
        run.stats.elapsed_s = time.perf_counter() - started
        for job in jobs:
            job.journal.close()
    return [job.journal.transcript() for job in jobs], run.stats


def run_campaign(
    job: CampaignJob, target: Target, settings: CampaignSettings, *, progress: Progress | None = None
) -> tuple[Transcript, CampaignStats]:
    """`run_campaigns` for one job, from synchronous code (closes the target afterwards)."""

    async def main() -> tuple[list[Transcript], CampaignStats]:
        try:
            return await run_campaigns([job], target, settings, progress=progress)
        finally:
            await target.aclose()

    transcripts, stats = asyncio.run(main())
    return transcripts[0], stats
