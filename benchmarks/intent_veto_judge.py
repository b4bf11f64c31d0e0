"""One reading of a blind held-apart set by the shipped `intent` guard, with and without its second
opinion (issue 18).

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_veto_judge.py --set v13
    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_veto_judge.py --set v14 --candidate DIR

The second opinion (`ragshield.guards.intent_veto`) was fitted on model v11's training rows and its
lines chosen on the development sets (`intent_verifier.DEVELOPMENT`); this reads a set written blind before it
existed, through the guard as a user runs it (`ExtractionIntent`, shipped threshold, no
calibration), once. Writes `benchmarks/results/intent_veto_judge_<set>.json` (rates with 95%
intervals, per style and language, and which rows each configuration gets wrong: indices, no
text) and prints a table. The set's rows are the project's own (`benchmarks/data/README.md`).
`--candidate DIR` (repeatable) reads the set once more per folder in the same run, with the veto
files in DIR (`intent_veto_minilm.npz`, `intent_veto_e5.npz`) in place of the packaged ones, so that
refitted second opinions and the shipped one are judged by the same single reading. `--set` names a
set of `train_intent.HELDOUT_SETS` or `train_intent.UNREAD_JUDGES` (such as v15 or chat2). Rows
whose text (`train_intent.text_key`) is a training or calibration row of model v11 or a contrastive
pair of the verifiers are left out and counted: written independently, "thanks" or a well-known
list question can be the same text, and a judge must not score what was fitted on.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent import ExtractionIntent
from ragshield.guards.intent_veto import IntentVeto, weights_file_name
from ragshield.guards.intent_veto_weights import ENCODERS
from ragshield.rag.embedding import make_embedder

CONFIGURATIONS = {"v11 alone": False, "v11 + second opinion": True}


def unseen_rows(examples: list[ti.Example], data: Path) -> list[int]:
    """Indices of the `examples` the guard was not fitted on (model v11's rows, the verifiers' pairs)."""
    import intent_verifier as iv

    corpus = ti.build_corpus(data)
    pairs = [e for part in iv.contrastive_pairs() for e in part]
    kept = {id(e) for e in ti.unseen(examples, ti.Corpus(train=corpus.train + pairs, calib=corpus.calib))}
    return [i for i, e in enumerate(examples) if id(e) in kept]


def judge(
    examples: list[ti.Example], candidates: tuple[Path, ...] = (), rows: list[int] | None = None
) -> dict[str, Any]:
    """Each configuration's rates on `examples`; `rows`: their line numbers in the set's file (for `wrong_rows`)."""
    rows = list(range(len(examples))) if rows is None else rows
    texts = [e.text for e in examples]
    labels = np.array([e.label for e in examples])
    embedder = make_embedder("all-MiniLM-L6-v2")
    out: dict[str, Any] = {"n": len(examples), "configurations": {}}
    configurations: dict[str, bool | Path] = dict(CONFIGURATIONS)
    for candidate in candidates:
        configurations[f"v11 + candidate second opinion {candidate.name}"] = candidate
    for name, second_opinion in configurations.items():
        guard = ExtractionIntent(embedder=embedder, second_opinion=bool(second_opinion))
        if isinstance(second_opinion, Path):
            guard.veto_ = IntentVeto({e: second_opinion / weights_file_name(e) for e in ENCODERS})
        started = time.perf_counter()
        scores = guard.scores(texts)
        seconds = time.perf_counter() - started
        flagged = np.array([s.probability >= guard.threshold_ for s in scores])
        row: dict[str, Any] = {
            "seconds": round(seconds, 1),
            "benign_flagged": ig.rate(flagged[labels == 0].astype(float), 0.5),
            "requests_caught": ig.rate(flagged[labels == 1].astype(float), 0.5),
            "second_opinion": {
                state: sum(s.second_opinion == state for s in scores) for state in {s.second_opinion for s in scores}
            },
            "wrong_rows": [rows[i] for i in range(len(texts)) if flagged[i] != bool(labels[i])],
        }
        for key in ("style", "lang"):
            groups: dict[str, list[int]] = defaultdict(list)
            for i, e in enumerate(examples):
                groups[getattr(e, key)].append(i)
            row[f"by_{key}"] = {
                group: {
                    kind: ig.rate(flagged[[i for i in rows if labels[i] == label]].astype(float), 0.5)
                    for kind, label in (("benign_flagged", 0), ("requests_caught", 1))
                    if any(labels[i] == label for i in rows)
                }
                for group, rows in sorted(groups.items())
            }
        out["configurations"][name] = row
    return out


def table(result: dict[str, Any]) -> str:
    lines = ["| configuration | benign flagged | requests caught | second opinion |", "|---|---|---|---|"]
    for name, row in result["configurations"].items():
        cells = []
        for kind in ("benign_flagged", "requests_caught"):
            r = row[kind]
            cells.append(f"{r['k']}/{r['n']} = {r['rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]")
        said = ", ".join(f"{k}: {v}" for k, v in sorted(row["second_opinion"].items()))
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {said} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA, help="../shared/data (model v11's rows)")
    parser.add_argument("--set", required=True, help="the held-apart set's name, e.g. v15 or chat2")
    parser.add_argument(
        "--candidate", type=Path, action="append", default=[], help="a folder with refitted veto files (repeatable)"
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="read a set already read (written to _again.json, marked not blind): a configuration chosen after",
    )
    args = parser.parse_args(argv)
    for candidate in args.candidate:
        if not all((candidate / weights_file_name(e)).is_file() for e in ENCODERS):
            raise SystemExit(f"{candidate} needs {' and '.join(weights_file_name(e) for e in ENCODERS)}")
    if len({candidate.name for candidate in args.candidate}) < len(args.candidate):
        raise SystemExit("candidate folders need different names: the results name each by its folder")
    sets = ti.HELDOUT_SETS | ti.UNREAD_JUDGES
    if args.set not in sets or not sets[args.set].exists():
        raise SystemExit(f"no held-apart set {args.set!r} (known: {', '.join(sorted(sets))})")
    path = sets[args.set]
    out = qs.REPO / "benchmarks" / "results" / f"intent_veto_judge_{args.set}{'_again' if args.again else ''}.json"
    if out.exists() and not args.again:
        raise SystemExit(f"{out.name} exists: a blind set is read once (delete it to read the set again)")
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: the judge needs ../shared/data to leave out trained rows")
    written = ti.heldout(path)
    rows = unseen_rows(written, args.data)
    result = {"set": args.set, "blind": not args.again, "rows_seen_in_training_left_out": len(written) - len(rows)}
    result |= judge([written[i] for i in rows], tuple(args.candidate), rows)
    print(table(result))
    qs.write_json(out, result)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
