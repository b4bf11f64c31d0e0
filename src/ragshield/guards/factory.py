"""Build a `Defense` from a registry name such as `rag-ct` or `rag-ct+canary-rag`.

Every defense factory takes a `DefenseContext` (the parts of the running RAG system a
defense may need) plus its own keyword parameters, and returns a `Defense`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragshield.errors import ConfigError
from ragshield.guards.base import NO_DEFENSE, Defense, ViolationPolicy
from ragshield.parameters import check_parameters
from ragshield.registry import DEFENSES, resolve
from ragshield.types import RetrievalResult

if TYPE_CHECKING:
    from ragshield.generators.base import Generator
    from ragshield.rag.embedding import Embedder
    from ragshield.rag.retriever import Retriever


@dataclass
class DefenseContext:
    """What a defense factory may use from the system it protects.

    `generator` is the target model (baselines that rewrite or summarise use it);
    `oracle_generator` is the model for CanaryRAG's oracle path (None: the target model);
    `calibration` is benign traffic (retrievals) that trainable guards fit on;
    `target_fpr` is the false-positive rate calibrated guards aim for;
    `index_dir` is the index folder the retriever reads (None: unknown), where guards find
    stored per-chunk data such as PII spans (`ragshield.pii.open_chunk_pii_store`).
    """

    retriever: Retriever | None = None
    embedder: Embedder | None = None
    generator: Generator | None = None
    oracle_generator: Generator | None = None
    k: int = 3
    calibration: Sequence[RetrievalResult] = ()
    target_fpr: float = 0.01
    policy: ViolationPolicy | None = None
    fail_closed: bool = True
    seed: int = 0
    extras: dict[str, Any] = field(default_factory=dict)
    index_dir: str | None = None

    def require_calibration(self, what: str, alternative: str = "") -> Sequence[RetrievalResult]:
        """The benign calibration traffic, or ConfigError saying how to give it (`what` is the guard
        that needs it; `alternative` an option that needs none, e.g. "; or keep the shipped threshold")."""
        if not self.calibration:
            raise ConfigError(
                f"{what} must be fitted on benign calibration queries: pass --fit BENIGN.jsonl (scan), "
                f"--calibration BENIGN.jsonl (ask) or `calibration: {{path: ...}}` in the config{alternative}"
            )
        return self.calibration

    def __post_init__(self) -> None:
        if self.embedder is not None and not callable(getattr(self.embedder, "embed", None)):
            raise ConfigError(
                "the embedder must be a ragshield Embedder (embed(texts) -> vectors), "
                f"got {type(self.embedder).__name__}; "
                "wrap LangChain or LlamaIndex embeddings with ragshield.integrations.embeddings.as_embedder "
                "(Shield.build(embedder=...) does it for you)"
            )


def build_no_defense(context: DefenseContext) -> Defense:
    """No defense: the undefended pipeline."""
    return NO_DEFENSE


def build_defense(
    spec: str,
    context: DefenseContext,
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> Defense:
    """Build a defense from a name; `a+b` stacks defenses in order.

    Args:
        spec: a registry name (`ragshield list defenses`) or several joined with `+`.
        context: the system parts the factories may use.
        params: per-name keyword parameters, e.g. `{"rag-ct": {"tau": 0.4}}`.

    Raises:
        UnknownNameError: a name is not registered.
        ConfigError: the spec is empty, or a parameter a defense does not take (the message
            lists the valid ones).
    """
    names = [part.strip() for part in spec.split("+") if part.strip()]
    if not names:
        raise ConfigError("empty defense name; use 'none' for no defense")
    defense = NO_DEFENSE
    for name in names:
        factory = resolve(DEFENSES, name, kind="defense")
        options = dict((params or {}).get(name, {}))
        check_parameters(factory, options, kind="defense", name=name, skip=("context",))
        part = factory(context, **options)
        defense = defense + part
    return Defense(
        name=spec if defense.name == "none" and spec != "none" else defense.name,
        rewriters=defense.rewriters,
        query_guards=defense.query_guards,
        decorators=defense.decorators,
        output_guards=defense.output_guards,
        fail_closed=context.fail_closed and defense.fail_closed,
    )
