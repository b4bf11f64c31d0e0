"""One cell of the evaluation grid: an attack, the benign set or a running target, under one defense.

A cell's settings (with the run's `GridRun.base_print`) make its fingerprint; a finished cell's
transcript is cached under `OUT/transcripts/` with it (`ragshield.evaluation.cells`), so a rerun
skips the cell, an interrupted run resumes, and a changed setting reruns only the cells it
touches. A stacked cell whose last part has finished can be composed from that part's cell
instead of run (`ragshield.evaluation.compose`). A cell that raises is recorded as failed in
`GridRun.failures` and the grid goes on; the report lists it.

`ragshield.evaluation.harness` decides which cells run and in what order; this module runs one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from ragshield.evaluation.cells import (
    BENIGN,
    Produced,
    TranscriptCache,
    cell_name,
    fingerprint,
    topk_cell_name,
)
from ragshield.evaluation.compose import compose_layered, split_layered
from ragshield.evaluation.config import AttackSpec
from ragshield.evaluation.gencache import CachingGenerator
from ragshield.evaluation.grid import (
    GridRun,
    defense_settings,
    pipeline_for,
    query_time_only,
    write_run_state,
)
from ragshield.evaluation.workload import BenignItem
from ragshield.types import Query, Transcript

log = logging.getLogger(__name__)


class EvalProgress(Protocol):
    """Receives the grid's progress (the CLI draws bars from it)."""

    def start(self, cell: str, total: int) -> None: ...

    def advance(self, cell: str, done: int, total: int) -> None: ...

    def finish(self, cell: str, *, cached: bool, failed: bool = False) -> None: ...


class NullProgress:
    """Progress that goes nowhere (the default)."""

    def start(self, cell: str, total: int) -> None:
        return None

    def advance(self, cell: str, done: int, total: int) -> None:
        return None

    def finish(self, cell: str, *, cached: bool, failed: bool = False) -> None:
        return None


def items_fingerprint(items: list[BenignItem]) -> str:
    """The fingerprint of a query set (ids and texts, in order): part of the settings of every
    cell that depends on it (calibration, benign)."""
    return fingerprint({"ids": [(item.query.id, item.query.text) for item in items]})


def _run_cell(
    run: GridRun,
    cache: TranscriptCache,
    sink: EvalProgress,
    name: str,
    settings: dict[str, Any],
    total: int,
    produce: Callable[[Callable[[int, int], None]], Produced],
    composition: _Composition | None = None,
) -> None:
    sink.start(name, total)

    def report(done: int, budget: int) -> None:
        sink.advance(name, done, budget)

    print_ = fingerprint({**run.base_print, **settings})
    if composition is not None and cache.cached(name, print_) is None:  # a cell that ran is kept
        extra, compose = composition
        composed_print = fingerprint({**run.base_print, **settings, **extra})
        if cache.cached(name, composed_print) is not None:
            print_ = composed_print
        else:
            # composed before `cache.run`: a cell that cannot be composed runs under its plain
            # fingerprint, so it is kept whatever later happens to its would-be source
            produced = compose()
            if produced is not None:
                print_, produce = composed_print, _finished(produced, total)

    try:
        _, cached = cache.run(name, print_, lambda: produce(report))
    except KeyboardInterrupt:
        raise
    except Exception as error:  # one broken cell must not sink hours of grid
        log.exception("cell %s failed", name)
        run.failures[name] = f"{type(error).__name__}: {error}"
        write_run_state(run, finished=False)
        sink.finish(name, cached=False, failed=True)
        return
    run.failures.pop(name, None)
    sink.finish(name, cached=cached)


def attack_cell(
    run: GridRun, cache: TranscriptCache, sink: EvalProgress, spec: AttackSpec, defense: str, *, k: int, sweep: bool
) -> None:
    """One attack against one defense's pipeline at top-k `k` (`sweep`: a cell of the top-k sweep)."""
    from ragshield.attacks import run_attack

    name = topk_cell_name(k, spec.cell, defense) if sweep else cell_name(spec.cell, defense)

    def settings_of(defense: str) -> dict[str, Any]:
        return {"attack": spec.model_dump(mode="json"), "k": k, **defense_settings(run, defense)}

    def produce(report: Callable[[int, int], None]) -> Produced:
        pipeline = pipeline_for(run, defense, k)
        transcript = run_attack(_attack(run, spec), pipeline, budget=spec.budget, seed=run.config.seed, progress=report)
        return Produced(replace(transcript, name=spec.cell, defense=defense))  # attack latency is not reported

    def adaptive() -> bool:
        from ragshield.attacks.base import PoolAttack

        return not isinstance(_attack(run, spec), PoolAttack)

    composition = None if sweep else _composition(run, cache, spec.cell, defense, settings_of, adaptive)
    _run_cell(run, cache, sink, name, settings_of(defense), spec.budget, produce, composition)


