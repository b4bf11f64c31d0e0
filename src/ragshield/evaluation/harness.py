"""The evaluation harness: attacks x defenses (x benign traffic) through `RagPipeline`.

One run is one knowledge base and one target generator (the grid over datasets and
generators is one config, and one output folder, each). The retriever, the target model, the
attacker model and CanaryRAG's oracle model are built ONCE and shared by every defense; each
defense gets its own `RagPipeline` from `build_system`, and every query goes through
`RagPipeline.answer` (attacks through `run_attack`), so defenses, timings and refusals are
exactly what a client gets.

Cells run defense by defense, in config order (put the cheap, important ones first): for each
defense every attack, then the benign set (`order` runs them phase by phase instead). How one
cell runs, is cached, resumed, composed or recorded as failed is `ragshield.evaluation.cell_runner`.

After the grid, `ragshield.evaluation.report.build_report` computes the metrics and writes
`results.json`, `report.md` and the plots; `ragshield report OUT` does the same later from
the transcripts alone.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from ragshield.datasets.base import load_corpus
from ragshield.errors import ConfigError
from ragshield.evaluation.cell_runner import (
    EvalProgress,
    NullProgress,
    attack_cell,
    benign_cell,
    items_fingerprint,
    target_cell,
)
from ragshield.evaluation.cells import BENIGN, TranscriptCache, cell_name
from ragshield.evaluation.config import HOLDOUT, EvalConfig
from ragshield.evaluation.gencache import CachingGenerator
from ragshield.evaluation.grid import GridRun, Parts, write_run_state
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

log = logging.getLogger(__name__)

CACHE_FILE = "generation_cache.jsonl"  # generated text (holds knowledge-base text): never commit it


def run_evaluation(
    config: EvalConfig,
    out_dir: str | Path,
    *,
    progress: EvalProgress | None = None,
    parts: Parts | None = None,
    only: Sequence[str] | None = None,
    only_phases: Sequence[str] | None = None,
) -> ResultTable:
    """Run (or resume) the grid of `config` into `out_dir`, then write the report.

    `only` restricts this process to some of the config's defenses and `only_phases` to some of
    its attacks (their labels) and `benign`: several processes can run disjoint parts of one
    folder at once (the cell records are merged under a lock), so a grid whose cells each take an
    hour can use every core. The top-k sweep runs with its attack and defenses; targets (remote
    systems) run with their attacks in a process without `only`. Returns the result table (also
    written as `out_dir/results.json`).

    Raises:
        ConfigError: invalid corpus, benign or calibration settings, or an `only` / `only_phases`
            name that is not a configured defense / attack (before any model runs).
    """
    sink = progress or NullProgress()
    if only is not None:
        unknown = sorted(set(only) - set(config.defenses))
        if unknown:
            raise ConfigError(f"--defense {', '.join(unknown)} is not in the config's defenses: {config.defenses}")
    if only_phases is not None:
        known = [phase for phase in config.phases() if phase != BENIGN or config.benign is not None]
        unknown = sorted(set(only_phases) - set(known))
        if unknown:
            raise ConfigError(f"--attack {', '.join(unknown)} is not in the config's attacks (or benign): {known}")
    local = config.defenses if not config.targets or "defenses" in config.model_fields_set else []
    defenses = [name for name in local if only is None or name in only]
    run = _prepare(config, Path(out_dir), parts or Parts())
    cache = TranscriptCache(run.out_dir)
    specs = {spec.cell: spec for spec in config.attacks}
    phases = [phase for phase in config.phases() if only_phases is None or phase in only_phases]
    if config.order is None:
        # defense by defense (config order: put the important, cheap ones first), each with its
        # attacks then its benign traffic, so an interrupted run has whole defenses
        for defense in defenses:
            for spec in config.attacks:
                if spec.cell in phases:
                    attack_cell(run, cache, sink, spec, defense, k=config.k, sweep=False)
            if run.benign and BENIGN in phases:
                benign_cell(run, cache, sink, defense)
    else:
        # phase by phase (an attack, or the benign set), each across every defense
        for phase in phases:
            for defense in defenses:
                if phase == BENIGN:
                    if run.benign:
                        benign_cell(run, cache, sink, defense)
                else:
                    attack_cell(run, cache, sink, specs[phase], defense, k=config.k, sweep=False)
    for target in config.targets or () if only is None else ():
        for spec in config.attacks:
            if spec.cell in phases:
                target_cell(run, cache, sink, spec, target)
    sweep = config.topk_sweep
    if sweep is not None and sweep.attack in phases and (only is None or any(d in only for d in sweep.defenses)):
        spec = next(attack for attack in config.attacks if attack.cell == sweep.attack)
        spec = spec.model_copy(update={"budget": sweep.budget})
        for defense in [name for name in sweep.defenses if only is None or name in only]:
            for k in sweep.values:
                if k == config.k and defense in config.defenses:
                    continue  # the report reads the main cell's first `budget` queries (same seed, same queries)
                attack_cell(run, cache, sink, spec, defense, k=k, sweep=True)
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
        "calibration": [
            config.calibration.model_dump() if config.calibration else None,
            items_fingerprint(calibration_items),
        ],
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
