"""`openai-chat`: any OpenAI-compatible `/v1/chat/completions` endpoint (ragshield serve, vLLM,
Ollama, LiteLLM, OpenAI, an app's own chat API), streamed or not.

Like the official client, the base URL and the key default to `OPENAI_BASE_URL` and
`OPENAI_API_KEY`. The key is read from the environment variable named by `api_key_env` and
never written anywhere (transcripts, logs, errors).

Refusals are read the way ragshield's own service reports them, which is the OpenAI way:
`finish_reason: content_filter`, a stream ended by an error event with code `output_blocked`
or `request_timeout` (the server failed closed), or HTTP 403 with code `user_blocked`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ragshield.errors import ConfigError
from ragshield.targets.base import TargetError, TargetReply, clip_answer
from ragshield.targets.http import make_client, post_json, sse_events

DEFAULT_BASE_URL = "https://api.openai.com/v1"
REFUSAL_CODES = frozenset({"output_blocked", "request_timeout", "content_filter"})


class OpenAIChatTarget:
    """A chat completions endpoint as an attack target.

    Args:
        model: the model id the endpoint expects (`ragshield serve`: its `model_name`).
        base_url: the root including `/v1`; default `$OPENAI_BASE_URL`, else OpenAI's.
        api_key_env: the environment variable holding the bearer key (default `OPENAI_API_KEY`;
            unset: no Authorization header).
        headers: extra request headers (e.g. a tenant id).
        body: extra body fields merged into every request (e.g. `max_tokens`, `temperature`).
        stream: ask for SSE (True) or one JSON reply (False).
        system_prompt: a system message put first in every request (None: none).
        timeout_s: seconds per request (connect, each read).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        headers: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None,
        stream: bool = False,
        system_prompt: str | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        if not model:
            raise ConfigError("the openai-chat target needs a model (--target-model NAME)")
        self.model = model
        root = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.base_url = root.rstrip("/")
        self.stream = stream
        self.system_prompt = system_prompt
        self.body = dict(body or {})
        reserved = {"model", "messages", "stream"} & set(self.body)
        if reserved:
            raise ConfigError(f"openai-chat body fields {sorted(reserved)} are set by the target; remove them")
        all_headers = dict(headers or {})
        key = os.environ.get(api_key_env)
        if key:
            all_headers["Authorization"] = f"Bearer {key}"
        self._client = make_client(timeout_s, all_headers)

    @property
    def name(self) -> str:
        return f"openai-chat:{self.model}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _payload(self, query: str, history: Sequence[Any]) -> dict[str, Any]:
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        messages += [{"role": turn.role, "content": turn.content} for turn in history]
        messages.append({"role": "user", "content": query})
        return {**self.body, "model": self.model, "messages": messages, "stream": self.stream}

    async def send(self, query: str, history: Sequence[Any] = ()) -> TargetReply:
        started = time.perf_counter()
        try:
            if self.stream:
                text, finish, meta = await self._streamed(self._payload(query, history))
            else:
                text, finish, meta = self._read(await post_json(self._client, self.url, self._payload(query, history)))
        except TargetError as error:
            if error.status == 403 and error.code == "user_blocked":
                return TargetReply("", "blocked", {"code": "user_blocked"}, latency_ms=_ms(started))
            raise
        return TargetReply(clip_answer(text), finish, meta, latency_ms=_ms(started))

    def _read(self, reply: Any) -> tuple[str, str, dict[str, Any]]:
        try:
            choice = reply["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError) as error:
            raise TargetError(f"{self.url} answered without choices[0].message ({error!r})") from error
        return str(text), _finish(choice.get("finish_reason"), reply.get("ragshield")), _meta(reply)

    async def _streamed(self, payload: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
        parts: list[str] = []
        finish, meta = "stop", dict[str, Any]()
        async with sse_events(self._client, self.url, payload) as events:
            async for event in events:
                if not isinstance(event, dict):
                    continue
                if "error" in event:
                    code = str((event["error"] or {}).get("code", "")) if isinstance(event["error"], dict) else ""
                    if code in REFUSAL_CODES:
                        return "".join(parts), "refused", {"code": code}
                    raise TargetError(f"{self.url} ended the stream with error {code or 'event'}", retryable=True)
                meta = _meta(event) or meta
                for choice in event.get("choices") or ():
                    delta = (choice.get("delta") or {}).get("content") or ""
                    parts.append(str(delta))
                    if choice.get("finish_reason"):
                        finish = _finish(choice["finish_reason"], event.get("ragshield"))
        return "".join(parts), finish, meta

    async def aclose(self) -> None:
        await self._client.aclose()


def _finish(reason: Any, extension: Any) -> str:
    if reason == "content_filter" or (isinstance(extension, dict) and extension.get("blocked")):
        return "refused"
    return "length" if reason == "length" else "stop"


def _meta(reply: Mapping[str, Any]) -> dict[str, Any]:
    """Ids and the ragshield extension (booleans and names), never text."""
    meta: dict[str, Any] = {}
    if isinstance(reply.get("id"), str):
        meta["id"] = reply["id"][:100]
    extension = reply.get("ragshield")
    if isinstance(extension, dict):
        meta["ragshield"] = {key: extension[key] for key in ("blocked", "blocked_by", "stage") if key in extension}
    return meta


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
