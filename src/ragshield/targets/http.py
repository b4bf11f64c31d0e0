"""What the HTTP targets share: one async client, error mapping, and SSE reading.

Every failure becomes a `TargetError` that names the URL and the cause; timeouts, dropped
connections, 408, 429 and 5xx are retryable (with the server's `Retry-After`), other 4xx are
not (a wrong key or a malformed request will not heal by waiting).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx

from ragshield.targets.base import RETRY_STATUSES, TargetError, retry_after_seconds

#: the most bytes read of one non-streamed reply (a hostile server must not fill memory)
MAX_REPLY_BYTES = 4 * 1024 * 1024


def make_client(timeout_s: float, headers: Mapping[str, str]) -> httpx.AsyncClient:
    """An async client with a per-request timeout (connect, read, write and pool, seconds).

    TCP_NODELAY: httpx writes a request's headers and body separately, and with Nagle's
    algorithm the body then waits for the server's delayed ACK (about 200 ms per request on
    loopback, measured in benchmarks/campaign.py)."""
    transport = httpx.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s), headers=dict(headers), follow_redirects=False, transport=transport
    )


async def status_error(url: str, reply: httpx.Response) -> TargetError:
    """The error of a reply with status >= 400; `code` is the OpenAI-style `error.code` of its
    body when it has one (e.g. `user_blocked`), read from at most 64 KiB."""
    status = reply.status_code
    body = bytearray()
    async for part in reply.aiter_bytes():
        body.extend(part)
        if len(body) > 65536:
            break
    code = None
    try:
        error = json.loads(bytes(body)).get("error")
        code = str(error.get("code"))[:64] if isinstance(error, dict) and error.get("code") else None
    except (ValueError, AttributeError):
        pass
    return TargetError(
        f"{url} answered HTTP {status}" + (f" ({code})" if code else ""),
        retryable=status in RETRY_STATUSES,
        retry_after=retry_after_seconds(reply.headers.get("retry-after")),
        status=status,
        code=code,
    )


def transport_error(url: str, error: httpx.HTTPError) -> TargetError:
    """A connection-level failure: unreachable when nothing accepted the connection."""
    unreachable = isinstance(error, httpx.ConnectError)
    cause = "timed out" if isinstance(error, httpx.TimeoutException) else "failed"
    detail = str(error) or type(error).__name__
    return TargetError(f"{url} {cause} ({type(error).__name__}: {detail})", retryable=True, unreachable=unreachable)


async def post_json(client: httpx.AsyncClient, url: str, body: Any, method: str = "POST") -> Any:
    """Send `body` as JSON and return the decoded JSON reply.

    Raises:
        TargetError: transport failure, an error status, a reply over `MAX_REPLY_BYTES`, or not JSON.
    """
    try:
        async with client.stream(method, url, json=body) as reply:
            if reply.status_code >= 400:
                raise await status_error(url, reply)
            data = bytearray()
            async for part in reply.aiter_bytes():
                data.extend(part)
                if len(data) > MAX_REPLY_BYTES:
                    raise TargetError(f"{url} sent a reply over {MAX_REPLY_BYTES} bytes")
    except httpx.HTTPError as error:
        raise transport_error(url, error) from error
    try:
        return json.loads(bytes(data))
    except ValueError as error:
        raise TargetError(f"{url} answered with a body that is not JSON ({error})") from error


@asynccontextmanager
async def sse_events(client: httpx.AsyncClient, url: str, body: Any, method: str = "POST") -> AsyncIterator[Any]:
    """The JSON `data:` events of a server-sent event stream, until `[DONE]` or its end.

    Raises:
        TargetError: transport failure, an error status, or an event that is not JSON.
    """

    async def events(reply: httpx.Response) -> AsyncIterator[Any]:
        try:
            async for line in reply.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[len("data:") :].strip()
                if data == "[DONE]":
                    return
                try:
                    yield json.loads(data)
                except ValueError as error:
                    raise TargetError(f"{url} sent an event that is not JSON ({error})") from error
        except httpx.HTTPError as error:
            raise transport_error(url, error) from error

    try:
        async with client.stream(method, url, json=body, headers={"Accept": "text/event-stream"}) as reply:
            if reply.status_code >= 400:
                raise await status_error(url, reply)
            yield events(reply)
    except httpx.HTTPError as error:
        raise transport_error(url, error) from error
