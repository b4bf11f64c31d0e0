"""Two service replicas share one blocking state through a real redis-server on loopback: a user
blocked through one replica is refused by the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from service_helpers import EXTRACTION, client, openai, running, serve_config

from ragshield.generators.scripted import EchoContextGenerator

pytestmark = pytest.mark.service


def test_a_block_on_one_replica_holds_on_the_other(
    redis_url: str, synthetic_index: Path, synthetic_retriever: Any, benign_file: Path, tmp_path: Path
) -> None:
    policy = {"window": 10, "k": 2, "block_seconds": 3600, "store": redis_url}
    first = serve_config(synthetic_index, benign_file, tmp_path / "a", policy=policy)
    second = serve_config(synthetic_index, benign_file, tmp_path / "b", policy=policy)
    with (
        running(first, synthetic_retriever, EchoContextGenerator()) as (replica_a, _),
        running(second, synthetic_retriever, EchoContextGenerator()) as (replica_b, _),
    ):
        ask = [{"role": "user", "content": EXTRACTION}]
        client(replica_a, "mallory").chat.completions.create(model="ragshield", messages=ask)
        client(replica_b, "mallory").chat.completions.create(model="ragshield", messages=ask)  # 2nd violation
        for replica in (replica_a, replica_b):
            with pytest.raises(openai.PermissionDeniedError) as caught:
                client(replica, "mallory").chat.completions.create(
                    model="ragshield", messages=[{"role": "user", "content": "How do I treat a minor burn?"}]
                )
            assert caught.value.code == "user_blocked"
        reply = client(replica_b, "alice").chat.completions.create(
            model="ragshield", messages=[{"role": "user", "content": "How do I treat a minor burn?"}]
        )
        assert reply.ragshield["stage"] != "policy"
