"""The evaluation harness: attacks x defenses (x benign traffic) through `RagPipeline`.

One run is one knowledge base and one target generator (the grid over datasets and
generators is one config, and one output folder, each). The retriever, the target model, the
attacker model and CanaryRAG's oracle model are built ONCE and shared by every defense; each
defense gets its own `RagPipeline` from `build_system`, and every query goes through
`RagPipeline.answer` (attacks through `run_attack`), so defenses, timings and refusals are
exactly what a client gets.

Cells run defense by defense, in config order (put the cheap, important ones first): for each
defense every attack, then the benign set. A finished cell's transcript is cached under
`OUT/transcripts/` with a fingerprint of its settings (`ragshield.evaluation.cells`): a rerun
skips it, so an interrupted run resumes, and a changed setting reruns only the cells it
touches. A cell that raises is recorded as failed and the grid goes on; the report lists it.

After the grid, `ragshield.evaluation.report.build_report` computes the metrics and writes
`results.json`, `report.md` and the plots; `ragshield report OUT` does the same later from
the transcripts alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from ragshield.datasets.base import load_corpus
from ragshield.errors import ConfigError
from ragshield.evaluation.cells import (
    BENIGN,
    Produced,
    TranscriptCache,
    cell_name,
    fingerprint,
    topk_cell_name,
)
from ragshield.evaluation.compose import compose_layered, split_layered
from ragshield.evaluation.config import HOLDOUT, AttackSpec, EvalConfig
from ragshield.evaluation.gencache import CachingGenerator
from ragshield.evaluation.grid import (
    GridRun,
    Parts,
    defense_settings,
    pipeline_for,
    query_time_only,
    write_run_state,
)
from ragshield.evaluation.report import ResultTable, build_report
from ragshield.evaluation.workload import (
    BENIGN_FILE,
    BenignItem,
    holdout_items,
    read_benign_file,
    split_holdout,
    window,
    write_benign,
)
from ragshield.generators.base import Generator, make_generator
from ragshield.rag.build import build_index
from ragshield.rag.embedding import make_embedder
from ragshield.rag.retriever import open_retriever
from ragshield.types import Query, Transcript

log = logging.getLogger(__name__)

CACHE_FILE = "generation_cache.jsonl"  # generated text (holds knowledge-base text): never commit it


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


def run_evaluation(
    config: EvalConfig,
    out_dir: str | Path,
    *,
    progress: EvalProgress | None = None,
    parts: Parts | None = None,
    only: Sequence[str] | None = None,
) -> ResultTable:
    """Run (or resume) the grid of `config` into `out_dir`, then write the report.

    `only` restricts this process to some of the config's defenses: several processes can run
    disjoint defenses of one folder at once (the cell records are merged under a lock).
    Returns the result table (also written as `out_dir/results.json`).

    Raises:
        ConfigError: invalid corpus, benign or calibration settings, or an `only` name that is
            not a configured defense (before any model runs).
    """
    sink = progress or NullProgress()
    if only is not None:
        unknown = sorted(set(only) - set(config.defenses))
        if unknown:
            raise ConfigError(f"--defense {', '.join(unknown)} is not in the config's defenses: {config.defenses}")
    local = config.defenses if not config.targets or "defenses" in config.model_fields_set else []
    defenses = [name for name in local if only is None or name in only]
    run = _prepare(config, Path(out_dir), parts or Parts())
    cache = TranscriptCache(run.out_dir)
    specs = {spec.cell: spec for spec in config.attacks}
    if config.order is None:
        # defense by defense (config order: put the important, cheap ones first), each with its
        # attacks then its benign traffic, so an interrupted run has whole defenses
        for defense in defenses:
            for spec in config.attacks:
                _attack_cell(run, cache, sink, spec, defense, k=config.k, sweep=False)
            if run.benign:
                _benign_cell(run, cache, sink, defense)
    else:
        # phase by phase (an attack, or the benign set), each across every defense
        for phase in config.phases():
            for defense in defenses:
                if phase == BENIGN:
                    if run.benign:
                        _benign_cell(run, cache, sink, defense)
                else:
                    _attack_cell(run, cache, sink, specs[phase], defense, k=config.k, sweep=False)
    for target in config.targets or () if only is None else ():
        for spec in config.attacks:
            _target_cell(run, cache, sink, spec, target)
    if config.topk_sweep is not None and (only is None or any(d in only for d in config.topk_sweep.defenses)):
        sweep = config.topk_sweep
        spec = next(attack for attack in config.attacks if attack.cell == sweep.attack)
        spec = spec.model_copy(update={"budget": sweep.budget})
        for defense in [name for name in sweep.defenses if only is None or name in only]:
            for k in sweep.values:
                if k == config.k and defense in config.defenses:
                    continue  # the report reads the main cell's first `budget` queries (same seed, same queries)
                _attack_cell(run, cache, sink, spec, defense, k=k, sweep=True)
    cache.refresh()
    write_run_state(run, finished=_complete(config, cache, bool(run.benign), local))
    return build_report(run.out_dir, embedder=run.retriever.embedder)


# -- preparation -----------------------------------------------------------------------------


def _prepare(config: EvalConfig, out_dir: Path, parts: Parts) -> GridRun:
    out_dir.mkdir(parents=True, exist_ok=True)
    corpus = load_corpus(config.corpus, limit=config.corpus_limit)
    kept, held = split_holdout(corpus, config.holdout, seed=config.seed)
    held_items = holdout_items(held)
    calibration_items = _calibration_items(config, held_items)
    benign = _benign_items(config, held_items, len(calibration_items))  # validated before any model loads
    if config.benign is not None and not benign:  # the report shows its FPR as missing; `eval` exits 1
        log.warning("the configured benign set (%s) is empty: no FPR, utility or latency", config.benign.path)
    embedder = parts.embedder or make_embedder(config.embedder)
    index_dir = Path(config.index) if config.index else out_dir / "index"
    manifest, _ = build_index(kept, embedder, index_dir, corpus_spec=config.corpus)
    retriever, _ = open_retriever(index_dir, embedder)
    target = parts.generator or make_generator(config.generator)
    generator: Generator = CachingGenerator(target, out_dir / CACHE_FILE) if config.replay_cache else target
    attacker = parts.attacker or (make_generator(config.attacker) if config.attacker else generator)
    calibration = tuple(retriever.retrieve_many([item.query for item in calibration_items], config.k))
    write_benign(out_dir / BENIGN_FILE, benign)
    base_print = {
        "corpus": config.corpus,
        "corpus_limit": config.corpus_limit,
        "holdout": config.holdout,
        "corpus_hash": manifest.corpus_hash,
        "embedder": embedder.name,
        "generator": config.generator if parts.generator is None else generator.name,
        "attacker": config.attacker if parts.attacker is None else attacker.name,
        "oracle": config.oracle if parts.oracle is None else parts.oracle.name,
        "layout": config.prompt_layout,
        "max_tokens": config.max_tokens,
        "max_chunk_chars": config.max_chunk_chars,
        "calibration": [config.calibration.model_dump() if config.calibration else None, _ids(calibration_items)],
        "policy": config.policy.model_dump() if config.policy else None,
        "fail_closed": config.fail_closed,
        "seed": config.seed,
        "attack_data": config.attack_data,
    }
    if config.replay_cache:  # replayed answers are identical, but say how the cells were produced
        base_print["replay_cache"] = True
    run = GridRun(
        config=config,
        out_dir=out_dir,
        retriever=retriever,
        generator=generator,
        attacker=attacker,
        parts=parts,
        calibration=calibration,
        calibration_items=calibration_items,
        benign=benign,
        base_print=base_print,
        index_dir=index_dir,
    )
    write_run_state(run, finished=False)
    return run


def _complete(config: EvalConfig, cache: TranscriptCache, benign: bool, defenses: Sequence[str]) -> bool:
    """Whether every main-grid cell of the config is recorded (other processes included)."""
    firsts = [spec.cell for spec in config.attacks] + ([BENIGN] if benign else [])
    cells = [cell_name(first, d) for d in defenses for first in firsts]
    cells += [cell_name(spec.cell, target.cell) for target in config.targets or () for spec in config.attacks]
    return all(cache.record(cell) is not None for cell in cells)


def _ids(items: list[BenignItem]) -> str:
    return fingerprint({"ids": [(item.query.id, item.query.text) for item in items]})


def _calibration_items(config: EvalConfig, held: list[BenignItem]) -> list[BenignItem]:
    spec = config.calibration
    if spec is None:
        return []
    if spec.path == HOLDOUT:
        return held[: spec.limit or len(held) // 2]
    return window(read_benign_file(spec.path), 0, spec.limit)


def _benign_items(config: EvalConfig, held: list[BenignItem], calibration_used: int) -> list[BenignItem]:
    spec = config.benign
    if spec is None:
        return []
    if spec.path == HOLDOUT:
        skip = calibration_used if config.calibration is not None and config.calibration.path == HOLDOUT else 0
        return window(held, skip + spec.offset, spec.limit)
    return window(read_benign_file(spec.path), spec.offset, spec.limit)


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


def _attack_cell(
    run: GridRun, cache: TranscriptCache, sink: EvalProgress, spec: AttackSpec, defense: str, *, k: int, sweep: bool
) -> None:
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


def _target_cell(run: GridRun, cache: TranscriptCache, sink: EvalProgress, spec: AttackSpec, target: Any) -> None:
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


def _benign_cell(run: GridRun, cache: TranscriptCache, sink: EvalProgress, defense: str) -> None:
    name = cell_name(BENIGN, defense)

    def settings_of(defense: str) -> dict[str, Any]:
        return {"benign": _ids(run.benign), "k": run.config.k, **defense_settings(run, defense)}

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
