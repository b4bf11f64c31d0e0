"""The transcript cache of an evaluation folder: one JSONL transcript per grid cell.

A cell is one (attack or benign set) x defense run. Its transcript is written atomically
(temporary file, then rename) and its *fingerprint* (a hash of every setting that changes
its result) is recorded in `cells.json`, so a rerun skips finished cells, reruns only the
cells whose settings changed, and an interrupted run resumes at the first unfinished cell.

Folder layout (`OUT/`):

* `transcripts/<attack>__<defense>.jsonl`, `transcripts/benign__<defense>.jsonl`,
  `transcripts/sweeps/topk-<k>__<attack>__<defense>.jsonl`;
* `cells.json`: file name -> {fingerprint, seconds, finished} (merged under a lock, so several
  processes can run disjoint cells of one folder, e.g. `ragshield eval --defense ...`);
* `run.json`: the validated config and the knowledge-base facts `ragshield report` needs.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragshield.types import Transcript

log = logging.getLogger(__name__)

TRANSCRIPTS = "transcripts"
SWEEPS = "sweeps"
CELLS_FILE = "cells.json"
RUN_FILE = "run.json"
BENIGN = "benign"


def cell_name(first: str, defense: str) -> str:
    """`<attack or benign>__<defense>`: the cell's file stem (defense specs keep their `+`)."""
    return f"{first}__{defense}"


def split_cell_name(stem: str) -> tuple[str, str]:
    """(attack or `benign`, defense) of a transcript file stem."""
    first, _, defense = stem.partition("__")
    return first, defense


def topk_cell_name(k: int, attack: str, defense: str) -> str:
    return f"topk-{k}__{attack}__{defense}"


def fingerprint(settings: Mapping[str, Any]) -> str:
    """A short stable hash of JSON-ready settings (key order does not matter)."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CellRecord:
    """A finished cell: its settings hash, wall-clock seconds, finish time (ISO 8601, UTC, to the
    microsecond from 2026-12-02; earlier records have whole seconds),
    whether its generations were replayed from identical earlier requests, and the cell it was
    composed from (`ragshield.evaluation.compose`; "" when it ran). Replayed and composed
    cells' latency is derived, not measured: see `ragshield.evaluation.report`."""

    fingerprint: str
    seconds: float
    finished: str
    replayed: bool = False
    composed_from: str = ""


@dataclass(frozen=True)
class Produced:
    """What producing a cell returned: its transcript and how it was made (see `CellRecord`)."""

    transcript: Transcript
    replayed: bool = False
    composed_from: str = ""


class TranscriptCache:
    """Transcripts of one evaluation folder, keyed by cell name."""

    def __init__(self, out_dir: str | Path) -> None:
        self.root = Path(out_dir)
        self.folder = self.root / TRANSCRIPTS
        self.folder.mkdir(parents=True, exist_ok=True)
        self._records = self._read_records()

    def _read_records(self) -> dict[str, CellRecord]:
        path = self.root / CELLS_FILE
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return {name: CellRecord(**value) for name, value in data.items()}
        except (ValueError, TypeError) as error:
            log.warning("%s is unreadable (%s); every cell will be rerun", path, type(error).__name__)
            return {}

    def _write_records(self, name: str) -> None:
        """Record cell `name`, merging with what other processes recorded meanwhile (several
        processes may run disjoint cells of one folder; a lock file serialises the merge)."""
        path = self.root / CELLS_FILE
        with (self.root / (CELLS_FILE + ".lock")).open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            merged = self._read_records()
            merged[name] = self._records[name]
            self._records = merged
            temporary = path.with_suffix(f".json.{os.getpid()}.tmp")
            data = {key: record.__dict__ for key, record in sorted(merged.items())}
            temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
            temporary.replace(path)

    def path(self, name: str) -> Path:
        """The transcript file of a cell (`topk-...` cells live under `sweeps/`)."""
        folder = self.folder / SWEEPS if name.startswith("topk-") else self.folder
        return folder / f"{name}.jsonl"

    def record(self, name: str) -> CellRecord | None:
        return self._records.get(name)

    def refresh(self) -> None:
        """Re-read `cells.json` (cells other processes finished meanwhile)."""
        self._records = self._read_records()

    def cached(self, name: str, print_: str) -> Transcript | None:
        """The finished transcript of a cell when its fingerprint is `print_`, else None."""
        path = self.path(name)
        record = self._records.get(name)
        if record is None or record.fingerprint != print_ or not path.is_file():
            return None
        try:
            return Transcript.read_jsonl(path)
        except (OSError, ValueError) as error:
            log.warning("cached transcript %s is unreadable (%s); rerunning the cell", path, type(error).__name__)
            return None

    def run(self, name: str, print_: str, produce: Callable[[], Produced]) -> tuple[Transcript, bool]:
        """The cell's transcript: cached when finished with the same settings, else produced,
        written atomically and recorded. Returns (transcript, was_cached)."""
        found = self.cached(name, print_)
        if found is not None:
            return found, True
        started = time.perf_counter()
        produced = produce()
        transcript = produced.transcript
        seconds = time.perf_counter() - started
        path = self.path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        transcript.write_jsonl(temporary)
        temporary.replace(path)
        # to the microsecond: composed cells and cached metrics are keyed on it, and a cell rerun
        # within the same second as its earlier run must still read as another sample
        finished = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self._records[name] = CellRecord(print_, round(seconds, 2), finished, produced.replayed, produced.composed_from)
        self._write_records(name)
        return transcript, False

    def transcripts(self) -> dict[str, Transcript]:
        """Every recorded main-grid transcript (not sweeps), by cell name, in file-name order."""
        found: dict[str, Transcript] = {}
        for path in sorted(self.folder.glob("*.jsonl")):
            if path.stem in self._records:
                found[path.stem] = Transcript.read_jsonl(path)
        return found

    def sweep_transcripts(self) -> dict[str, Transcript]:
        folder = self.folder / SWEEPS
        return {path.stem: Transcript.read_jsonl(path) for path in sorted(folder.glob("*.jsonl"))}

    def seconds(self) -> dict[str, float]:
        """Wall-clock seconds of every finished cell."""
        return {name: record.seconds for name, record in self._records.items()}

    def composed(self) -> dict[str, str]:
        """Finished cells composed from another cell: name -> source cell name."""
        return {name: record.composed_from for name, record in self._records.items() if record.composed_from}


def write_run_file(out_dir: str | Path, data: Mapping[str, Any]) -> None:
    path = Path(out_dir) / RUN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")


def read_run_file(out_dir: str | Path) -> dict[str, Any]:
    """`run.json` of an evaluation folder.

    Raises:
        ConfigError: the folder holds no evaluation (no run.json).
    """
    from ragshield.errors import ConfigError

    path = Path(out_dir) / RUN_FILE
    if not path.is_file():
        raise ConfigError(
            f"{out_dir} holds no evaluation (no {RUN_FILE}); run: ragshield eval --config FILE --out {out_dir}"
        )
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
