"""The attack suite: published knowledge-extraction attacks as black-box `Attack`s.

`make_attack(name, ...)` builds one by its registry name (`ragshield list attacks`);
`run_attack(attack, pipeline, budget=N)` drives it against a `RagPipeline` and returns the
`Transcript`. Attack classes are imported only when asked for.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from ragshield.attacks.base import Attack, Exchange
from ragshield.attacks.runner import run_attack
from ragshield.generators.base import Generator
from ragshield.parameters import check_parameters
from ragshield.rag.embedding import Embedder
from ragshield.registry import ATTACKS, resolve

__all__ = ["ATTACKS", "Attack", "Exchange", "make_attack", "run_attack"]


def make_attack(
    name: str,
    *,
    attacker: Generator | None = None,
    embedder: Embedder | None = None,
    data_dir: str | Path | None = None,
    **params: Any,
) -> Attack:
    """The attack registered as `name`, configured with keyword `params`.

    `attacker` (the attacker LLM), `embedder` (the attacker's embedder) and `data_dir` (the
    shared data folder with anchor and information files) are passed to the attacks that
    use them and ignored by the others; LLM-driven attacks default to the local model.

    Raises:
        UnknownNameError: unknown attack name (the message lists the valid names).
        ConfigError: a parameter the attack does not take (the message lists the valid ones).
    """
    cls = resolve(ATTACKS, name, kind="attack")
    shared = {"attacker": attacker, "embedder": embedder, "data_dir": data_dir}
    check_parameters(cls, params, kind="attack", name=name, skip=shared)
    accepted = inspect.signature(cls).parameters
    kwargs = {key: value for key, value in shared.items() if key in accepted and value is not None}
    attack: Attack = cls(**kwargs, **params)
    return attack
