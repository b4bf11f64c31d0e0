"""Layered cells composed from finished cells, instead of generating every answer again.

A stacked defense `A+B` whose head `A` only screens queries before generation (RAG-CT, the
rule-based filter, erase-and-check, ...) and whose last part `B` acts only after retrieval
(decorators and output monitors: CanaryRAG, summarisation; no rewriter, no query guard)
behaves, per query, exactly like this: `A` refuses the query, or the query goes on to `B`
unchanged (`RagPipeline` runs every query guard before any decorator or monitor, and an allowed
query's prompt is what `B` alone would build). So the cell `X__A+B` follows from the finished
cell `X__B`: screen each of its queries with `A`; a refused query gets `A`'s refusal, an
allowed one keeps `B`'s answer with `A`'s verdicts put first.

This is exact for fixed query lists (TGTB, PIDE, benign traffic), up to `B`'s own randomness:
CanaryRAG draws fresh canaries per request, so a composed cell is another sample of the same
defense, not a replay. An adaptive attack (RAG-Thief, Pirates) reads every answer, so a refusal
by `A` would have changed every later query: then the cell cannot be composed and is run.

Composed cells are marked in `cells.json` (`composed_from`); their benign latency is `B`'s
measured latency plus `A`'s measured screening time (the report marks it "derived"). A cell
that was already run is never replaced by a composed one.
"""

from __future__ import annotations

from dataclasses import replace

from ragshield.pipeline import RagPipeline
from ragshield.types import Response, Transcript

SCREENED = "screened"


def split_layered(defense: str) -> tuple[str, str] | None:
    """(head, last part) of a stacked defense spec such as `rag-ct+canary-rag`; None when not stacked."""
    head, plus, last = defense.rpartition("+")
    if not plus or not head or not last:
        return None
    return head, last


def compose_layered(screen: RagPipeline, source: Transcript, defense: str, *, adaptive: bool) -> Transcript | None:
    """The transcript of `defense` (= head + source's defense) from `source`, screened by `screen`.

    Args:
        screen: the pipeline of the head defense; it must only act before generation (query
            guards), and the source's defense must have no rewriter or query guard.
        source: the finished transcript of the last part of `defense`.
        defense: the stacked spec the composed transcript is labelled with.
        adaptive: the queries depend on earlier answers (then any refusal by the head makes
            composition impossible).

    Returns:
        The composed transcript, or None when an adaptive attack's query would be refused.
    """
    responses: list[Response] = []
    for response in source.responses:
        screened = screen.screen(response.query)
        if screened.finish_reason != SCREENED:
            if adaptive:
                return None  # the attacker would have seen this refusal and sent other queries after it
            responses.append(screened)
        else:
            responses.append(_stacked(screened, response))
    return replace(source, defense=defense, responses=tuple(responses))


def _stacked(screened: Response, later: Response) -> Response:
    """`later` with the screening verdicts first and the screening time added to its total."""
    timings = dict(later.timings_ms)
    added = 0.0
    for stage, milliseconds in screened.timings_ms.items():
        if stage.startswith("guard:"):  # the head has query guards only (no rewriters)
            timings[stage] = timings.get(stage, 0.0) + milliseconds
            added += milliseconds
    if "total" in timings:
        timings["total"] += added
    return replace(later, verdicts=screened.verdicts + later.verdicts, timings_ms=timings)
