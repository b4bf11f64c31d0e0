"""Campaigns against `ragshield serve` running in another process (a real uvicorn server, real
HTTP), undefended and defended, through the `openai-chat` target (streamed and not): with the
same seed the transcripts and the leakage measured against the knowledge-base export match
the local run of the same config. An unreachable server exits non-zero naming URL and cause.

FAKES for speed, named: the hashing embedder over a real FAISS index, and the WORST-CASE
echo-context model (copies its context; deterministic, so answers compare exactly)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from ragshield.attacks import make_attack
from ragshield.campaign import CampaignJob, CampaignSettings, Journal, run_campaign
from ragshield.campaign.measure import leakage, load_knowledge_base
from ragshield.cli import app
from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.metrics.leakage import is_blocked
from ragshield.rag.build import build_index
from ragshield.rag.embedding import HashingEmbedder
from ragshield.service.settings import load_serve_config
from ragshield.system import build_system
from ragshield.targets.local import LocalTarget
from ragshield.targets.openai_chat import OpenAIChatTarget
from ragshield.types import Transcript

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(config: Path) -> Iterator[str]:
    """`ragshield serve --config` in a child process; yields its base URL once it answers."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "ragshield.cli", "serve", "--config", str(config), "--port", str(port)]
    process = subprocess.Popen([*command, "--log-level", "warning"], env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"ragshield serve exited: {process.stderr.read() if process.stderr else ''}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield f"{url}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(index folder, knowledge-base export) of 40 synthetic records."""
    folder = tmp_path_factory.mktemp("serve-campaign")
    corpus = make_synthetic_corpus(40, seed=4)
    build_index(corpus, HashingEmbedder(), folder / "index", corpus_spec="synthetic:40", pii=False)
    export = folder / "kb.jsonl"
    export.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in corpus), encoding="utf-8")
    return folder / "index", export


def write_config(path: Path, index: Path, defenses: list[str]) -> Path:
    settings = {"index": str(index), "generator": {"name": "echo-context"}, "defenses": defenses, "max_tokens": 64}
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return path


def attack_campaign(target: Any, out: Path) -> Transcript:
    journal = Journal(
        out, header={"kind": "attack", "name": "tgtb", "defense": out.stem, "seed": 5}, identity={"run": out.stem}
    )
    transcript, stats = run_campaign(
        CampaignJob(make_attack("tgtb", pool="phone"), 10, journal, seed=5), target, CampaignSettings(concurrency=4)
    )
    assert stats.failed == 0
    return transcript


def seen(transcript: Transcript) -> list[tuple[str, str, bool]]:
    return [(r.query.text, r.text, is_blocked(r)) for r in transcript.responses]


def measured(transcript: Transcript, export: Path) -> dict[str, Any]:
    bare = replace(transcript, responses=tuple(replace(r, retrieval=None) for r in transcript.responses))
    result = leakage(bare, load_knowledge_base(export, ner=False))
    return {key: result[key] for key in ("ulc", "pii", "asr", "repeat_prompts", "blocked")}


def test_campaign_against_served_app_matches_local_run(system: tuple[Path, Path], tmp_path: Path) -> None:
    index, export = system
    configs = {
        "none": write_config(tmp_path / "none.yaml", index, ["none"]),
        "rule-based": write_config(tmp_path / "rule.yaml", index, ["rule-based"]),
    }
    with ExitStack() as stack:
        urls = {name: stack.enter_context(serve(path)) for name, path in configs.items()}
        for name, path in configs.items():
            local = attack_campaign(
                LocalTarget(build_system(load_serve_config(path))), tmp_path / f"local-{name}.jsonl"
            )
            for stream in (False, True):
                target = OpenAIChatTarget("ragshield", base_url=urls[name], stream=stream)
                remote = attack_campaign(target, tmp_path / f"remote-{name}-{stream}.jsonl")
                assert seen(remote) == seen(local)
                assert measured(remote, export) == measured(local, export)
            blocked = sum(refused for *_, refused in seen(local))
            assert (blocked > 0) == (name == "rule-based")
            if name == "none":
                assert measured(local, export)["ulc"] > 0


def test_unreachable_server_exits_nonzero_naming_url_and_cause(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    args = [
        "attack",
        "--attack",
        "tgtb",
        "--budget",
        "5",
        "--out",
        str(tmp_path / "t.jsonl"),
        "--target",
        "openai-chat",
        "--target-url",
        url,
        "--target-model",
        "m",
        "--retries",
        "0",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert f"{url}/chat/completions" in result.output and "ConnectError" in result.output
