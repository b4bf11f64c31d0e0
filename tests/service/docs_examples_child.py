"""Runs the examples of docs/deployment.md marked `tested` (guard_only_child.py calls `run_examples`
in a guard-only install with the LangChain adapter) and says what each printed."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path
from typing import Any

BLOCK = re.compile(r"^```(\w+) tested\n(.*?)^```", re.MULTILINE | re.DOTALL)
HEAVY = ("torch", "faiss", "llama_cpp", "sentence_transformers", "transformers")


def marked_blocks(doc: Path, language: str) -> list[str]:
    """The fenced blocks of `doc` whose info string is `<language> tested`, in order."""
    return [body for lang, body in BLOCK.findall(doc.read_text(encoding="utf-8")) if lang == language]


def run_example(code: str, doc: Path) -> str:
    """Execute one example as a script; what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(doc), "exec"), {"__name__": "deployment_example"})
    return printed.getvalue().strip()


def run_examples(doc: Path, folder: Path) -> dict[str, Any]:
    """What each tested example printed, the config the service example loaded, its audit lines and
    the heavy modules imported (changes the working directory to `folder`)."""
    from ragshield.service.app import create_app
    from ragshield.service.server import BackgroundServer
    from ragshield.service.settings import load_serve_config

    python = marked_blocks(doc, "python")
    library = next(b for b in python if "Shield.build" in b and "GuardedChain" not in b)
    adapter = next(b for b in python if "GuardedChain" in b)
    client = next(b for b in python if "{GUARD}" in b)
    result: dict[str, Any] = {"library": run_example(library, doc), "langchain": run_example(adapter, doc)}

    os.chdir(folder)  # the config's relative runs/ paths land here
    Path("runs").mkdir()
    os.environ["RAGSHIELD_KEY"] = "docs-example-key-0123456789"
    os.environ.pop("POLICY_STORE", None)
    (config_text,) = marked_blocks(doc, "yaml")
    Path("guard.yaml").write_text(config_text, encoding="utf-8")
    config = load_serve_config("guard.yaml")
    result["config"] = {"guard_only": config.guard_only, "api_keys": config.api_keys}
    with BackgroundServer(create_app(config, warm_up=False)) as server:
        result["service"] = run_example(client.replace("http://127.0.0.1:8000", server.url), doc)
    result["audit_lines"] = Path("runs/audit.jsonl").read_text(encoding="utf-8").count("\n")
    result["heavy"] = [m for m in HEAVY if m in sys.modules]
    return result
