"""Benchmark code run against another git revision's `src`, each side in a fresh interpreter
(the speed and equality comparisons of `release.py` and `release_equality.py`)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def revision_src(revision: str) -> Iterator[tuple[str, Path]]:
    """(short commit, its `src` folder) of git `revision`, extracted to a temporary folder."""
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", revision], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "src"], capture_output=True, check=True)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(folder, filter="data")
        yield commit, Path(folder) / "src"


def run_worker(script: str, src: Path, arguments: list[str], timeout: float) -> Any:
    """`script arguments` in a fresh interpreter that imports ragshield from `src`: the JSON of its
    last line of output."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, str(Path(script).resolve()), *arguments],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])
