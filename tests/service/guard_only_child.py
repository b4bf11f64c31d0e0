"""Run by the `guard_install_run` fixture in a child Python whose import path lacks the `models`,
`ner` and `hf` extras (as after `pip install 'ragshield[guard,langchain]'`): starts the guard-only
service on loopback, calls it with real clients, then runs the tested examples of
docs/deployment.md (`docs_examples_child`); prints what happened as JSON.

    python -S guard_only_child.py DOC FOLDER"""

from __future__ import annotations

import gc
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx
import openai
from docs_examples_child import HEAVY, run_examples

from ragshield.errors import BackendUnavailable
from ragshield.service.app import create_app
from ragshield.service.server import BackgroundServer
from ragshield.service.settings import ServeConfig

KEY = "app-key-0123456789abcdef"
RECORD = "Patient Dana Whitfield, phone 415-555-0142, has had acne for seven weeks and uses benzoyl peroxide."


def check_service() -> dict[str, object]:
    """The guard-only service with its defaults, over a real server and real clients."""
    folder = Path(tempfile.mkdtemp())
    config = ServeConfig.model_validate(
        {
            "api_keys": {KEY: "app"},
            "policy": {"store": f"sqlite:{folder / 'policy.db'}"},
            "audit_log": str(folder / "audit.jsonl"),
        }
    )
    app = create_app(config)
    result: dict[str, object] = {"defense": app.state.ragshield.shield.defense.name}
    headers = {"Authorization": f"Bearer {KEY}"}
    with BackgroundServer(app) as server:
        deadline = time.monotonic() + 60.0
        while httpx.get(f"{server.url}/readyz", timeout=10.0).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        result["frozen_after_warm_up"] = gc.get_freeze_count()
        chunks = [
            {"id": "rec-1", "text": RECORD, "similarity": 0.71},
            {"id": "rec-2", "text": "Dry skin improves with a fragrance-free moisturiser.", "similarity": 0.52},
        ]
        question = "How long does acne take to clear?"
        decision = httpx.post(
            f"{server.url}/v1/guard/query",
            headers=headers,
            json={"query": question, "chunks": chunks, "user": "u-1"},
            timeout=60.0,
        ).json()
        copied = httpx.post(  # a model that copies its record (without the canaries) word for word
            f"{server.url}/v1/guard/output",
            headers=headers,
            json={
                "query": question,
                "context": decision["context"],
                "markers": decision["markers"],
                "output": RECORD,
                "user": "u-1",
            },
            timeout=60.0,
        ).json()
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY, max_retries=0, timeout=30.0)
        try:
            client.chat.completions.create(model="ragshield", messages=[{"role": "user", "content": question}])
            chat: dict[str, object] = {"status": 200}
        except openai.APIStatusError as error:
            chat = {"status": error.status_code, "code": error.code}
    result.update(decision=decision, copied=copied, chat=chat, heavy=[m for m in HEAVY if m in sys.modules])
    try:  # a guard that embeds the query needs the models extra
        create_app(ServeConfig.model_validate({"defenses": ["intent"]}), warm_up=False)
        result["intent_error"] = None
    except BackendUnavailable as error:
        result["intent_error"] = str(error)
    return result


if __name__ == "__main__":
    service = check_service()
    print(json.dumps({"service": service, "docs": run_examples(Path(sys.argv[1]), Path(sys.argv[2]))}))
