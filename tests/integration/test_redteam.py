"""Campaigns against customer-style apps written for the tests (`redteam_apps`): a JSON API with
its own shape on a real loopback HTTP server (`rest` target, JSON and SSE, answering 429 to some
requests), and a LangChain chain over a real FAISS store (`langchain` target). With the same
seed, the transcripts and the leakage measured against the knowledge-base export match the
local run of the same system. A `ragshield attack` process killed at a random point and run
again loses no answered query and repeats none.

Fast parts are FAKES and named so: the hashing embedder and the WORST-CASE models that copy
their context (deterministic, so answers can be compared exactly)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from redteam_apps import SupportApi, build_langchain_app
from typer.testing import CliRunner

from ragshield.attacks import make_attack
from ragshield.campaign import CampaignJob, CampaignSettings, Journal, run_campaign
from ragshield.campaign.measure import leakage, load_knowledge_base
from ragshield.cli import app
from ragshield.generators.scripted import EchoContextGenerator
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.metrics.leakage import is_blocked
from ragshield.pipeline import RagPipeline
from ragshield.targets.langchain import LangChainTarget
from ragshield.targets.local import LocalTarget
from ragshield.targets.rest import RestTarget
from ragshield.types import Transcript

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def export(fake_retriever: Any, tmp_path: Path) -> Path:
    """The knowledge-base export of the FAKE retrieval stack's records, as an app owner has it."""
    path = tmp_path / "kb.jsonl"
    rows = [{"id": chunk.id, "text": chunk.text} for chunk in fake_retriever.index.chunks]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def campaign(target: Any, tmp_path: Path, name: str, *, budget: int = 12, history: int = 0) -> Transcript:
    attack = make_attack("tgtb", pool="email")
    journal = Journal(
        tmp_path / f"{name}.jsonl",
        header={"kind": "attack", "name": "tgtb", "defense": name, "seed": 7},
        identity={"name": name},
    )
    transcript, stats = run_campaign(
        CampaignJob(attack, budget, journal, seed=7),
        target,
        CampaignSettings(concurrency=4, history=history, initial_wait_s=0.01),
    )
    assert stats.failed == 0
    return transcript


def seen(transcript: Transcript) -> list[tuple[str, str, str, bool]]:
    return [(r.query.id, r.query.text, r.text, is_blocked(r)) for r in transcript.responses]


def black_box(transcript: Transcript, export: Path) -> dict[str, Any]:
    """Leakage as a client's transcript allows (no retrieval), against the export."""
    from dataclasses import replace

    bare = replace(transcript, responses=tuple(replace(r, retrieval=None) for r in transcript.responses))
    result = leakage(bare, load_knowledge_base(export, ner=False))
    return {key: result[key] for key in ("ulc", "pii", "asr", "repeat_prompts", "blocked", "queries")}


@pytest.mark.parametrize("defended", [False, True])
def test_rest_campaign_matches_local_run(fake_retriever: Any, export: Path, tmp_path: Path, defended: bool) -> None:
    defense = build_defense("rule-based" if defended else "none", DefenseContext())
    pipeline = RagPipeline(fake_retriever, EchoContextGenerator(), k=2, defense=defense)
    local = campaign(LocalTarget(pipeline), tmp_path, "local")
    api = SupportApi(pipeline, busy_every=4)
    with api.running() as root:
        plain = RestTarget(
            f"{root}/api/ask",
            body={"question": "{query}", "conversation": "{history}"},
            answer="$.data.reply.text",
            refused="flagged",
        )
        remote = campaign(plain, tmp_path, "rest")
        sse = RestTarget(
            f"{root}/api/ask/stream", body={"question": "{query}"}, answer="piece", refused="flagged", sse=True
        )
        streamed = campaign(sse, tmp_path, "rest-sse")
    assert api.busy > 0  # some first attempts got a 429 and were retried
    assert seen(remote) == seen(local) == seen(streamed)
    assert any(blocked for *_, blocked in seen(local)) == defended
    assert black_box(remote, export) == black_box(local, export)
    if not defended:
        assert black_box(remote, export)["ulc"] > 0  # the worst-case app leaks, and the export shows it


def test_langchain_app_campaign_matches_direct_calls(fake_retriever: Any, export: Path, tmp_path: Path) -> None:
    pytest.importorskip("langchain_community")
    import redteam_apps

    redteam_apps.APP = build_langchain_app(list(fake_retriever.index.chunks))
    transcript = campaign(LangChainTarget("redteam_apps:APP"), tmp_path, "langchain")
    direct = [redteam_apps.APP.invoke(r.query.text) for r in transcript.responses]  # the app called by hand
    assert [r.text for r in transcript.responses] == direct
    result = leakage(transcript, load_knowledge_base(export, ner=False))
    assert result["ulc"] > 0 and result["pii_inventory"] == "analyzer"


def test_killed_attack_process_resumes_without_loss_or_repeat(
    fake_retriever: Any, export: Path, tmp_path: Path
) -> None:
    pipeline = RagPipeline(fake_retriever, EchoContextGenerator(), k=2)
    api = SupportApi(pipeline, delay_s=0.05)
    out = tmp_path / "attack.jsonl"
    budget = 40
    with api.running() as root:
        args = [
            "attack",
            "--attack",
            "tgtb",
            "--budget",
            str(budget),
            "--out",
            str(out),
            "--target",
            "rest",
            "--target-url",
            f"{root}/api/ask",
            "--request-template",
            '{"question": "{query}"}',
            "--answer-path",
            "data.reply.text",
            "--concurrency",
            "2",
            "--kb",
            str(export),
            "--kb-embedder",
            "none",
            "--json",
        ]
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        process = subprocess.Popen(
            [sys.executable, "-m", "ragshield.cli", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        kill_after = random.Random().randrange(1, budget - 5)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lines = out.read_text().count("\n") if out.exists() else 0
            if lines - 1 >= kill_after or process.poll() is not None:
                break
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        answered_before = len((out.read_text()).splitlines()) - 1
        assert 0 < answered_before < budget
        requests_before = api.requests
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["campaign"]["resumed"] == answered_before
    assert summary["campaign"]["answered"] == budget - answered_before
    assert summary["leakage"]["queries"] == budget and summary["measured_against"].startswith("knowledge-base")
    numbers = [json.loads(line)["number"] for line in out.read_text().splitlines()[1:]]
    assert sorted(numbers) == list(range(budget))  # none lost, none twice
    assert api.requests - requests_before == budget - answered_before  # only the missing ones were sent again
