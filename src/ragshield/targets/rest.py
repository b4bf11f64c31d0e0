"""`rest`: any JSON-over-HTTP chat API, described by a request template and an answer path.

```yaml
target:
  kind: rest
  url: https://support.example.com/api/ask
  headers: {X-Api-Key: "${SUPPORT_KEY}"}     # ${NAME}: read from the environment
  body: {question: "{query}", conversation: "{history}", options: {lang: en}}
  answer: data.reply.text                     # JMESPath; or a JSONPath such as $.data.reply.text
  refused: data.flagged                       # optional: a truthy value means the app refused
  sse: false                                  # true: `data:` events, the answer path read per event
```

In the body template, `{query}` inside any string is replaced by the query, and a string that
is exactly `{history}` by the earlier turns as `[{"role": ..., "content": ...}]` (values are
substituted into the parsed structure, so no quoting can break the JSON). `${NAME}` in header
values is read from the environment, so keys stay out of config files.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ragshield.errors import ConfigError
from ragshield.targets.base import TargetError, TargetReply, clip_answer
from ragshield.targets.http import make_client, post_json, sse_events

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_JSONPATH_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")


def compile_path(expression: str) -> Any:
    """A compiled JMESPath expression; a JSONPath (`$.a.b[0]`, `$['a']`) is translated first.

    Only plain JSONPath steps (names and indices) are translated; anything richer is a
    ConfigError that points to JMESPath, which has filters and projections.
    """
    import jmespath
    from jmespath.exceptions import JMESPathError

    text = expression.strip()
    if text.startswith("$"):
        rest, steps = text[1:], []
        position = 0
        for match in _JSONPATH_STEP.finditer(rest):
            if match.start() != position:
                break
            name, index, quoted = match.groups()
            steps.append(f"[{index}]" if index is not None else '."' + (name or quoted).replace('"', '\\"') + '"')
            position = match.end()
        if position != len(rest):
            raise ConfigError(f"JSONPath {expression!r}: only .name, ['name'] and [N] steps are read; use JMESPath")
        text = "".join(steps).lstrip(".") or "@"
        if text.startswith("["):
            text = "@" + text
    try:
        return jmespath.compile(text)
    except JMESPathError as error:
        raise ConfigError(f"answer path {expression!r} is not valid JMESPath: {error}") from error


def fill(template: Any, query: str, history: list[dict[str, str]]) -> Any:
    """The template with `{query}` and `{history}` substituted (module docstring)."""
    if isinstance(template, str):
        return history if template == "{history}" else template.replace("{query}", query)
    if isinstance(template, list):
        return [fill(item, query, history) for item in template]
    if isinstance(template, dict):
        return {key: fill(value, query, history) for key, value in template.items()}
    return template


def _mentions_query(template: Any) -> bool:
    if isinstance(template, str):
        return "{query}" in template
    if isinstance(template, list):
        return any(_mentions_query(item) for item in template)
    if isinstance(template, dict):
        return any(_mentions_query(value) for value in template.values())
    return False


def expand_env(value: str) -> str:
    """`${NAME}` replaced by the environment variable NAME.

    Raises:
        ConfigError: the variable is not set (named, its value never shown).
    """

    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ConfigError(f"environment variable {name} (used in a rest target header) is not set")
        return os.environ[name]

    return _ENV.sub(lookup, value)


class RestTarget:
    """A JSON HTTP API as an attack target (module docstring: the template).

    Args:
        url: where requests go.
        body: the JSON body template; must contain `{query}` somewhere.
        answer: JMESPath (or plain JSONPath) of the answer text in the reply (or in each SSE event).
        method: HTTP method (POST, PUT).
        headers: request headers; `${NAME}` is read from the environment.
        refused: JMESPath of a value that is truthy when the app refused (None: never).
        sse: read a server-sent event stream and join the answer path's text over its events.
        timeout_s: seconds per request.
    """

    def __init__(
        self,
        url: str,
        *,
        body: Any,
        answer: str,
        method: str = "POST",
        headers: Mapping[str, str] | None = None,
        refused: str | None = None,
        sse: bool = False,
        timeout_s: float = 60.0,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"rest target url must start with http:// or https://, got {url!r}")
        if not _mentions_query(body):
            raise ConfigError("the rest target's body template must contain {query}")
        if method.upper() not in {"POST", "PUT", "PATCH"}:
            raise ConfigError(f"rest target method must be POST, PUT or PATCH, got {method!r}")
        self._url = url
        self.body = body
        self.method = method.upper()
        self.answer_path = compile_path(answer)
        self.refused_path = compile_path(refused) if refused else None
        self.sse = sse
        self._client = make_client(timeout_s, {key: expand_env(value) for key, value in (headers or {}).items()})

    @property
    def name(self) -> str:
        return "rest"

    @property
    def url(self) -> str:
        return self._url

    async def send(self, query: str, history: Sequence[Any] = ()) -> TargetReply:
        started = time.perf_counter()
        turns = [{"role": turn.role, "content": turn.content} for turn in history]
        payload = fill(self.body, query, turns)
        refused = False
        if self.sse:
            parts: list[str] = []
            async with sse_events(self._client, self._url, payload, self.method) as events:
                async for event in events:
                    piece = self.answer_path.search(event)
                    if isinstance(piece, str):
                        parts.append(piece)
                    refused = refused or bool(self.refused_path and self.refused_path.search(event))
            text = "".join(parts)
        else:
            reply = await post_json(self._client, self._url, payload, self.method)
            found = self.answer_path.search(reply)
            if found is not None and not isinstance(found, str):
                raise TargetError(f"{self._url}: the answer path gives a {type(found).__name__}, not text")
            refused = bool(self.refused_path and self.refused_path.search(reply))
            if found is None and not refused:
                raise TargetError(f"{self._url}: the answer path matched nothing in the reply")
            text = found or ""
        latency = (time.perf_counter() - started) * 1000.0
        return TargetReply(clip_answer(text), "refused" if refused else "stop", latency_ms=latency)

    async def aclose(self) -> None:
        await self._client.aclose()
