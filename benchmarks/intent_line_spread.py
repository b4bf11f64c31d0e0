"""How far do a few Enron e-mails move the `intent` model's English line? (session 39)

The English operating point is at least each public source's own 0.5% threshold on its calibration
texts (`train_intent.calibrate`, "And per public source" in the model card), and for v13 and every v14
candidate of sessions 36-39 Enron's decided it: the score that lets one of its 253 calibration e-mails
through. Whether PIDE-wiki stays over 0.95 has turned on that line (candidates R and Q). This study
resamples the Enron calibration e-mails with replacement (the other calibration texts fixed), recomputes
the line as `calibrate` does for each resample, and reads at the shipped line and at the resamples'
2.5th, 50th and 97.5th percentiles the published families' TPR and the Enron test bucket's FPR (the
model's probabilities, English path; no second opinion, as rule 1 reads them). It does so for the
shipped estimator of each source's own threshold (the order statistic that lets `SOURCE_FPR` of its texts
through) and, for comparison, for the Harrell-Davis estimate of the same quantile (a weighted mean of
all order statistics, steadier for extreme quantiles); the study only reads the second, nothing ships it.

    python benchmarks/intent_line_spread.py [--model PATH] [--resamples 2000] [--data ../shared/data]

About 3 minutes single-thread here. Writes `benchmarks/results/intent_line_spread[_<name>].json` and
prints a table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import intent_generalisation as ig
import intent_scoring as iscore
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent_model import IntentModel

OUT = qs.REPO / "benchmarks" / "results" / "intent_line_spread.json"
PERCENTILES = (2.5, 50.0, 97.5)
SEED = 39


Estimator = Callable[[list[Any], np.ndarray, np.ndarray], dict[str, float]]


def harrell_davis_points(calib: list[Any], scores: np.ndarray, routed: np.ndarray) -> dict[str, float]:
    """`train_intent.source_thresholds`, each source's own threshold the Harrell-Davis estimate of its
    English-path scores' (1 - `SOURCE_FPR`) quantile instead of the order statistic."""
    from scipy.stats.mstats import hdquantiles

    points = ti.source_thresholds(calib, scores, routed)
    for source in points:
        rows = np.array([e.source == source for e in calib]) & ~routed
        points[source] = float(hdquantiles(scores[rows], prob=[1 - ti.SOURCE_FPR])[0])
    return points


ESTIMATORS: dict[str, Estimator] = {
    "order statistic (shipped)": ti.source_thresholds,
    "Harrell-Davis": harrell_davis_points,
}


def resampled_lines(
    calib: list[Any], scores: np.ndarray, routed: np.ndarray, resamples: int, estimator: Estimator
) -> np.ndarray:
    """The English line (`train_intent.english_line` over the `estimator`'s source thresholds) of each resample
    of the English-path Enron calibration texts (with replacement, as many as there are), the other texts fixed."""
    rng = np.random.default_rng(SEED)
    enron = np.flatnonzero(np.array([e.source == "enron" for e in calib]) & ~routed)
    rest = np.setdiff1d(np.arange(len(calib)), enron)
    lines = np.empty(resamples)
    for b in range(resamples):
        rows = np.concatenate([rest, rng.choice(enron, size=enron.size, replace=True)])
        chosen = [calib[i] for i in rows]
        points = estimator(chosen, scores[rows], routed[rows])
        lines[b] = ti.english_line(scores[rows][~routed[rows]], points)
    return lines


def spread(
    lines: np.ndarray, shipped: float, families: dict[str, np.ndarray], enron_test: np.ndarray
) -> dict[str, Any]:
    """What the families and the Enron test bucket give at the line `shipped` and at the resampled `lines`."""
    at: dict[str, dict[str, Any]] = {}
    for label, line in [("shipped", shipped), *((f"p{p:g}", float(np.percentile(lines, p))) for p in PERCENTILES)]:
        at[label] = {
            "line": line,
            "families": {name: ig.rate(s, line) for name, s in families.items()},
            "enron_test_flagged": ig.rate(enron_test, line),
        }
    family_floor = np.array([min(float((s >= line).mean()) for s in families.values()) for line in lines])
    enron_rate = np.array([float((enron_test >= line).mean()) for line in lines])
    return {
        "line": shipped,
        "line_percentiles": {f"p{p:g}": float(np.percentile(lines, p)) for p in (2.5, 25.0, 50.0, 75.0, 97.5)},
        "share_of_resamples": {
            "every_family_at_least_0.95": float((family_floor >= 0.95).mean()),
            "enron_test_at_most_1pct": float((enron_rate <= 0.01).mean()),
            "both": float(((family_floor >= 0.95) & (enron_rate <= 0.01)).mean()),
        },
        "at": at,
    }


def measure(model: IntentModel, data: Path, resamples: int) -> dict[str, Any]:
    corpus = ti.build_corpus(data)
    embedders = iscore.Embedders()
    texts = [e.text for e in corpus.calib]
    scores = np.asarray(iscore.probabilities(model, texts, embedders))
    routed = np.array(model.routes(texts), dtype=bool)
    families = {
        name: np.asarray(iscore.probabilities(model, rows, embedders))
        for name, rows in ig.published_families(data).items()
    }
    enron_test = np.asarray(iscore.probabilities(model, [e.text for e in corpus.test["enron"]], embedders))
    by_estimator = {}
    for name, estimator in ESTIMATORS.items():
        shipped = ti.english_line(scores[~routed], estimator(corpus.calib, scores, routed))
        lines = resampled_lines(corpus.calib, scores, routed, resamples, estimator)
        by_estimator[name] = spread(lines, shipped, families, enron_test)
    return {
        "model_version": model.meta.get("model_version"),
        "model_threshold": model.threshold,
        "resamples": resamples,
        "seed": SEED,
        "estimators": by_estimator,
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        "| estimator | line | value | PIDE-wiki | PIDE-medical | lowest other family | Enron test flagged |",
        "|---|---|---|---|---|---|---|",
    ]
    shares = []
    for estimator, found in result["estimators"].items():
        for label, row in found["at"].items():
            fam = row["families"]
            others = min((v["rate"], k) for k, v in fam.items() if not k.startswith("pide"))
            enron = row["enron_test_flagged"]
            lines.append(
                f"| {estimator} | {label} | {row['line']:.4f} | {fam['pide-wiki']['k']}/{fam['pide-wiki']['n']} | "
                f"{fam['pide-medical']['k']}/{fam['pide-medical']['n']} | {others[1]} {others[0]:.3f} | "
                f"{enron['k']}/{enron['n']} = {100 * enron['rate']:.2f}% |"
            )
        share = found["share_of_resamples"]
        shares.append(
            f"{estimator}: every family >= 0.95 in {share['every_family_at_least_0.95']:.1%}, Enron test <= 1% in "
            f"{share['enron_test_at_most_1pct']:.1%}, both in {share['both']:.1%}"
        )
    lines.append(f"\nOf {result['resamples']} resamples of the Enron calibration e-mails: " + "; ".join(shares) + ".")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    parser.add_argument("--model", type=Path, help="an intent model file (default: the shipped one)")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.resamples < 100:
        parser.error("--resamples must be at least 100 (percentiles of fewer mean little)")
    if not (args.data / "queries").exists():
        sys.exit(f"skipped: {args.data} has no queries/ (../shared/data is needed)")
    model = IntentModel.load(args.model) if args.model else IntentModel.load()
    result = measure(model, args.data, args.resamples)
    result["model"] = f"{args.model.parent.name}/{args.model.name}" if args.model else "shipped"
    qs.write_json(args.out, result)
    print(table(result))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
