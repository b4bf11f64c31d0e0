"""Compare two leave-one-language-out files (`intent_generalisation.py --loo lang --out X.json`) on the same rows.

    .venv/bin/python benchmarks/intent_loo_compare.py BASELINE.json CANDIDATE.json

A left-out language's own benign rows include the held-apart sets' rows in that language, so a file's
count depends on which sets were in `intent_sets.HELDOUT_SETS` when it ran. Session 37 found a round's
rule comparing a candidate's errors over 4,582 benign rows with the shipped recipe's over 4,380 (six sets
had joined since). This refuses such a comparison: both files must name the same held-apart sets and
count the same rows in every language, or the baseline must be rerun.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


class NotComparable(ValueError):
    """Two leave-one-out files counted different rows."""


def language_errors(saved: dict[str, Any]) -> dict[str, Any]:
    """Own requests missed, own benign rows flagged (and counted) over a language file's left-out languages;
    errors = missed + flagged (both counts of rows, lower is better)."""
    if saved.get("key") != "lang":
        raise NotComparable(f"not a leave-one-language-out file (key {saved.get('key')!r})")
    results = saved["results"]
    missed = sum(r["own"]["n"] - r["own"]["k"] for r in results.values())
    flagged = sum(r["fpr_own_benign"]["k"] for r in results.values())
    return {
        "languages": sorted(results),
        "requests_missed": missed,
        "own_benign_flagged": flagged,
        "own_requests": {lang: r["own"]["n"] for lang, r in sorted(results.items())},
        "own_benign_rows": {lang: r["fpr_own_benign"]["n"] for lang, r in sorted(results.items())},
        "errors": missed + flagged,
    }


def compare(baseline: dict[str, Any], candidate: dict[str, Any]) -> dict[str, Any]:
    """Both files' `language_errors`, if they left out the same languages over the same held-apart sets and
    counted the same rows in each; otherwise `NotComparable`, saying what differs."""
    base_sets, cand_sets = (saved.get("held_apart_sets") for saved in (baseline, candidate))
    if base_sets is None or cand_sets is None:
        raise NotComparable("a file does not name its held-apart sets (run before session 37): rerun it")
    if base_sets != cand_sets:
        only = sorted(set(base_sets) ^ set(cand_sets))
        raise NotComparable(f"the files were run over different held-apart sets (in one only: {', '.join(only)})")
    base, cand = language_errors(baseline), language_errors(candidate)
    if base["languages"] != cand["languages"]:
        raise NotComparable("the files left out different languages")
    for rows in ("own_requests", "own_benign_rows"):
        differ = [lang for lang in base["languages"] if base[rows][lang] != cand[rows][lang]]
        if differ:
            raise NotComparable(f"{rows.replace('_', ' ')} counted differently in {', '.join(differ)}")
    return {"baseline": base, "candidate": cand, "difference": cand["errors"] - base["errors"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("baseline", type=Path)
    parser.add_argument("candidate", type=Path)
    args = parser.parse_args(argv)
    try:
        payloads = [json.loads(path.read_text(encoding="utf-8")) for path in (args.baseline, args.candidate)]
        result = compare(*payloads)
    except (OSError, json.JSONDecodeError, KeyError) as err:
        raise SystemExit(f"cannot read a leave-one-out file: {err}") from err
    except NotComparable as err:
        print(f"not comparable: {err}", file=sys.stderr)
        raise SystemExit(2) from err
    for name in ("baseline", "candidate"):
        r = result[name]
        print(
            f"{name}: {r['requests_missed']} own requests missed + {r['own_benign_flagged']} own benign rows flagged "
            f"of {sum(r['own_benign_rows'].values())} = {r['errors']} errors"
        )
    print(f"candidate - baseline: {result['difference']:+d} errors")


if __name__ == "__main__":
    main()
