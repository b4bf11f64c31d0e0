"""The shared state of one evaluation run and the pipelines of its defenses.

`GridRun` holds what every cell of a run shares (config, retriever, target / attacker /
oracle models, calibration, benign set, the settings every fingerprint includes) and the
pipelines built so far; `ragshield.evaluation.harness` creates it and `cell_runner` runs the cells.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragshield.config import SystemConfig
from ragshield.evaluation.cells import write_run_file
from ragshield.evaluation.config import EvalConfig
from ragshield.evaluation.gencache import CachingGenerator
from ragshield.evaluation.workload import BenignItem
from ragshield.generators.base import Generator, make_generator
from ragshield.pipeline import RagPipeline
from ragshield.rag.embedding import Embedder
from ragshield.rag.retriever import Retriever
from ragshield.system import build_system, make_policy
from ragshield.types import RetrievalResult


@dataclass
class Parts:
    """The models every cell shares. Pass your own to `run_evaluation` to reuse loaded models
    (or, in unit tests, FAKES); missing ones are built from the config."""

    embedder: Embedder | None = None
    generator: Generator | None = None
    attacker: Generator | None = None
    oracle: Generator | None = None


@dataclass
class GridRun:
    """State of one evaluation run: its config, the shared models and the pipelines built so far."""

    config: EvalConfig
    out_dir: Path
    retriever: Retriever
    generator: Generator
    attacker: Generator
    parts: Parts
    calibration: tuple[RetrievalResult, ...]
    calibration_items: list[BenignItem]
    benign: list[BenignItem]
    base_print: dict[str, Any]
    index_dir: Path
    pipelines: dict[tuple[str, int], RagPipeline] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)


def write_run_state(run: GridRun, *, finished: bool) -> None:
    write_run_file(
        run.out_dir,
        {
            "config": run.config.model_dump(mode="json"),
            "index": str(run.index_dir),
            "kb_size": len(run.retriever.index),
            "embedder": run.retriever.embedder.name,
            "generator": run.generator.name,
            "attacker": run.attacker.name,
            "benign_queries": len(run.benign),
            "calibration_queries": len(run.calibration_items),
            # similarity scores only (no text): `ragshield report` re-fits RAG-CT on them
            "calibration_profiles": [retrieval.similarities for retrieval in run.calibration],
            "failures": dict(run.failures),
            "finished": finished,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        },
    )


def _needs_oracle(defense: str) -> bool:
    return "canary-rag" in defense.split("+")


def _oracle(run: GridRun) -> Generator | None:
    """CanaryRAG's oracle model, built once: the config's, else a second local-model instance."""
    if run.parts.oracle is None:
        if run.config.oracle is not None:
            run.parts.oracle = make_generator(run.config.oracle)
        else:
            from ragshield.guards.canary.defense import default_oracle_generator

            target = run.generator.inner if isinstance(run.generator, CachingGenerator) else run.generator
            run.parts.oracle = default_oracle_generator(target)
    return run.parts.oracle


def pipeline_for(run: GridRun, defense: str, k: int) -> RagPipeline:
    """The pipeline of one defense at retrieval depth k (cached unless a per-user policy is
    configured: then every cell starts with a fresh policy state)."""
    key = (defense, k)
    if key in run.pipelines:
        return run.pipelines[key]
    config: SystemConfig = run.config.system_config(defense, k=k, index=str(run.index_dir))
    calibration = run.calibration
    if k != run.config.k and calibration:
        calibration = tuple(run.retriever.retrieve_many([item.query for item in run.calibration_items], k))
    pipeline = build_system(
        config,
        retriever=run.retriever,
        generator=run.generator,
        oracle_generator=_oracle(run) if _needs_oracle(config.defense_spec) else None,
        policy=make_policy(run.config.policy.model_dump()) if run.config.policy else None,
        calibration=calibration,
    )
    # TGTB cuts each context to 2048 characters; SystemConfig has no such field yet
    pipeline.prompt_builder = replace(pipeline.prompt_builder, max_chunk_chars=run.config.max_chunk_chars)
    if run.config.policy is None:
        run.pipelines[key] = pipeline
    return pipeline


def defense_settings(run: GridRun, defense: str) -> dict[str, Any]:
    name = run.config.defense_instance(defense).name
    params = run.config.defense_params_of(defense)
    settings: dict[str, Any] = {"defense": defense, "params": {part: params.get(part, {}) for part in name.split("+")}}
    if name != defense:  # a labelled instance: its cache key and records name the defense too
        settings["name"] = name
    return settings


def query_time_only(pipeline: RagPipeline) -> bool:
    """The defense only checks the query/retrieval before generation (RAG-CT, rule-based, ...)."""
    defense = pipeline.defense
    return not (defense.rewriters or defense.decorators or defense.output_guards)
