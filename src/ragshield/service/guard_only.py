"""Guard-only mode: `ragshield serve` with a config that names no index.

The application retrieves and generates itself and asks ragshield twice per answer
(`/v1/guard/query` with its retrieved chunks and their cosine similarities, `/v1/guard/output`
with its model's answer). The service then loads no index and runs no model the config does not
name, so an install with only `pip install 'ragshield[guard]'` (no torch, faiss or llama.cpp)
serves it:

* default defenses (`defenses:` not given): `GUARD_ONLY_DEFENSES`, canaries plus release
  containment, which need no model;
* `rag-ct` (the retrieval scores the application sends) and `rule-based` need no model either;
  `intent` and `shield` embed the query, so they need the `models` extra (`embedder:` names the
  model);
* CanaryRAG's generative oracle runs only when `oracle:` names a model (default `off` here: the
  application's own model is out of reach);
* `calibration:` needs an index (its benign queries are retrieved) and is refused; give fitted
  detectors with `load:` instead;
* a `generator:` is built only when the config names one (for baselines that rewrite with it).
"""

from __future__ import annotations

import copy
from typing import Any

from ragshield.errors import ConfigError
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.integrations.shield import Shield
from ragshield.service.settings import ServeConfig

#: what a guard-only service runs when its config lists no `defenses` (no model needed)
GUARD_ONLY_DEFENSES: tuple[str, ...] = ("canary-rag", "context-echo")


def guard_only_spec(settings: ServeConfig) -> str:
    """The defense spec a guard-only service runs: the config's, else `GUARD_ONLY_DEFENSES`."""
    if "defenses" in settings.model_fields_set:
        return settings.defense_spec
    return "+".join(GUARD_ONLY_DEFENSES)


def guard_only_params(settings: ServeConfig, spec: str) -> dict[str, dict[str, Any]]:
    """The defense parameters, with CanaryRAG's oracle off unless the config names an oracle model."""
    params: dict[str, dict[str, Any]] = copy.deepcopy(settings.defense_params)
    if settings.oracle is None and "canary-rag" in spec.split("+"):
        params.setdefault("canary-rag", {}).setdefault("oracle", "off")
    return params


def build_guard_shield(settings: ServeConfig) -> Shield:
    """The `Shield` a guard-only service checks with (see the module docstring).

    Raises:
        ConfigError: `calibration:` is set (it needs an index), or a defense cannot be built.
        BackendUnavailable: a configured defense needs an extra that is not installed (the message
            names the `pip install` line).
    """
    if settings.calibration is not None:
        raise ConfigError(
            "calibration: needs an index (its benign queries are retrieved); a guard-only service (no index) "
            "takes fitted detectors instead (e.g. defense_params: {rag-ct: {load: FILE}})"
        )
    from ragshield.generators.base import make_generator
    from ragshield.rag.embedding import DEFAULT_EMBEDDER, make_embedder
    from ragshield.system import make_policy

    policy = make_policy(settings.policy.model_dump()) if settings.policy is not None else None
    spec = guard_only_spec(settings)
    # loads its model on first use: most guards never embed
    embedder = make_embedder(settings.embedder or DEFAULT_EMBEDDER)
    context = DefenseContext(
        embedder=embedder,
        generator=make_generator(settings.generator) if "generator" in settings.model_fields_set else None,
        oracle_generator=make_generator(settings.oracle) if settings.oracle is not None else None,
        k=settings.k,
        policy=policy,
        fail_closed=settings.fail_closed,
        seed=settings.seed,
    )
    defense = build_defense(spec, context, guard_only_params(settings, spec))
    if any(_holds(guard, embedder) for guard in (*defense.query_guards, *defense.output_guards)):
        # a guard embeds queries: load the model now, so a missing `models` extra stops the start
        # with its pip line instead of failing every request closed
        embedder.embed(["warm-up"])
    return Shield(defense, policy=policy)


def _holds(value: object, target: object, depth: int = 4) -> bool:
    """True when `target` is `value` or reachable through its attributes, lists and tuples."""
    if value is target:
        return True
    if depth == 0 or isinstance(value, str | bytes | int | float | bool | type(None)):
        return False
    if isinstance(value, list | tuple | set | frozenset):
        return any(_holds(item, target, depth - 1) for item in value)
    names = [*getattr(value, "__dict__", {}), *getattr(type(value), "__slots__", ())]
    return any(_holds(getattr(value, name, None), target, depth - 1) for name in names)
