"""The `context-echo` defense factory: release containment as a stackable defense.

    defenses: [context-echo]
    defense_params:
      context-echo: {allowance_words: 8, action: redact, pii: true, budget_share: 0.3, budget_store: memory}

Knowledge-base boilerplate (grams in at least `min_df` documents) is computed once per knowledge base
from the retriever's chunks and cached in the process; PII values come from the index's PII spans
(`ragshield index` writes them) or, for an older index, from the analyzer at request time (slower;
the verdicts say which).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragshield.errors import ConfigError
from ragshield.guards.base import Defense
from ragshield.guards.release.budget import make_budget
from ragshield.guards.release.echo import ACTIONS, NAME, ContextEchoGuard, EchoSettings
from ragshield.guards.release.public import FrequentGrams
from ragshield.parameters import forwards
from ragshield.rag.index import corpus_hash
from ragshield.types import Chunk

if TYPE_CHECKING:
    from ragshield.guards.factory import DefenseContext

log = logging.getLogger(__name__)
_FREQUENT: dict[tuple[str, int, int | None], FrequentGrams] = {}
_FREQUENT_LOCK = threading.Lock()


def frequent_grams(chunks: Sequence[Chunk], m: int, min_df: int | None = None) -> FrequentGrams:
    """Knowledge-base boilerplate grams of `chunks`, computed once per corpus and gram length."""
    key = (corpus_hash(chunks), m, min_df)
    with _FREQUENT_LOCK:
        cached = _FREQUENT.get(key)
        if cached is None:
            cached = _FREQUENT[key] = FrequentGrams.from_chunks(chunks, m, min_df=min_df)
            log.info("context-echo: %d boilerplate grams in %d chunks", len(cached.hashes), len(chunks))
        return cached


def _settings(params: dict[str, Any]) -> EchoSettings:
    fields = EchoSettings.__dataclass_fields__
    unknown = sorted(set(params) - set(fields))
    if unknown:
        valid = ", ".join(sorted({*fields, "pii", "budget_store", "min_df"}))
        raise ConfigError(f"unknown context-echo parameter(s) {', '.join(unknown)}; valid: {valid}")
    settings = EchoSettings(**params)
    if settings.action not in ACTIONS:
        raise ConfigError(f"context-echo action must be one of {', '.join(ACTIONS)}, not {settings.action!r}")
    if settings.allowance_words is None and settings.allowance_chars is None:
        raise ConfigError("context-echo needs allowance_words or allowance_chars")
    if settings.allowance_words is not None and settings.allowance_words < 1:
        raise ConfigError("context-echo allowance_words must be >= 1")
    if settings.allowance_chars is not None and settings.allowance_chars < settings.gram:
        raise ConfigError(f"context-echo allowance_chars must be >= gram ({settings.gram})")
    if not 4 <= settings.gram <= 64 or not 2 <= settings.pii_gram <= settings.gram:
        raise ConfigError("context-echo gram must be in [4, 64] and pii_gram in [2, gram]")
    if not 0.0 < settings.budget_share <= 1.0:
        raise ConfigError("context-echo budget_share must be in (0, 1]")
    return settings


@forwards(EchoSettings)
def build_guard(
    context: DefenseContext,
    *,
    pii: bool = True,
    budget_store: str | None = "memory",
    min_df: int | None = None,
    **params: Any,
) -> ContextEchoGuard:
    """A `ContextEchoGuard` for the system in `context` (see the module docstring).

    Args:
        pii: contain the retrieved records' PII values too.
        budget_store: `memory`, `sqlite:PATH`, or None (no per-user release budget).
        min_df: documents a gram must occur in to count as boilerplate (default: 0.5%, at least 3).
        params: `EchoSettings` fields.

    Raises:
        ConfigError: an unknown parameter or an invalid value.
    """
    settings = _settings(params)
    chunks = _knowledge_base(context)
    frequent = frequent_grams(chunks, settings.gram, min_df) if chunks else None
    store, originals = (None, None)
    if pii:
        store, originals = _pii_store(context, chunks)
    budget = make_budget(budget_store) if budget_store else None
    return ContextEchoGuard(NAME, settings, frequent, store, originals, budget)


@forwards(build_guard)
def build_defense(context: DefenseContext, **params: Any) -> Defense:
    """Release containment: retrieved text beyond an allowance, retrieved PII and unnatural output
    are withheld from the answer (whoever asks), and the answer goes on."""
    guard = build_guard(context, **params)
    return Defense(name=NAME, output_guards=(guard,), fail_closed=context.fail_closed)


def _knowledge_base(context: DefenseContext) -> list[Chunk]:
    index = getattr(context.retriever, "index", None)
    chunks = getattr(index, "chunks", None)
    return list(chunks) if chunks else []


def _pii_store(context: DefenseContext, chunks: Sequence[Chunk]) -> tuple[Any, Callable[[str], Chunk | None] | None]:
    from ragshield.pii.store import open_chunk_pii_store

    store = open_chunk_pii_store(getattr(context, "index_dir", None))
    by_id = {chunk.id: chunk for chunk in chunks}
    return store, (by_id.get if by_id else None)
