"""The import contract (.importlinter): imports point down the layers and form no cycle.

`make test` runs `lint-imports` too; these tests also show that the contract is not vacuous
(an upward import planted in a copy of the package breaks it) and cover what the contract
cannot see: benchmarks are scripts, not modules of the package.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CLI_MODULE, COMMANDS_PACKAGE = ["ragshield", "cli"], ["ragshield", "commands"]

pytestmark = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed (extra 'dev')")


def _lint(src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [str(LINT_IMPORTS), "--no-cache", "--config", str(ROOT / ".importlinter")]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_the_package_keeps_the_import_contract() -> None:
    result = _lint(ROOT / "src")
    assert result.returncode == 0, result.stdout[-4000:]


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    copy = tmp_path / "src" / "ragshield"
    shutil.copytree(ROOT / "src" / "ragshield", copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    guard_base = copy / "guards" / "base.py"
    guard_base.write_text(guard_base.read_text() + "\nfrom ragshield.pipeline import RagPipeline  # planted\n")
    result = _lint(tmp_path / "src")
    assert result.returncode != 0
    assert "ragshield.guards is not allowed to import ragshield.pipeline" in result.stdout


def test_a_new_top_level_module_must_be_placed_in_a_layer(tmp_path: Path) -> None:
    copy = tmp_path / "src" / "ragshield"
    shutil.copytree(ROOT / "src" / "ragshield", copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    (copy / "unplaced.py").write_text('"""A module no layer lists."""\n')
    result = _lint(tmp_path / "src")
    assert result.returncode != 0
    assert "ragshield.unplaced" in result.stdout


def _imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


@pytest.mark.parametrize("script", sorted((ROOT / "benchmarks").glob("*.py")), ids=lambda path: path.name)
def test_benchmarks_import_no_cli_module(script: Path) -> None:
    # a benchmark measures the library; a helper it needs belongs below the CLI, not in a command
    cli = {name for name in _imported_modules(script) if name.split(".")[:2] in (CLI_MODULE, COMMANDS_PACKAGE)}
    assert not cli, f"{script.name} imports {sorted(cli)}; move the helper below the CLI"
