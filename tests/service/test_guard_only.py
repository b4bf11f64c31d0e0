"""The guard-only service (`ragshield serve` with no index): it starts and answers with only what
`pip install 'ragshield[guard]'` installs, never imports torch, faiss or llama.cpp for its default
defenses, refuses chat completions clearly, and names the extra a configured guard needs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.service
REPO = Path(__file__).resolve().parents[2]


def test_guard_only_service_runs_without_model_packages(guard_install_run: dict[str, Any]) -> None:
    result = guard_install_run["service"]
    assert result["heavy"] == [], f"the guard-only service imported {result['heavy']}"
    assert result["defense"] == "canary-rag+context-echo"
    # the warm-up froze the loaded heap: full collections no longer walk it (benchmarks/gc_pauses.py)
    assert result["frozen_after_warm_up"] > 0
    decision = result["decision"]
    assert decision["action"] == "allow"
    assert set(decision["markers"]) == {"rec-1", "rec-2"}  # canaries for the application's model
    assert all(c in item["text"] for item in decision["context"] for c in decision["markers"][item["id"]])
    copied = result["copied"]
    # the record copied word for word does not reach the end user (redacted; the phone number neither)
    assert "415-555-0142" not in copied["text"] and "Dana Whitfield" not in copied["text"]
    assert "context-echo" in copied["blocked_by"] or "[withheld]" in copied["text"]
    assert result["chat"] == {"status": 404, "code": "guard_only_service"}
    assert "pip install 'ragshield[models]'" in (result["intent_error"] or "")


def test_starting_the_guard_only_app_imports_no_model_package_even_when_installed() -> None:
    """Here torch, faiss and llama.cpp ARE installed: building the guard-only app with its default
    defenses must still not import them (they load lazily, only for a guard that needs them)."""
    pytest.importorskip("fastapi")
    code = (
        "import sys\n"
        "from ragshield.service.app import create_app\n"
        "from ragshield.service.settings import ServeConfig\n"
        "create_app(ServeConfig.model_validate({}), warm_up=False)\n"
        "print(','.join(m for m in ('torch', 'faiss', 'llama_cpp', 'sentence_transformers') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == ""
