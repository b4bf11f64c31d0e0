"""`OpenAICompatibleGenerator`: any `/v1/chat/completions` endpoint (vLLM, Ollama, llama.cpp
server, OpenAI), streaming (SSE) and not, over httpx."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import httpx

from ragshield.errors import ConfigError, GenerationError
from ragshield.generators.base import StreamEnd, TokenLogprobs
from ragshield.types import GenerationRequest

MAX_STOP = 4  # the OpenAI API rejects requests with more than 4 stop sequences


class OpenAICompatibleGenerator:
    """Chat completions from an OpenAI-compatible server.

    Args:
        base_url: the server root including `/v1`, e.g. `http://127.0.0.1:8080/v1`.
        model: the model name the server expects.
        api_key: bearer token; default from the environment variable named by `api_key_env`.
        timeout: seconds for connect and for each read.
        stream: use SSE streaming (True) or one JSON response (False).
        repeat_penalty: the llama.cpp-style penalty of the other backends (1.0 = off). The
            OpenAI API has no such parameter, so it is sent as `frequency_penalty =
            repeat_penalty - 1` (clamped to the API's [-2, 2]): an additive penalty per earlier
            occurrence instead of a multiplicative one, close for the small values (1.1-1.3)
            that stop loops. 1.0 sends no penalty at all (the server's default). A value
            other than 1.0 is part of the default `name` (cached generations stay apart).
        max_stop: stop sequences sent per request (the OpenAI API takes at most 4; the first
            ones are sent, so layouts list the most important first). None: all of them
            (vLLM, llama.cpp server).

    Stop sequences (`GenerationRequest.stop`) are sent as `stop`; the server applies them.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080/v1",
        model: str = "default",
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        stream: bool = True,
        repeat_penalty: float = 1.0,
        max_stop: int | None = MAX_STOP,
        name: str | None = None,
    ) -> None:
        if not repeat_penalty > 0:
            raise ConfigError(f"repeat_penalty must be > 0 (1.0 = off), got {repeat_penalty!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get(api_key_env)
        self.timeout = timeout
        self.streaming = stream
        self.repeat_penalty = float(repeat_penalty)
        self.max_stop = max_stop
        self.name = name or f"openai-compatible:{model}"
        if name is None and self.repeat_penalty != 1.0:
            self.name += f"+repeat-penalty-{self.repeat_penalty:g}"
        self._client = httpx.Client(timeout=httpx.Timeout(timeout))

    def _payload(self, request: GenerationRequest, stream: bool) -> dict[str, Any]:
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": stream,
        }
        if request.seed is not None:
            payload["seed"] = request.seed
        if request.stop:
            payload["stop"] = list(request.stop)[: self.max_stop]
        if self.repeat_penalty != 1.0:
            payload["frequency_penalty"] = min(2.0, max(-2.0, self.repeat_penalty - 1.0))
        return payload

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        url = f"{self.base_url}/chat/completions"
        try:
            if not self.streaming:
                reply = self._client.post(url, json=self._payload(request, False), headers=self._headers())
                reply.raise_for_status()
                choice = reply.json()["choices"][0]
                content = choice["message"].get("content") or ""
                if content:
                    yield content
                if choice.get("finish_reason") == "length":
                    yield StreamEnd("length")
                return
            with self._client.stream("POST", url, json=self._payload(request, True), headers=self._headers()) as reply:
                reply.raise_for_status()
                yield from self._read_sse(reply)
        except GeneratorExit:
            raise
        except GenerationError:
            raise
        except httpx.HTTPStatusError as error:
            raise GenerationError(f"endpoint {url} answered HTTP {error.response.status_code}") from error
        except (httpx.HTTPError, KeyError, ValueError) as error:
            raise GenerationError(f"endpoint {url} failed ({type(error).__name__}: {error})") from error

    @staticmethod
    def _read_sse(reply: httpx.Response) -> Iterator[str]:
        finished = False
        for line in reply.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                finished = True
                break
            event = json.loads(data)
            if "error" in event:
                raise GenerationError(f"endpoint sent an error event: {event['error']}")
            choices = event.get("choices") or []
            if not choices:
                continue
            delta = choices[0].get("delta", {}).get("content") or ""
            if delta:
                yield delta
            if choices[0].get("finish_reason"):
                finished = True
                if choices[0]["finish_reason"] == "length":
                    yield StreamEnd("length")
        if not finished:
            raise GenerationError("stream ended before the server finished the answer")

    def logprobs(self, prompt: str, continuation: str) -> TokenLogprobs:
        """Teacher-forced log-probabilities (nats) of `continuation`'s tokens after `prompt`.

        Uses the legacy `/completions` endpoint with `echo: true, logprobs: 1, max_tokens: 1`
        (vLLM, OpenAI-compatible servers that return prompt logprobs); the tokens whose
        `text_offset` falls inside the continuation are kept, the one generated token dropped.
        Put a boundary (a newline) at the end of `prompt`, so no token spans both parts.

        Raises:
            ConfigError: the continuation is empty.
            GenerationError: HTTP failure, or the server returned no prompt logprobs (the
                llama.cpp server, for one, reports logprobs of generated tokens only).
        """
        if not continuation:
            raise ConfigError("nothing to score: the continuation is empty")
        url = f"{self.base_url}/completions"
        payload = {
            "model": self.model,
            "prompt": prompt + continuation,
            "echo": True,
            "logprobs": 1,
            "max_tokens": 1,
            "temperature": 0.0,
        }
        try:
            reply = self._client.post(url, json=payload, headers=self._headers())
            reply.raise_for_status()
            found = reply.json()["choices"][0].get("logprobs") or {}
            starts = list(found.get("text_offset") or [])
            values = list(found.get("token_logprobs") or [])
        except httpx.HTTPStatusError as error:
            raise GenerationError(f"endpoint {url} answered HTTP {error.response.status_code}") from error
        except (httpx.HTTPError, KeyError, IndexError, ValueError, AttributeError) as error:
            raise GenerationError(f"endpoint {url} failed ({type(error).__name__}: {error})") from error
        end = len(prompt) + len(continuation)
        kept = [
            (int(start) - len(prompt), value)
            for start, value in zip(starts, values, strict=False)
            if len(prompt) <= int(start) < end
        ]
        if not kept or kept[0][0] != 0 or any(value is None for _, value in kept):
            raise GenerationError(
                f"endpoint {url} returned no log-probabilities for the prompt's tokens; it needs "
                "echo + logprobs on /completions (vLLM does; the llama.cpp server does not)"
            )
        return TokenLogprobs(tuple(start for start, _ in kept), tuple(float(value) for _, value in kept))

    def close(self) -> None:
        self._client.close()