def target_cell(run: GridRun, cache: TranscriptCache, sink: EvalProgress, spec: AttackSpec, target: Any) -> None:
    """One attack against one running app (`targets`), through the campaign engine."""
    from ragshield.campaign.cells import target_transcript

    name = cell_name(spec.cell, target.cell)
    settings = {"attack": spec.model_dump(mode="json"), "target": target.model_dump(mode="json")}

    def produce(report: Callable[[int, int], None]) -> Produced:
        local = lambda spec_: pipeline_for(run, str(spec_.options.get("defense", "none")), run.config.k)  # noqa: E731
        transcript = target_transcript(
            run.out_dir, name, _attack(run, spec), spec, target, local, run.config.seed, report
        )
        return Produced(transcript)

    _run_cell(run, cache, sink, name, settings, spec.budget, produce)


def _attack(run: GridRun, spec: AttackSpec) -> Any:
    from ragshield.attacks import make_attack

    return make_attack(
        spec.name,
        attacker=run.attacker,
        embedder=run.retriever.embedder,
        data_dir=run.config.attack_data,
        **spec.params,
    )


_Composition = tuple[dict[str, Any], Callable[[], "Produced | None"]]


def _composition(
    run: GridRun,
    cache: TranscriptCache,
    first: str,
    defense: str,
    settings_of: Callable[[str], dict[str, Any]],
    adaptive: Callable[[], bool],
) -> _Composition | None:
    """For a stacked cell whose last part's cell is finished: the settings that identify that
    source and a function composing the cell from it (`ragshield.evaluation.compose`; None when
    it cannot be composed). Cheap: nothing is read or built until the function is called."""
    split = split_layered(defense) if run.config.compose_layered and run.config.policy is None else None
    if split is None:
        return None
    head, last = split
    source_name = cell_name(first, last)
    source_print = fingerprint({**run.base_print, **settings_of(last)})
    cache.refresh()
    record = cache.record(source_name)
    if record is None or record.fingerprint != source_print:
        return None

    def compose() -> Produced | None:
        source = cache.cached(source_name, source_print)
        screen = pipeline_for(run, head, run.config.k)
        rest = pipeline_for(run, last, run.config.k).defense
        # the head must only screen, and the rest must not act before generation: a rewriter
        # would change what the head sees, a query guard would add verdicts to the head's refusals
        if source is None or not query_time_only(screen) or rest.rewriters or rest.query_guards:
            return None
        transcript = compose_layered(screen, source, defense, adaptive=adaptive())
        if transcript is None:
            log.info("cell %s__%s: the head refuses an adaptive attack's query; running it", first, defense)
            return None
        return Produced(transcript, replayed=record.replayed, composed_from=source_name)

    # the source's finish time too: a source rerun under the same settings is another sample
    return {"composed_from": [source_print, record.finished]}, compose


def _finished(produced: Produced, total: int) -> Callable[[Callable[[int, int], None]], Produced]:
    """A producer of an already produced cell (reports it done at once)."""

    def produce(report: Callable[[int, int], None]) -> Produced:
        report(total, total)
        return produced

    return produce


def benign_cell(run: GridRun, cache: TranscriptCache, sink: EvalProgress, defense: str) -> None:
    """The run's benign queries through one defense's pipeline, one user id per query."""
    name = cell_name(BENIGN, defense)

    def settings_of(defense: str) -> dict[str, Any]:
        return {"benign": items_fingerprint(run.benign), "k": run.config.k, **defense_settings(run, defense)}

    def produce(report: Callable[[int, int], None]) -> Produced:
        pipeline = pipeline_for(run, defense, run.config.k)
        responses = []
        replay = run.generator if isinstance(run.generator, CachingGenerator) else None
        # a defense that acts only before generation leaves an allowed query's prompt exactly as
        # undefended: its answer is replayed from the undefended benign cell, and the report
        # derives its latency from measured parts (module docstring of report.py); any other
        # defense always generates, so its latency is measured end to end
        replayed = replay is not None and defense != "none" and query_time_only(pipeline)
        if replay is not None:
            replay.enabled = replayed
        try:
            for number, item in enumerate(run.benign):
                # one user id per benign query: a per-user policy must not pool strangers' queries
                query = Query(item.query.text, user_id=f"benign-{number:05d}", id=item.query.id)
                responses.append(pipeline.answer(query))
                report(number + 1, len(run.benign))
        finally:
            if replay is not None:
                replay.enabled = True
        return Produced(Transcript("benign", BENIGN, defense, tuple(responses), run.config.seed), replayed)

    composition = _composition(run, cache, BENIGN, defense, settings_of, lambda: False)
    _run_cell(run, cache, sink, name, settings_of(defense), len(run.benign), produce, composition)
