"""Literal name -> "module:attribute" tables, resolved lazily, plus plugins from entry points.

Listing names never imports torch, llama.cpp, any model or any plugin module: a target is
imported only when `resolve` is called. Names keep the papers' names (`rag-ct`, `tgtb`, ...).

Third parties add components without editing ragshield: a distribution declares entry points
in the groups `ragshield.defenses`, `ragshield.attacks`, `ragshield.generators` and
`ragshield.corpora` (in pyproject: `[project.entry-points."ragshield.defenses"]
my-guard = "my_pkg.guard:build_defense"`), with targets of the same shape as the built-ins'.
Entry points are read from the installed distributions' metadata each time a table is listed
or resolved (so a plugin installed while running is seen); a plugin cannot replace a
built-in name (the built-in wins, with a warning).

Defense targets are factories `build(context: DefenseContext, **params) -> Defense`;
generator and embedder targets are classes taking keyword parameters; attack targets are
`Attack` classes; corpus targets are loaders `load(spec_argument, **params) -> Corpus`.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from ragshield.errors import UnknownNameError

log = logging.getLogger(__name__)
BUILTIN = "built-in"


@dataclass(frozen=True)
class Entry:
    """One registered component: its `target` ("module:attribute"), `source` (`built-in` or the
    distribution that provides it) and, for plugins, the distribution's one-line summary."""

    name: str
    target: str
    source: str = BUILTIN
    summary: str = ""


class Registry(Mapping[str, str]):
    """A name -> "module:attribute" table: the built-ins plus the entry points of `group`.

    A read-only mapping, so `resolve(table, name)`, `sorted(table)` and `name in table` work
    on built-ins and plugins alike; `entries()` says where each comes from.
    """

    def __init__(self, group: str, builtins: Mapping[str, str]) -> None:
        self.group = group
        self.builtins: Mapping[str, str] = dict(builtins)

    def _plugins(self) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        for point in metadata.entry_points(group=self.group):
            if point.name in self.builtins:
                log.warning("plugin %s of %s ignored: %r is a built-in name", point.value, self.group, point.name)
                continue
            dist = getattr(point, "dist", None)
            source = dist.name if dist is not None else "unknown distribution"
            summary = (dist.metadata.get("Summary") or "") if dist is not None else ""
            found.setdefault(point.name, Entry(point.name, point.value, source, summary))
        return found

    def entries(self) -> list[Entry]:
        """Built-ins in table order, then plugins by name; nothing is imported."""
        builtins = [Entry(name, target) for name, target in self.builtins.items()]
        return builtins + sorted(self._plugins().values(), key=lambda entry: entry.name)

    def __getitem__(self, name: str) -> str:
        if name in self.builtins:
            return self.builtins[name]
        return self._plugins()[name].target

    def __iter__(self) -> Iterator[str]:
        return iter([entry.name for entry in self.entries()])

    def __len__(self) -> int:
        return len(self.entries())


EMBEDDERS: Mapping[str, str] = {
    "sentence-transformers": "ragshield.rag.embedding:SentenceTransformerEmbedder",
    "hashing": "ragshield.rag.embedding:HashingEmbedder",
    "multilingual-e5-small": "ragshield.rag.embedding:MultilingualE5Embedder",
}

# vector stores behind the retrieval seam (`ragshield.rag.store`); the name is kept in the index manifest
INDEXES: Mapping[str, str] = {
    "faiss": "ragshield.rag.backends.faiss:FaissBackend",
    "chroma": "ragshield.rag.backends.chroma:ChromaBackend",
}

GENERATORS = Registry(
    "ragshield.generators",
    {
        "llama-cpp": "ragshield.generators.llama_cpp:LlamaCppGenerator",
        "openai-compatible": "ragshield.generators.openai_compat:OpenAICompatibleGenerator",
        "transformers": "ragshield.generators.transformers_gen:TransformersGenerator",
        "scripted": "ragshield.generators.scripted:ScriptedGenerator",
        "echo-context": "ragshield.generators.scripted:EchoContextGenerator",
    },
)

DEFENSES = Registry(
    "ragshield.defenses",
    {
        "none": "ragshield.guards.factory:build_no_defense",
        "rag-ct": "ragshield.guards.rag_ct:build_defense",
        "rag-ct-2s": "ragshield.guards.anomaly:build_defense",
        "intent": "ragshield.guards.intent_defense:build_defense",
        "query-shield": "ragshield.guards.shield:build_defense",
        "canary-rag": "ragshield.guards.canary.defense:build_defense",
        "rephrase": "ragshield.guards.baselines.rephrase:build_defense",
        "summarize": "ragshield.guards.baselines.summarize:build_defense",
        "rule-based": "ragshield.guards.baselines.rules:build_defense",
        "erase-check": "ragshield.guards.baselines.erase_check:build_defense",
        "similarity-threshold": "ragshield.guards.baselines.similarity_threshold:build_defense",
        "rerank": "ragshield.guards.baselines.rerank:build_defense",
        "pii-redact": "ragshield.guards.baselines.pii_redact:build_defense",
        "context-echo": "ragshield.guards.release.defense:build_defense",
        "shield": "ragshield.guards.layered:build_defense",
    },
)

ATTACKS = Registry(
    "ragshield.attacks",
    {
        "tgtb": "ragshield.attacks.tgtb_zeng_2024:TgtbZeng2024",
        "pide": "ragshield.attacks.pide_qi_2024:PideQi2024",
        "rag-thief": "ragshield.attacks.rag_thief_jiang_2024:RagThiefJiang2024",
        "pirates": "ragshield.attacks.pirates_dimaio_2024:PiratesDiMaio2024",
        "canary-suppression": "ragshield.attacks.adaptive:CanarySuppression",
        "canary-obfuscation": "ragshield.attacks.adaptive:CanaryObfuscation",
        "deferred-injection": "ragshield.attacks.adaptive:DeferredInjection",
        "encoded-command": "ragshield.attacks.adaptive:EncodedCommand",
    },
)

CORPORA = Registry(
    "ragshield.corpora",
    {
        "synthetic": "ragshield.datasets.synthetic:load_synthetic",
        "healthcaremagic": "ragshield.datasets.loaders:load_healthcaremagic",
        "enron": "ragshield.datasets.loaders:load_enron",
        "jsonl": "ragshield.datasets.loaders:load_jsonl",
        "hf": "ragshield.datasets.loaders:load_hf_dataset",
    },
)

KINDS: Mapping[str, Mapping[str, str]] = {
    "embedders": EMBEDDERS,
    "indexes": INDEXES,
    "generators": GENERATORS,
    "defenses": DEFENSES,
    "attacks": ATTACKS,
    "corpora": CORPORA,
}


def entries_of(table: Mapping[str, str]) -> list[Entry]:
    """Where each name of a table comes from (a plain table holds built-ins only)."""
    if isinstance(table, Registry):
        return table.entries()
    return [Entry(name, target) for name, target in table.items()]


def resolve(table: Mapping[str, str], name: str, *, kind: str = "name") -> Any:
    """Import and return the object registered under `name`.

    Raises:
        UnknownNameError: `name` is not in the table (the message lists the valid names).
    """
    try:
        target = table[name]
    except KeyError:
        valid = ", ".join(sorted(table))
        raise UnknownNameError(f"unknown {kind} {name!r}; valid names: {valid}") from None
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute)


def summary(table: Mapping[str, str], name: str) -> str:
    """The first docstring line of a registered object (imports its module)."""
    doc = getattr(resolve(table, name), "__doc__", None) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""
