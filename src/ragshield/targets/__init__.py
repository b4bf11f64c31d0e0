"""Attack targets: the RAG application a campaign sends its queries to.

`local` (ragshield's own pipeline), `openai-chat` (an OpenAI-compatible chat endpoint), `rest`
(any JSON API, by request template and answer path) and `langchain` (a Runnable by import
path). `TargetSpec` is their YAML shape (in `ragshield attack --target-config` files and in
`targets:` of eval configs); `make_target` builds one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from ragshield.config import _Strict
from ragshield.errors import ConfigError
from ragshield.targets.base import Target, TargetError, TargetReply

__all__ = ["TARGET_KINDS", "Target", "TargetError", "TargetReply", "TargetSpec", "make_target"]

TARGET_KINDS = ("local", "openai-chat", "rest", "langchain")
_CLASSES = {
    "openai-chat": "ragshield.targets.openai_chat:OpenAIChatTarget",
    "rest": "ragshield.targets.rest:RestTarget",
    "langchain": "ragshield.targets.langchain:LangChainTarget",
}


class TargetSpec(_Strict):
    """One target: its `kind`, a `label` naming it in results, how many earlier turns
    (`history`, 0 = single-turn) each query carries, and the kind's `options`.

    ```yaml
    kind: openai-chat
    label: support-bot-prod
    history: 4
    options: {base_url: http://127.0.0.1:8000/v1, model: ragshield, api_key_env: APP_KEY, stream: true}
    ```

    `local` takes `options: {defense: NAME}` inside an eval config (the run's pipeline with that
    defense); the other kinds take their class's keyword arguments (`OpenAIChatTarget`,
    `RestTarget`, `LangChainTarget`).
    """

    kind: Literal["local", "openai-chat", "rest", "langchain"]
    label: str | None = None
    history: int = Field(0, ge=0, le=50)
    options: dict[str, Any] = Field(default_factory=dict)

    @property
    def cell(self) -> str:
        """The name of this target in results (default: the kind, plus the local defense)."""
        if self.label:
            return self.label
        if self.kind == "local":
            return str(self.options.get("defense", "none"))
        return self.kind


def make_target(spec: TargetSpec, *, local: Callable[[TargetSpec], Target] | None = None) -> Target:
    """Build the target of `spec`; `local` builds a `local` one (it needs a pipeline).

    Raises:
        ConfigError: unknown or missing options, or a `local` target without a builder.
    """
    if spec.kind == "local":
        if local is None:
            raise ConfigError("a local target needs an index: use --index (or a local pipeline)")
        return local(spec)
    # lazy, by import path: listing kinds must not import langchain
    module, _, attribute = _CLASSES[spec.kind].partition(":")
    factory: Any = getattr(importlib.import_module(module), attribute)
    try:
        target: Target = factory(**spec.options)
    except TypeError as error:  # an unknown or missing option
        raise ConfigError(f"{spec.kind} target options: {error}") from error
    return target
