"""`run_attack`: drive an `Attack` against a `RagPipeline` and record the `Transcript`.

The runner is the attack's only channel to the target: every query goes through
`RagPipeline.answer` (so the defense, the per-user policy and the timings apply exactly as
for any client), and the attack sees only the (query, response text) pairs.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import replace

from ragshield.attacks.base import Attack, Exchange
from ragshield.errors import ConfigError
from ragshield.pipeline import RagPipeline
from ragshield.types import Response, Transcript

log = logging.getLogger(__name__)


def run_attack(
    attack: Attack,
    pipeline: RagPipeline,
    *,
    budget: int,
    seed: int = 0,
    user_id: str = "attacker",
    progress: Callable[[int, int], None] | None = None,
) -> Transcript:
    """Send at most `budget` queries of `attack` to `pipeline`; return every response in order.

    Deterministic for a seed: the attack draws all its randomness from one
    `random.Random(seed)`, and query ids are `<attack>-<seed>-<n>`, so two runs with the same
    seed against the same deterministic target send the same queries. Queries longer than
    the pipeline accepts are cut to its limit (logged). The run ends early when the attack
    returns None. `progress(done, budget)` is called after each query.

    Raises:
        ConfigError: `budget` is negative.
    """
    if budget < 0:
        raise ConfigError(f"the query budget must be >= 0, got {budget}")
    rng = random.Random(seed)
    seen: list[Exchange] = []
    responses: list[Response] = []
    session = f"{attack.name}-{seed}"
    for number in range(budget):
        proposal = attack.next_query(tuple(seen), rng)
        if proposal is None:
            log.info("attack %s stopped after %d queries", attack.name, number)
            break
        text = proposal.text
        if len(text) > pipeline.max_query_chars:
            log.warning("attack %s query of %d characters cut to %d", attack.name, len(text), pipeline.max_query_chars)
            text = text[: pipeline.max_query_chars]
        query = replace(proposal, text=text, user_id=user_id, session_id=session, id=f"{session}-{number:05d}")
        response = pipeline.answer(query)
        seen.append((query, response.text))
        responses.append(response)
        if progress is not None:
            progress(number + 1, budget)
    return Transcript("attack", attack.name, pipeline.defense.name, tuple(responses), seed)
