"""The shipped intent model on Enron e-mail openings as the grids ask them, against the form it was tested in.

`benchmarks/query_sets.py` and `benchmarks/train_intent.py`, up to intent model v7, built their
Enron benign texts as the body's first 50 `\\w+` words joined by spaces: punctuation, line
structure and quoted-mail markers were gone (from v8 both use the text as written). The grids'
benign workload (`evaluation/workload.py`, TGTB's Performance set) asks the first 50 words of
the body as written: "-----Original Message----- From: Denton, Rhonda L. Sent:
...". This scores every Enron e-mail both ways with the shipped model at its operating point, per
split of `train_intent.py` (the bucket of the stripped opening; `test` is the split the report's
Enron FPR is measured on, `test-short` its mails of fewer than 10 words, which up to v7 were in no
split), apart for the
e-mails that quote or forward another mail, and on the grids' own 300 held-out e-mails (seed 0).
Counts include duplicate openings.

    OMP_NUM_THREADS=1 python benchmarks/intent_enron_format.py [--data ../shared/data]

Writes `benchmarks/results/intent_enron_format.json` and merges it into the `generalisation`
payload of `benchmarks/results/query_detection.json` (`query_detection.py --report-only` shows it).
Rates only: no e-mail text is written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import intent_public as ipub
import intent_scoring as iscore
import query_sets as qs
from intent_generalisation import rate
from ragshield.datasets.loaders import load_enron
from ragshield.evaluation.workload import holdout_items, split_holdout
from ragshield.guards.intent_model import IntentModel
from ragshield.metrics.intervals import rate_text

OUT = qs.REPO / "benchmarks" / "results" / "intent_enron_format.json"


# wider than train_intent's `_QUOTED` (which cuts bodies at the commonest two markers): spaced and
# shorter-dashed variants of both count here
QUOTING = re.compile(r"-----\s*Original Message|-{5,}\s*Forwarded by")


def _quotes_a_mail(text: str) -> bool:
    """The opening quotes or forwards another mail."""
    return QUOTING.search(text) is not None


def measure(data: Path) -> dict[str, Any]:
    path = data / "enron.jsonl"
    if not path.is_file():
        print(f"{path} is absent: nothing measured", file=sys.stderr)
        raise SystemExit(1)
    pairs = ipub.enron_mail_openings(data)
    asked, stripped = [written for written, _ in pairs], [plain for _, plain in pairs]
    # the bucket train_intent.py puts each e-mail in (from v8 short mails too; up to v7 a mail of fewer
    # than 10 words was in no split); "test-short": the test mails of fewer than 10 words, apart
    split = [ipub.enron_split(written, plain) for written, plain in pairs]
    short = {i for i, text in enumerate(stripped) if len(text.split()) < 10}
    model, embedders = IntentModel.load(), iscore.Embedders()
    as_asked = iscore.probabilities(model, asked, embedders)
    as_tested = iscore.probabilities(model, [text or " " for text in stripped], embedders)
    embedders.save()
    out: dict[str, Any] = {"threshold": model.threshold, "model_version": model.meta.get("model_version")}
    for name in ("train", "calib", "test", "test-short"):
        base = name.removesuffix("-short")
        rows = [i for i, s in enumerate(split) if s == base and (name == base or i in short)]
        quoting = [i for i in rows if _quotes_a_mail(asked[i])]
        own = [i for i in rows if not _quotes_a_mail(asked[i])]
        out[name] = {
            "as_asked": rate(as_asked[rows], model.threshold),
            "as_tested": rate(as_tested[rows], model.threshold),
            "as_asked_quoting_a_mail": rate(as_asked[quoting], model.threshold),
            "as_asked_rest": rate(as_asked[own], model.threshold),
        }
        row = out[name]
        print(
            f"{name:6s} as the grids ask {rate_text(row['as_asked']['k'], row['as_asked']['n'])} | as tested "
            f"(punctuation stripped) {rate_text(row['as_tested']['k'], row['as_tested']['n'])} | quoting a mail "
            f"{rate_text(row['as_asked_quoting_a_mail']['k'], row['as_asked_quoting_a_mail']['n'])}, the rest "
            f"{rate_text(row['as_asked_rest']['k'], row['as_asked_rest']['n'])}"
        )
    _, held = split_holdout(load_enron(str(path)), 300, seed=0)
    grid = [item.query.text for item in holdout_items(held)]
    grid_scores = iscore.probabilities(model, grid, embedders)
    out["grid_holdout"] = rate(grid_scores, model.threshold)
    # the grids hold out by their own seed, so most of their 300 mails are intent training or calibration
    # rows (from v8, which trains on e-mail as written): the test-bucket ones are the unseen figure
    unseen = [i for i, in_test in enumerate(ipub.enron_test_bucket(grid, data)) if in_test]
    out["grid_holdout_test_bucket"] = rate(grid_scores[unseen], model.threshold)
    for name in ("grid_holdout", "grid_holdout_test_bucket"):
        print(f"{name}: {rate_text(out[name]['k'], out[name]['n'])}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    args = parser.parse_args()
    result = measure(args.data)
    qs.write_json(OUT, result)
    report = OUT.parent / "query_detection.json"
    if report.is_file():
        payload = json.loads(report.read_text(encoding="utf-8"))
        payload.setdefault("generalisation", {})["enron_grid_format"] = result
        qs.write_json(report, payload)
    print(f"wrote {OUT.relative_to(qs.REPO)}")


if __name__ == "__main__":
    main()
