"""The composition root: `RagPipeline`, the only orchestration of the guarded RAG flow.

It sits above the guards and below everything that drives it (attacks, evaluation, the
service, the adapters, the CLI); see docs/architecture.md for the layers.
"""

from __future__ import annotations

from ragshield.pipeline.core import DEFAULT_REFUSAL, MAX_QUERY_CHARS, RagPipeline, validate_query

__all__ = ["DEFAULT_REFUSAL", "MAX_QUERY_CHARS", "RagPipeline", "validate_query"]
