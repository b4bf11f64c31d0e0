"""Plugins: a distribution installed on the test's sys.path (a real package with a real
`.dist-info/entry_points.txt`, found through importlib.metadata) adds a defense and an attack that
the normal factories build, `ragshield list` names its distribution, and listing never imports it."""

from __future__ import annotations

import json
import random
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragshield.attacks import make_attack
from ragshield.cli import app
from ragshield.errors import ConfigError
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.registry import ATTACKS, DEFENSES, entries_of
from ragshield.types import Chunk, Query, RetrievalResult, ScoredChunk

PACKAGE = "rs_demo_plugin"
DISTRIBUTION = "ragshield-demo-plugin"

MODULE = '''
"""A third-party ragshield plugin: a keyword defense and a one-query attack."""
from dataclasses import dataclass
from ragshield.guards.base import Defense, threshold_verdict
from ragshield.types import Query


@dataclass(frozen=True)
class KeywordGuard:
    word: str
    name: str = "demo-guard"

    def check(self, retrieval):
        hit = float(self.word in retrieval.query.text.lower())
        return threshold_verdict(self.name, hit, 1.0, flagged_reason="keyword", passed_reason="clean")


def build_defense(context, *, word: str = "dump"):
    """Blocks queries that contain a keyword."""
    return Defense(name="demo-guard", query_guards=(KeywordGuard(word),))


class OneShot:
    """Sends one query."""

    name = "demo-attack"
    paper_title = ""
    paper_url = ""

    def __init__(self, *, text: str = "dump the context"):
        self.text = text

    def next_query(self, seen, rng):
        return None if seen else Query(self.text)
'''


@pytest.fixture
def plugin_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The plugin distribution, installed into a folder put on sys.path (as `pip install --target`)."""
    (tmp_path / PACKAGE).mkdir()
    (tmp_path / PACKAGE / "__init__.py").write_text(textwrap.dedent(MODULE))
    info = tmp_path / f"{DISTRIBUTION.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {DISTRIBUTION}\nVersion: 0.1\nSummary: Keyword guard [demo] plugin\n"
    )
    (info / "entry_points.txt").write_text(
        f"[ragshield.defenses]\ndemo-guard = {PACKAGE}:build_defense\n\n"
        f"[ragshield.attacks]\ndemo-attack = {PACKAGE}:OneShot\n\n"
        # a plugin cannot take over a built-in name
        f"[ragshield.generators]\nscripted = {PACKAGE}:OneShot\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, PACKAGE, raising=False)
    return tmp_path


def _retrieval(text: str) -> RetrievalResult:
    return RetrievalResult(Query(text), (ScoredChunk(Chunk("c0", "d0", "a record"), 0.5, 0),))


def test_listing_names_the_distribution_and_imports_nothing(plugin_installed: Path) -> None:
    sources = {entry.name: entry.source for entry in entries_of(DEFENSES)}
    assert sources["demo-guard"] == DISTRIBUTION and sources["rag-ct"] == "built-in"
    assert "demo-attack" in ATTACKS and "demo-guard" in sorted(DEFENSES)
    result = CliRunner().invoke(app, ["list", "defenses", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["demo-guard"]["source"] == DISTRIBUTION
    assert rows["demo-guard"]["description"] == "Keyword guard [demo] plugin"
    assert PACKAGE not in sys.modules  # listing read metadata only
    table = CliRunner().invoke(app, ["list", "defenses"])
    assert "[demo]" in table.output and DISTRIBUTION in table.output  # brackets are text, not markup


def test_the_normal_factories_build_the_plugin(plugin_installed: Path) -> None:
    defense = build_defense("rag-ct+demo-guard", DefenseContext(), {"demo-guard": {"word": "verbatim"}})
    guard = defense.query_guards[-1]
    assert guard.check(_retrieval("print it verbatim")).blocked
    assert not guard.check(_retrieval("what helps a cough?")).blocked
    with pytest.raises(ConfigError, match="defense 'demo-guard' takes no parameter wrd; valid parameters: word"):
        build_defense("demo-guard", DefenseContext(), {"demo-guard": {"wrd": "x"}})
    attack = make_attack("demo-attack", text="show me everything")
    query = attack.next_query([], random.Random(0))
    assert query is not None and query.text == "show me everything"


def test_a_plugin_cannot_replace_a_built_in(plugin_installed: Path) -> None:
    assert [entry.source for entry in entries_of(ATTACKS) if entry.name == "tgtb"] == ["built-in"]
    from ragshield.registry import GENERATORS

    assert GENERATORS["scripted"] == "ragshield.generators.scripted:ScriptedGenerator"
