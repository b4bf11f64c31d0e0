"""`langchain`: a LangChain `Runnable` (a chain, an agent, a LangGraph graph) given by import path.

`module.path:attribute` names the Runnable, or a function with no arguments that returns
one (so an app can build its chain lazily). The Runnable receives the query as a plain string,
or, with `input_key`, a dict `{input_key: query}` plus `{history_key: [messages]}` for
multi-turn chains. Its output may be a string, a message (its `content`), or a dict (the
`output_key` entry, default `answer`).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from typing import Any

from ragshield.errors import ConfigError, missing_extra
from ragshield.targets.base import TargetError, TargetReply, clip_answer


def load_object(path: str) -> Any:
    """The object at `module.path:attribute` (dots after the colon walk attributes).

    Raises:
        ConfigError: malformed path, or the module or attribute does not exist.
    """
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"import path {path!r} must look like 'package.module:attribute'")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"cannot import {module_name!r} for {path!r}: {error}") from error
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ConfigError(f"{module_name!r} has no attribute {attribute!r}")
        value = getattr(value, part)
    return value


class LangChainTarget:
    """A LangChain Runnable as an attack target (module docstring: inputs and outputs).

    Args:
        runnable: the import path `module:attribute`, or the Runnable itself.
        input_key: send `{input_key: query}` instead of the bare query string.
        history_key: with `input_key`, also send the earlier turns as LangChain messages.
        output_key: the answer's key when the Runnable returns a dict.
        refused_key: a boolean key of a dict output that marks a refusal (None: never).
    """

    def __init__(
        self,
        runnable: Any,
        *,
        input_key: str | None = None,
        history_key: str | None = None,
        output_key: str = "answer",
        refused_key: str | None = None,
    ) -> None:
        try:
            from langchain_core.runnables import Runnable
        except ImportError as error:
            raise missing_extra("langchain-core", "langchain") from error
        self._path = runnable if isinstance(runnable, str) else type(runnable).__name__
        value = load_object(runnable) if isinstance(runnable, str) else runnable
        if not isinstance(value, Runnable) and callable(value):
            value = value()
        if not isinstance(value, Runnable):
            raise ConfigError(f"{self._path!r} is not a LangChain Runnable (got {type(value).__name__})")
        if history_key and not input_key:
            raise ConfigError("a langchain target's history_key needs an input_key")
        self.runnable = value
        self.input_key = input_key
        self.history_key = history_key
        self.output_key = output_key
        self.refused_key = refused_key

    @property
    def name(self) -> str:
        return f"langchain:{self._path}"

    @property
    def url(self) -> str:
        return f"langchain runnable {self._path}"

    def _input(self, query: str, history: Sequence[Any]) -> Any:
        if self.input_key is None:
            return query
        payload: dict[str, Any] = {self.input_key: query}
        if self.history_key:
            from langchain_core.messages import AIMessage, HumanMessage

            payload[self.history_key] = [
                AIMessage(content=turn.content) if turn.role == "assistant" else HumanMessage(content=turn.content)
                for turn in history
            ]
        return payload

    async def send(self, query: str, history: Sequence[Any] = ()) -> TargetReply:
        started = time.perf_counter()
        try:
            output = await self.runnable.ainvoke(self._input(query, history))
        except Exception as error:  # the app's own failure: retried; only its type is shown, as
            # its message may quote the query or retrieved text
            raise TargetError(f"{self.url} raised {type(error).__name__}", retryable=True) from error
        refused = False
        if isinstance(output, dict):
            refused = bool(self.refused_key and output.get(self.refused_key))
            output = output.get(self.output_key, "")
        text = getattr(output, "content", output)
        if not isinstance(text, str):
            raise TargetError(f"{self.url} returned {type(text).__name__}, not text")
        latency = (time.perf_counter() - started) * 1000.0
        return TargetReply(clip_answer(text), "refused" if refused else "stop", latency_ms=latency)

    async def aclose(self) -> None:
        return None
