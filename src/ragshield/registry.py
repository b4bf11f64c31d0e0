"""Literal name -> "module:attribute" tables, resolved lazily.

Listing names never imports torch, llama.cpp or any model: a target is imported only
when `resolve` is called. Names keep the papers' names (`rag-ct`, `tgtb`, ...).

Defense targets are factories `build(context: DefenseContext, **params) -> Defense`;
generator and embedder targets are classes taking keyword parameters; attack targets are
`Attack` classes; corpus targets are loaders `load(spec_argument, **params) -> Corpus`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ragshield.errors import UnknownNameError

EMBEDDERS: Mapping[str, str] = {
    "sentence-transformers": "ragshield.rag.embedding:SentenceTransformerEmbedder",
    "hashing": "ragshield.rag.embedding:HashingEmbedder",
}

# vector stores behind the retrieval seam (`ragshield.rag.store`); the name is kept in the index manifest
INDEXES: Mapping[str, str] = {
    "faiss": "ragshield.rag.backends.faiss:FaissBackend",
    "chroma": "ragshield.rag.backends.chroma:ChromaBackend",
}

GENERATORS: Mapping[str, str] = {
    "llama-cpp": "ragshield.generators.llama_cpp:LlamaCppGenerator",
    "openai-compatible": "ragshield.generators.openai_compat:OpenAICompatibleGenerator",
    "transformers": "ragshield.generators.transformers_gen:TransformersGenerator",
    "scripted": "ragshield.generators.scripted:ScriptedGenerator",
    "echo-context": "ragshield.generators.scripted:EchoContextGenerator",
}

DEFENSES: Mapping[str, str] = {
    "none": "ragshield.guards.factory:build_no_defense",
    "rag-ct": "ragshield.guards.rag_ct:build_defense",
    "rag-ct-2s": "ragshield.guards.anomaly:build_defense",
    "intent": "ragshield.guards.intent:build_defense",
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
}

ATTACKS: Mapping[str, str] = {
    "tgtb": "ragshield.attacks.tgtb_zeng_2024:TgtbZeng2024",
    "pide": "ragshield.attacks.pide_qi_2024:PideQi2024",
    "rag-thief": "ragshield.attacks.rag_thief_jiang_2024:RagThiefJiang2024",
    "pirates": "ragshield.attacks.pirates_dimaio_2024:PiratesDiMaio2024",
    "canary-suppression": "ragshield.attacks.adaptive:CanarySuppression",
    "canary-obfuscation": "ragshield.attacks.adaptive:CanaryObfuscation",
    "deferred-injection": "ragshield.attacks.adaptive:DeferredInjection",
}

CORPORA: Mapping[str, str] = {
    "synthetic": "ragshield.datasets.synthetic:load_synthetic",
    "healthcaremagic": "ragshield.datasets.loaders:load_healthcaremagic",
    "enron": "ragshield.datasets.loaders:load_enron",
    "jsonl": "ragshield.datasets.loaders:load_jsonl",
    "hf": "ragshield.datasets.loaders:load_hf_dataset",
}

KINDS: Mapping[str, Mapping[str, str]] = {
    "embedders": EMBEDDERS,
    "indexes": INDEXES,
    "generators": GENERATORS,
    "defenses": DEFENSES,
    "attacks": ATTACKS,
    "corpora": CORPORA,
}


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
