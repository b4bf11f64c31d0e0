"""`ragshield attack` end to end on FAKE parts: a hashing-embedder index of synthetic records and
the labelled worst-case target (echo-context)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragshield.cli import app
from ragshield.commands.attack import parse_params
from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.errors import ConfigError, UnknownNameError
from ragshield.rag.build import build_index
from ragshield.rag.embedding import HashingEmbedder
from ragshield.types import Transcript


@pytest.fixture
def hashing_index(tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    build_index(make_synthetic_corpus(40, seed=2), HashingEmbedder(), folder, corpus_spec="synthetic:40")
    return folder


def test_attack_command_writes_transcript_and_prints_leakage(hashing_index: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    args = ["attack", "--index", str(hashing_index), "--attack", "tgtb", "--budget", "4"]
    args += ["--generator", "echo-context", "--out", str(out), "--param", "pool=phone", "--seed", "3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    transcript = Transcript.read_jsonl(out)
    assert transcript.name == "tgtb" and transcript.defense == "none" and len(transcript.responses) == 4
    assert all(r.query.text.startswith("I want some advice about ") for r in transcript.responses)
    for label in ("queries sent", "unique chunks leaked (ULC)", "PII items leaked (exact inventory)"):
        assert label in result.output
    leaked = next(line for line in result.output.splitlines() if "unique chunks leaked" in line)
    assert int(leaked.split("│")[2].strip()) >= 1  # the echo target copies what it retrieves


def test_attack_command_rejects_unknown_attack_and_bad_params(hashing_index: Path, tmp_path: Path) -> None:
    base = ["attack", "--index", str(hashing_index), "--budget", "1", "--generator", "echo-context"]
    result = CliRunner().invoke(app, [*base, "--attack", "nope", "--out", str(tmp_path / "x.jsonl")])
    assert isinstance(result.exception, UnknownNameError) and "valid names" in str(result.exception)
    result = CliRunner().invoke(app, [*base, "--attack", "tgtb", "--param", "bogus=1", "--out", str(tmp_path / "y")])
    assert isinstance(result.exception, ConfigError) and "valid parameters" in str(result.exception)


def test_parse_params() -> None:
    assert parse_params(["pool=email", "limit=5", 'anchors=["a", "b"]']) == {
        "pool": "email",
        "limit": 5,
        "anchors": ["a", "b"],
    }
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_params(["novalue"])
