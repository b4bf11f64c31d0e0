"""`local`: ragshield's own `RagPipeline` as a target (what `ragshield attack --index` attacks).

The pipeline runs in a worker thread, one query at a time: the local models are not
thread-safe, and one at a time keeps a local campaign's transcript identical to
`run_attack`'s for the same seed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragshield.targets.base import TargetReply
from ragshield.types import Query

if TYPE_CHECKING:
    from ragshield.pipeline import RagPipeline


class LocalTarget:
    """A `RagPipeline` as an attack target. The full `Response` (retrieval, verdicts,
    timings) comes back in `TargetReply.response`. Earlier turns are not used: the pipeline
    answers single queries (its retrieval reads only the last one, as the service does)."""

    def __init__(self, pipeline: RagPipeline, *, user_id: str = "attacker") -> None:
        self.pipeline = pipeline
        self.user_id = user_id
        self.max_query_chars = pipeline.max_query_chars
        self._lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return f"local:{self.pipeline.defense.name}"

    @property
    def url(self) -> str:
        return "local pipeline"

    async def send(self, query: str, history: Sequence[Any] = ()) -> TargetReply:
        async with self._lock:
            started = time.perf_counter()
            response = await asyncio.to_thread(self.pipeline.answer, Query(query, user_id=self.user_id))
        finish = "refused" if response.blocked and response.finish_reason == "stop" else response.finish_reason
        return TargetReply(
            response.text, finish, response=response, latency_ms=(time.perf_counter() - started) * 1000.0
        )

    async def aclose(self) -> None:
        return None
