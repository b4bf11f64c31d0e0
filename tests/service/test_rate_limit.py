"""Per-key rate limit over a real server and real clients: 429 with Retry-After past the limit, per
key, shared by replicas through Redis, and failing closed when that store is down."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from service_helpers import KEY, KEYS

from ragshield.service.app import create_app
from ragshield.service.server import BackgroundServer, free_port
from ragshield.service.settings import ServeConfig

pytestmark = pytest.mark.service
BODY = {
    "query": "How long does acne take to clear?",
    "chunks": [{"id": "a", "text": "Acne often clears in weeks.", "similarity": 0.6}],
}


@contextmanager
def guard_server(**settings: Any) -> Iterator[BackgroundServer]:
    """A guard-only server (no index, no model) running RAG-CT on the scores clients send."""
    config = ServeConfig.model_validate({"api_keys": KEYS, "defenses": ["rag-ct"], **settings})
    with BackgroundServer(create_app(config, warm_up=False)) as server:
        yield server


def _ask(server: BackgroundServer, user: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {KEY[user]}"}
    return httpx.post(f"{server.url}/v1/guard/query", json=BODY, headers=headers, timeout=30.0)


def test_past_the_limit_a_key_gets_429_with_retry_after_and_other_keys_do_not() -> None:
    with guard_server(rate_limit={"requests": 2, "per_seconds": 60}) as server:
        assert [_ask(server, "alice").status_code for _ in range(2)] == [200, 200]
        refused = _ask(server, "alice")
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limit_exceeded"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert _ask(server, "carol").status_code == 200  # the limit is per key
        metrics = httpx.get(f"{server.url}/metrics", timeout=10.0).text
        assert 'outcome="rate_limited"' in metrics


def test_replicas_share_the_limit_through_the_policy_redis(redis_url: str) -> None:
    policy = {"store": redis_url}
    limit = {"requests": 3, "per_seconds": 60}
    with (
        guard_server(rate_limit=limit, policy=policy) as first,
        guard_server(rate_limit=limit, policy=policy) as second,
    ):
        codes = [_ask(first, "eve").status_code, _ask(second, "eve").status_code, _ask(first, "eve").status_code]
        assert codes == [200, 200, 200]
        assert _ask(second, "eve").status_code == 429  # the fourth request, whichever replica gets it


def test_an_unreachable_rate_limit_store_fails_closed() -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    with guard_server(rate_limit={"requests": 5, "per_seconds": 60, "store": down}) as server:
        reply = _ask(server, "mallory")
        assert reply.status_code == 503
        assert reply.json()["error"]["code"] == "rate_limit_store_unavailable"
