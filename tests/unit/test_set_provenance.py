"""Every hand-written query set says where it came from (benchmarks/data/README.md and its provenance files).

A judge is only worth its figures if a reader can check how it was written and whether it was read
before: these tests check that every set file has a provenance file, that the index points at real
files, and that the provenance of a judge says whether it has been read, as `intent_sets` says.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "benchmarks" / "data"
sys.path.insert(0, str(REPO / "benchmarks"))

import intent_sets as isets  # noqa: E402

NOT_READ = "Not read: in `UNREAD_JUDGES`."
INDEX_ROW = re.compile(r"^\| (?P<files>`[^|]+`) \| (?P<kind>[^|]+) \| \[[^]]+\]\(provenance/(?P<prov>[^)]+)\) \|$")


def index() -> dict[str, Path]:
    """Each set file the README's table lists, with the provenance file it points at."""
    out: dict[str, Path] = {}
    for line in (DATA / "README.md").read_text(encoding="utf-8").splitlines():
        row = INDEX_ROW.match(line)
        if row:
            for name in re.findall(r"`([^`]+)`", row["files"]):
                assert name not in out, f"{name} listed twice"
                out[name] = DATA / "provenance" / row["prov"]
    return out


def test_every_set_file_is_listed_once_with_a_provenance_file_that_exists() -> None:
    listed = index()
    assert set(listed) == {p.name for p in DATA.glob("*.jsonl")}
    assert all(p.is_file() for p in listed.values())
    assert set(listed.values()) == set((DATA / "provenance").glob("*.md")), "a provenance file no row points at"


def test_a_provenance_file_opens_with_the_files_it_describes() -> None:
    by_provenance: dict[Path, set[str]] = {}
    for name, provenance in index().items():
        by_provenance.setdefault(provenance, set()).add(name)
    for provenance, names in by_provenance.items():
        opening = provenance.read_text(encoding="utf-8").split(" was ")[0]
        assert set(re.findall(r"\*\*([\w.]+\.jsonl)\*\*", opening)) == names, provenance.name


def test_a_judge_says_it_is_unread_exactly_while_intent_sets_keeps_it_unread() -> None:
    listed = index()
    for path in isets.UNREAD_JUDGES.values():
        assert listed[path.name].read_text(encoding="utf-8").rstrip().endswith(NOT_READ), path.name
    for path in isets.HELDOUT_SETS.values():
        assert NOT_READ not in listed[path.name].read_text(encoding="utf-8"), f"{path.name} is read"


def test_no_provenance_names_a_path_of_the_machine_it_was_written_on() -> None:
    for provenance in (DATA / "provenance").glob("*.md"):
        text = provenance.read_text(encoding="utf-8")
        assert not re.search(r"(?<![\w.])/(work|home|tmp|root|Users)/", text), provenance.name
