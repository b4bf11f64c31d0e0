"""ragshield: defend retrieval-augmented generation against knowledge-base extraction, attack it,
and measure both.

The main entry points: `RagPipeline` (the guarded RAG flow), `build_system` (a pipeline from
an index folder and names), the defenses in `ragshield.guards`, the attacks in
`ragshield.attacks` and the harness in `ragshield.evaluation`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "RagPipeline": "ragshield.pipeline",
    "PromptBuilder": "ragshield.rag.prompting",
    "Retriever": "ragshield.rag.retriever",
    "build_system": "ragshield.system",
    "load_corpus": "ragshield.datasets.base",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ragshield' has no attribute {name!r}")
