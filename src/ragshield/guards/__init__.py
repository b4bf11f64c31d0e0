"""Runtime defenses: query guards, context decorators and output monitors.

Public names are resolved lazily so that `import ragshield.guards` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from ragshield.guards.base import Defense, OutputGuard, OutputMonitor, QueryGuard

_LAZY = {
    "RagCT": "ragshield.guards.rag_ct",
    "RetrievalAnomaly": "ragshield.guards.anomaly",
    "ExtractionIntent": "ragshield.guards.intent",
    "QueryShield": "ragshield.guards.shield",
    "build_defense": "ragshield.guards.factory",
    "DefenseContext": "ragshield.guards.factory",
}

__all__ = ["Defense", "OutputGuard", "OutputMonitor", "QueryGuard", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ragshield.guards' has no attribute {name!r}")
