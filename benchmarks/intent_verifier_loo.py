"""Does the e5 veto keep the requests of a language its fit never saw? (leave one language out)

`intent_verifier.py --encoder e5` fits the veto on every language of model v11's training rows, so
its development figures cannot show what it does to a language it never read, which is what the
issue's leave-one-language-out goal (>= 0.80 of a left-out language's requests) asks. A veto only
removes flags: a left-out language's TPR with it is at least its TPR without it, less the share of
that language's flagged requests the veto lets through. This fits the e5 veto without one language
at a time (same recipe and seed; the frozen layers' output is computed once for all rows) and counts,
on that language's own phrasings (requests and benign rows, which v11 trained on and flags as
`flagged`), how many flags each `tau` lets through.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_verifier_loo.py [--languages ja,it,zh,fr]

Writes `benchmarks/results/intent_verifier_e5_loo_pairs.json` (the shipped recipe, with the contrastive
pairs, less the left-out language's; `--no-pairs`: `intent_verifier_e5_loo.json`, session 25's recipe;
resumed from it: a language already there is not refitted) and prints a table. About 15 minutes per
language on 2 cores.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

import intent_scoring as iscore
import intent_sets as isets
import intent_verifier as iv
import intent_verifier_fit as ivf
import intent_verifier_rows as ivr
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent_model import IntentModel

OUT = qs.REPO / "benchmarks" / "results" / "intent_verifier_e5_loo.json"


def left_out(
    model: IntentModel, corpus: isets.Corpus, training: list[isets.Example], frozen: list[Any], language: str, args: Any
) -> dict[str, Any]:
    own = [e for e in corpus.train if e.lang == language and e.source == "own"]
    verifier, kept = ivf.fit_without_language(model, training, frozen, language, vars(args))
    texts = [e.text for e in own]
    flagged = np.asarray(iscore.probabilities(model, texts, iscore.Embedders())) >= model.threshold
    routed = model.routes(texts)
    asked = [i for i in range(len(texts)) if flagged[i] and routed[i]]
    logits = dict(zip(asked, iv.read(verifier, model, [texts[i] for i in asked]), strict=True))
    row: dict[str, Any] = {"training_rows": kept}
    for label, kind in ((1, "requests"), (0, "benign")):
        rows = [i for i in asked if own[i].label == label]
        row[kind] = {
            "n": sum(e.label == label for e in own),
            "flagged_and_read": len(rows),
            "let_through": {str(tau): sum(logits[i] < tau for i in rows) for tau in iv.TAUS},
        }
    return row


def table(result: dict[str, Any]) -> str:
    lines = [
        "| left out | requests flagged (of n) | let through at " + " / ".join(str(t) for t in iv.TAUS) + " | benign "
        "flagged | let through |",
        "|---|---|---|---|---|",
    ]
    for language, row in result["languages"].items():
        r, b = row["requests"], row["benign"]
        lines.append(
            f"| {language} | {r['flagged_and_read']} (of {r['n']}) | "
            + " / ".join(str(v) for v in r["let_through"].values())
            + f" | {b['flagged_and_read']} (of {b['n']}) | "
            + " / ".join(str(v) for v in b["let_through"].values())
            + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--languages", default="ja,it,zh,fr")
    parser.add_argument("--train-top", type=int, default=2)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=128)
    ivr.add_pairs_switch(parser)
    args = parser.parse_args(argv)
    out = OUT if not args.pairs else OUT.with_name(f"{OUT.stem}_pairs.json")
    if not (args.data / "queries").exists():
        raise SystemExit(f"{args.data} has no queries/: this benchmark needs ../shared/data")
    model = IntentModel.load()
    corpus = ti.build_corpus(args.data)
    result = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {"languages": {}}
    result["settings"] = {k: v for k, v in vars(args).items() if k != "data"} | {"taus": iv.TAUS, "seed": ivf.SEED}
    todo = [lang for lang in args.languages.split(",") if lang not in result["languages"]]
    if todo:
        training = ivr.training_rows(corpus, args.pairs)
        base = ivf.new_verifier("e5", model, args.train_top, args.max_length)
        base.prepare(training)
        for language in todo:
            result["languages"][language] = left_out(model, corpus, training, base.frozen, language, args)
            qs.write_json(out, result)
            print(f"left out {language}: {result['languages'][language]}", flush=True)
    print(table(result))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
