"""Assemble a guarded `RagPipeline` from names and an index folder: the one place the CLI,
the service and the harness turn configuration into running parts."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragshield.config import SystemConfig
from ragshield.errors import ConfigError
from ragshield.generators.base import Generator, make_generator
from ragshield.guards.base import ViolationPolicy
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.pipeline import RagPipeline
from ragshield.rag.prompting import PromptBuilder
from ragshield.rag.retriever import Retriever, open_retriever
from ragshield.types import Query, RetrievalResult, iter_jsonl

log = logging.getLogger(__name__)


def read_queries(path: str | Path, *, limit: int | None = None) -> list[Query]:
    """Queries from JSONL lines with `query` (or `text`) and an optional `id`/`user_id`."""
    queries: list[Query] = []
    for number, row in enumerate(iter_jsonl(path)):
        if limit is not None and len(queries) >= limit:
            break
        text = row.get("query", row.get("text"))
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"{path}: line {number + 1} has no non-empty 'query' field")
        queries.append(Query(text, user_id=str(row.get("user_id", "anonymous")), id=str(row.get("id", number))))
    return queries


def calibration_retrievals(
    retriever: Retriever, path: str | Path | None, k: int, *, limit: int | None = None
) -> list[RetrievalResult]:
    """Retrievals of benign calibration queries (empty when no path is given)."""
    if path is None:
        return []
    return retriever.retrieve_many(read_queries(path, limit=limit), k)


def build_system(
    config: SystemConfig,
    *,
    retriever: Retriever | None = None,
    generator: Generator | None = None,
    oracle_generator: Generator | None = None,
    policy: ViolationPolicy | None = None,
    calibration: Sequence[RetrievalResult] | None = None,
) -> RagPipeline:
    """A pipeline for `config`; pass already-built parts to share them between systems."""
    if retriever is None:
        if not config.index:
            raise ConfigError("the config needs an 'index' folder (build one with: ragshield index)")
        retriever, _ = open_retriever(config.index)
    generator = generator or make_generator(config.generator)
    if oracle_generator is None and config.oracle is not None:
        oracle_generator = make_generator(config.oracle)
    if calibration is None and config.calibration is not None:
        calibration = calibration_retrievals(
            retriever, config.calibration.path, config.k, limit=config.calibration.limit
        )
    if policy is None and config.policy is not None:
        policy = make_policy(config.policy.model_dump())
    context = DefenseContext(
        retriever=retriever,
        embedder=retriever.embedder,
        generator=generator,
        oracle_generator=oracle_generator,
        k=config.k,
        calibration=tuple(calibration or ()),
        target_fpr=config.calibration.target_fpr if config.calibration else 0.01,
        policy=policy,
        fail_closed=config.fail_closed,
        seed=config.seed,
        index_dir=str(config.index) if config.index else None,
    )
    defense = build_defense(config.defense_spec, context, config.defense_params)
    builder = PromptBuilder(layout=config.prompt_layout, max_tokens=config.max_tokens, seed=config.seed)
    return RagPipeline(retriever, generator, defense=defense, prompt_builder=builder, k=config.k, policy=policy)


def make_policy(settings: dict[str, Any]) -> ViolationPolicy:
    """The per-user blocking policy (`ragshield.guards.policy`) from PolicyConfig settings."""
    from ragshield.guards.policy import make_policy as _make

    return _make(**settings)
