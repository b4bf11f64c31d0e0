"""The campaign transcript on disk: written one line per answered query, read back to resume.

The file is an ordinary ragshield transcript (`Transcript.read_jsonl` reads it): a header line,
then one `Response` per line, each with its query `number` in the campaign. Lines are appended
in the order answers arrive (out of order when several queries are in flight) and flushed one by
one, so a killed campaign loses at most the answers that were still in flight. A last line cut
by the kill is dropped when the file is reopened. The header records what the campaign is
(attack, seed, target, settings that change queries); reopening it for another campaign is an
error rather than a silent mix of two runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ragshield.errors import ConfigError
from ragshield.types import Response, Transcript


class Journal:
    """An append-only campaign transcript at `path`.

    Args:
        path: the JSONL file (created with its parents when missing).
        header: the transcript header (`kind`, `name`, `defense`, `seed`).
        identity: what must match to resume (attack, parameters, target, history...);
            JSON-serialisable.

    Raises:
        ConfigError: the file exists but belongs to another campaign, or is not a transcript.
    """

    def __init__(self, path: str | Path, *, header: Mapping[str, Any], identity: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.header = dict(header)
        self.identity = json.loads(json.dumps(dict(identity)))
        self.answered: dict[int, Response] = {}
        self._handle: IO[str] | None = None
        if self.path.exists() and self.path.stat().st_size > 0:
            self._load()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            line = json.dumps({"transcript": self.header, "campaign": self.identity}, ensure_ascii=False)
            self.path.write_text(line + "\n", encoding="utf-8")

    def _load(self) -> None:
        data = self.path.read_bytes()
        good = 0  # bytes up to the end of the last complete, readable line
        lines = data.split(b"\n")
        for number, raw in enumerate(lines[:-1] if not data.endswith(b"\n") else lines):
            end = good + len(raw) + 1
            if not raw.strip():
                good = end
                continue
            try:
                row = json.loads(raw)
            except ValueError:
                if end >= len(data):  # the last line, cut by a kill: dropped
                    break
                raise ConfigError(f"{self.path}:{number + 1} is not valid JSON; not a campaign transcript") from None
            if number == 0:
                self._check_header(row)
            else:
                self.answered[int(row["number"])] = Response.from_dict(row)
            good = end
        if good < len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(good)

    def _check_header(self, row: Any) -> None:
        if not isinstance(row, dict) or "transcript" not in row:
            raise ConfigError(f"{self.path} is not a ragshield transcript; choose another --out")
        if row.get("campaign") != self.identity:
            raise ConfigError(
                f"{self.path} holds another campaign (attack, seed, target or settings differ); "
                "rerun with the same options to resume it, or choose another --out"
            )

    def append(self, number: int, response: Response, meta: Mapping[str, Any] | None = None) -> None:
        """Write one answered query (flushed at once) and remember it."""
        if self._handle is None:
            self._handle = self.path.open("a", encoding="utf-8")
        row: dict[str, Any] = {**response.to_dict(), "number": number}
        if meta:
            row["target_meta"] = dict(meta)
        self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._handle.flush()
        self.answered[number] = response

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def transcript(self) -> Transcript:
        """The answered queries in query order."""
        responses = tuple(self.answered[number] for number in sorted(self.answered))
        meta = self.header
        return Transcript(
            str(meta["kind"]), str(meta["name"]), str(meta["defense"]), responses, int(meta.get("seed", 0))
        )
