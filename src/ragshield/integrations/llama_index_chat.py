"""A guarded LlamaIndex chat engine (`pip install 'ragshield[llamaindex]'`).

`GuardedChatEngine` wraps a chat engine whose retrieval runs `GuardNodePostprocessor`
(`index.as_chat_engine(chat_mode="context", node_postprocessors=[GuardNodePostprocessor(...)])`,
or `condense_plus_context`): every answer, streamed or whole, sync or async, goes through the
shield's output guards, and a halted answer ends with the refusal (`on_block="refuse"`, the
default) or raises `GuardBlockedError`.

The wrapped engine writes the model's own answer into its memory, which the next turn sends
back to the model. So after each turn the last assistant message in memory is replaced with
what the user was shown (the refusal, the redacted text); an engine whose memory cannot be
rewritten (no `_memory` with `get_all` / `set`) is reset instead, losing the history rather
than keeping a leak in it.

```python
chat = GuardedChatEngine(index.as_chat_engine(chat_mode="context", llm=llm,
                         node_postprocessors=[GuardNodePostprocessor(shield=shield)]), shield)
print(chat.chat("What helps a stiff neck?"))
```
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from ragshield.errors import missing_extra
from ragshield.integrations.llama_index import stream_outcome, undecorated_nodes
from ragshield.integrations.runs import GuardedRun, guarded_run, require_guarded_retrieval
from ragshield.integrations.shield import GuardBlockedError, Shield
from ragshield.integrations.streaming import OnBlock, release
from ragshield.types import Query
from ragshield.types import Response as ShieldResponse

try:
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
    from llama_index.core.chat_engine.types import (
        AgentChatResponse,
        BaseChatEngine,
        StreamingAgentChatResponse,
    )
except ImportError as error:  # pragma: no cover - depends on the install
    raise missing_extra("llama-index-core", "llamaindex") from error

__all__ = ["GuardedChatEngine", "GuardedStreamingChatResponse"]

logger = logging.getLogger(__name__)
_END = object()


@dataclass
class GuardedStreamingChatResponse(StreamingAgentChatResponse):
    """A streamed guarded answer; `metadata["ragshield"]` is `{"blocked": None, "stage": None}`
    until the stream is consumed, then says whether it was halted and where."""

    metadata: dict[str, Any] = field(default_factory=dict)


class GuardedChatEngine(BaseChatEngine):
    """A chat engine whose answers pass ragshield's output guards (see the module docstring).

    Args:
        engine: a chat engine that retrieves through `GuardNodePostprocessor`.
        shield: the same shield the postprocessor uses.
        user_id: the policy's user id.
        on_block: `refuse` (answer with the refusal, the default) or `raise` (`GuardBlockedError`).
    """

    def __init__(
        self, engine: BaseChatEngine, shield: Shield, *, user_id: str = "anonymous", on_block: OnBlock = "refuse"
    ) -> None:
        self.engine = engine
        self.shield = shield
        self.user_id = user_id
        self.on_block = on_block

    def for_user(self, user_id: str) -> GuardedChatEngine:
        """The same engine (and conversation) answering for another user (the policy counts per user)."""
        return GuardedChatEngine(self.engine, self.shield, user_id=user_id, on_block=self.on_block)

    def reset(self) -> None:
        self.engine.reset()

    @property
    def chat_history(self) -> list[ChatMessage]:
        return list(self.engine.chat_history)

    def _query(self, message: str) -> Query:
        return Query(str(message), user_id=self.user_id)

    def _refused(self, response: ShieldResponse, stage: str) -> AgentChatResponse:
        if self.on_block == "raise":
            raise GuardBlockedError(f"blocked by a guard at the {stage} stage", response)
        status = {"blocked": True, "stage": stage}
        return AgentChatResponse(response=self.shield.refusal, metadata={"ragshield": status})

    def _remember(self, shown: str) -> None:
        """Make the engine's memory hold what the user was shown as the last answer."""
        memory = getattr(self.engine, "_memory", None)
        try:
            assert memory is not None
            messages = list(memory.get_all())
            last = next(m for m in reversed(messages) if m.role == MessageRole.ASSISTANT)
            if last.content != shown:
                last.content = shown
                memory.set(messages)
        except Exception as error:  # an unknown memory: forget rather than keep a leak
            kind = type(self.engine).__name__
            logger.warning("chat memory of %s not rewritable (%s); conversation reset", kind, type(error).__name__)
            self.engine.reset()

    def chat(self, message: str, chat_history: list[ChatMessage] | None = None) -> AgentChatResponse:
        with guarded_run(self.user_id) as run:
            try:
                answer = self.engine.chat(message, chat_history)
            except GuardBlockedError as blocked:
                return self._refused(blocked.response, "query")
        require_guarded_retrieval(run, self.shield, "GuardedChatEngine")
        raw = str(answer.response or "")
        checked = self.shield.check_output(run.decorated(self._query(message)), raw)
        halted = checked.finish_reason in {"blocked", "refused"}
        self._remember(self.shield.refusal if halted else checked.text)
        if halted:
            return self._refused(checked, "output")
        return AgentChatResponse(
            response=checked.text,
            source_nodes=undecorated_nodes(list(answer.source_nodes), run.originals()),
            metadata={"ragshield": {"blocked": False, "stage": None}},
        )

    def stream_chat(self, message: str, chat_history: list[ChatMessage] | None = None) -> GuardedStreamingChatResponse:
        with guarded_run(self.user_id) as run:
            try:
                inner = self.engine.stream_chat(message, chat_history)
            except GuardBlockedError:
                if self.on_block == "raise":
                    raise
                return self._streamed(iter((self.shield.refusal,)), [], {"blocked": True, "stage": "query"})
        require_guarded_retrieval(run, self.shield, "GuardedChatEngine")
        status: dict[str, Any] = {"blocked": None, "stage": None}
        texts = self._monitored(inner, run, self._query(message), status)
        return self._streamed(texts, undecorated_nodes(list(inner.source_nodes), run.originals()), status)

    def _monitored(
        self, inner: StreamingAgentChatResponse, run: GuardedRun, query: Query, status: dict[str, Any]
    ) -> Generator[str, None, None]:
        deltas = inner.response_gen
        shown: list[str] = []
        try:
            for text in release(
                self.shield.monitor(run.decorated(query), deltas),
                refusal=self.shield.refusal,
                on_block=self.on_block,
                on_final=lambda final: status.update(stream_outcome(final)),
            ):
                shown.append(text)
                yield text
        finally:
            deltas.close()  # waits for the engine's memory writer, so the rewrite below comes last
            self._remember("".join(shown))

    def _streamed(
        self, texts: Iterator[str], source_nodes: list[Any], status: dict[str, Any]
    ) -> GuardedStreamingChatResponse:
        def chat_stream() -> Generator[ChatResponse, None, None]:
            so_far = ""
            for text in texts:
                so_far += text
                yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=so_far), delta=text)

        sync_stream = chat_stream()

        async def achat_stream() -> AsyncGenerator[ChatResponse, None]:
            while (item := await asyncio.to_thread(next, sync_stream, _END)) is not _END:
                assert isinstance(item, ChatResponse)
                yield item

        return GuardedStreamingChatResponse(
            chat_stream=sync_stream,
            achat_stream=achat_stream(),
            source_nodes=source_nodes,
            is_writing_to_memory=False,
            metadata={"ragshield": status},
        )

    async def achat(self, message: str, chat_history: list[ChatMessage] | None = None) -> AgentChatResponse:
        return await asyncio.to_thread(self.chat, message, chat_history)

    async def astream_chat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> GuardedStreamingChatResponse:
        return await asyncio.to_thread(self.stream_chat, message, chat_history)
