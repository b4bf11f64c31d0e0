"""One framework call (a chain run, a query, a chat turn) linking the adapters' two halves.

Framework adapters never fail open: the query side (`GuardedRetriever`,
`GuardNodePostprocessor`, through `guard_retrieval`) hands out canary-decorated context only
inside a `guarded_run`, which the adapter that monitors the answer opens (`GuardedChain`,
`GuardedQueryEngine`, `GuardedChatEngine`). Used on its own, with a shield whose canaries or
output guards need that monitor, the query side raises `ConfigError` (`standalone="raise"`,
the default) or returns the undecorated context after the query guards with a
`StandaloneRetrievalWarning` (`standalone="undecorated"`). The other way round, an answer
whose retrieval bypassed the query side is refused (`require_guarded_retrieval`).

The run travels in a context variable: frameworks run retrieval in worker threads or asyncio
tasks with a copy of the caller's context, which still points at the run. Code of your own
that retrieves through a guarded retriever inside `with guarded_run() as run:` must then pass
the answer through `Shield.monitor(run.decorated(query), deltas)`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from ragshield.errors import ConfigError
from ragshield.integrations.shield import QueryDecision, Shield, scored_chunks
from ragshield.types import Query, RetrievalResult, ScoredChunk

__all__ = [
    "CURRENT_RUN",
    "GuardedRun",
    "Standalone",
    "StandaloneRetrievalWarning",
    "guard_retrieval",
    "guarded_run",
    "require_guarded_retrieval",
]

Standalone = Literal["raise", "undecorated"]


class StandaloneRetrievalWarning(UserWarning):
    """A guarded retriever ran outside a monitored run: its context is undecorated and the
    answer built on it gets no output check."""


@dataclass
class GuardedRun:
    """What the query-side adapter decided during one framework call (a chain run, a query).

    The framework adapters link their retriever (or node postprocessor) to their stream monitor
    through `CURRENT_RUN`, a context variable: frameworks run retrieval in worker threads with a
    copy of the caller's context, which still points at this object.
    """

    user_id: str | None = None
    decisions: list[QueryDecision] = field(default_factory=list)

    def originals(self) -> list[RetrievalResult]:
        """The run's retrievals as retrieved (no canaries): to show sources to users."""
        return [d.response.retrieval for d in self.decisions if d.response.retrieval is not None]

    def decorated(self, query: Query) -> RetrievalResult:
        """All allowed decorated retrievals of the run merged (hits re-ranked, markers joined);
        an empty retrieval for `query` when nothing was retrieved through a guarded retriever."""
        results = [d.decorated for d in self.decisions if d.decorated is not None]
        if not results:
            return RetrievalResult(query=query, hits=())
        seen: dict[str, ScoredChunk] = {}
        markers: dict[str, tuple[str, ...]] = {}
        for result in results:
            for hit in result.hits:
                seen.setdefault(hit.chunk.id, hit)
            for chunk_id, canaries in result.markers.items():
                markers[chunk_id] = (*markers.get(chunk_id, ()), *canaries)
        hits = scored_chunks((hit.chunk, hit.similarity) for hit in seen.values())
        return RetrievalResult(query=results[0].query, hits=hits, markers=markers)


CURRENT_RUN: ContextVar[GuardedRun | None] = ContextVar("ragshield_guarded_run", default=None)


@contextmanager
def guarded_run(user_id: str | None = None) -> Iterator[GuardedRun]:
    """Open a `GuardedRun` for the code inside the `with` block (and the threads it starts)."""
    run = GuardedRun(user_id=user_id)
    token = CURRENT_RUN.set(run)
    try:
        yield run
    finally:
        CURRENT_RUN.reset(token)


def guard_retrieval(
    shield: Shield,
    query: str,
    hits: Sequence[ScoredChunk],
    *,
    user_id: str,
    standalone: Standalone,
    component: str,
) -> QueryDecision:
    """The query-side check of a framework adapter (retriever, node postprocessor).

    Inside a `guarded_run` the decision is recorded in the run, whose owner monitors the
    answer, and the context is decorated. Outside one, a shield that `needs_monitor` raises
    (`standalone="raise"`) or checks the query without decorating (`standalone="undecorated"`,
    with a `StandaloneRetrievalWarning`): canaries never leave without a monitor.

    Raises:
        ConfigError: outside a guarded run with `standalone="raise"` and a shield that needs a monitor.
    """
    run = CURRENT_RUN.get()
    user = (run.user_id if run is not None else None) or user_id
    decorate = run is not None
    if run is None and shield.needs_monitor:
        if standalone == "raise":
            raise ConfigError(
                f"{component} is used without the adapter that checks the answer, so canaries and output guards "
                "would not apply; wrap the chain / engine in ragshield's guarded adapter (GuardedChain, "
                "GuardedQueryEngine, GuardedChatEngine), or pass standalone='undecorated' for query guards only"
            )
        warnings.warn(
            f"{component}: no output monitor in this run; returning undecorated context after the query "
            "guards only (the answer is not checked)",
            StandaloneRetrievalWarning,
            stacklevel=3,
        )
    decision = shield.check_query(Query(query, user_id=user), hits, decorate=decorate)
    if run is not None:
        run.decisions.append(decision)
    return decision


def require_guarded_retrieval(run: GuardedRun, shield: Shield, component: str) -> None:
    """Refuse an answer whose retrieval bypassed the guards (a chain / engine wired without
    ragshield's retriever or postprocessor): its query guards and canaries never ran.

    Raises:
        ConfigError: no guarded retrieval in `run` while the shield has query guards or decorators.
    """
    if not run.decisions and (shield.defense.query_guards or shield.defense.decorators):
        raise ConfigError(
            f"{component}: the wrapped chain / engine did not retrieve through GuardedRetriever or "
            "GuardNodePostprocessor, so the query guards and canaries did not run; add it to the retrieval step"
        )
