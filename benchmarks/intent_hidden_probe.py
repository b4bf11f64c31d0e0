"""Does a hidden layer help an embedding part of the `intent` model on its own? (session 37-38 probe)

Each embedding part alone (no lexical part, no stacker), fitted on the shipped recipe's training
rows as `train_intent.py` builds them (row weights, classes balanced), is judged on the rows of the
development sets v19-chat12 that no recipe trains on: the multilingual part (multilingual-e5-small
vectors) on the rows the router sends there, the English part (MiniLM) on the others. A logistic
regression with the shipped inverse regularisation (C 16 and 1) against scikit-learn's
`MLPClassifier` with one hidden layer of ReLU units. For each: AUC, and the requests caught at the
lines that flag 1%, 2% and 5% of the benign rows (a line set on the judged rows themselves, so these
compare separations, not operating points). These sets are development sets: a recipe chosen from
this probe is not judged blind on them (docs/intent-model-card.md, "Toward v14, eighth round").

    python benchmarks/intent_hidden_probe.py [--part multilingual|english] [--data ../shared/data]

About 5 min single-thread here (embeddings cached). Writes
`benchmarks/results/intent_hidden_probe_<part>.json` and prints one line per fit.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import intent_recipe
import intent_scoring as iscore
import intent_sets as isets
import query_sets as qs
import train_intent as ti
from ragshield.guards.intent_languages import needs_multilingual
from ragshield.guards.intent_part_fit import balanced_weights

DEVELOPMENT = ("v19", "chat6", "v20", "chat7", "v22", "chat9", "v23", "chat10", "v24", "chat11", "v25", "chat12")
OUT = isets.REPO / "benchmarks" / "results"
# (hidden units, L2 penalty, epochs, seeds) per part; the multilingual fits average three seeds' logits
SETTINGS = {
    "multilingual": [((256,), 1e-3, 300, 3), ((256,), 1e-2, 300, 3), ((512, 128), 1e-3, 300, 3)],
    "english": [((256,), 1e-2, 300, 1), ((256,), 1e-2, 60, 1)],
}


def separation(labels: np.ndarray, scores: np.ndarray) -> dict[str, Any]:
    """AUC and the requests caught (k/n) at the lines that flag 1%, 2% and 5% of the benign rows."""
    from sklearn.metrics import roc_auc_score

    out: dict[str, Any] = {"auc": round(float(roc_auc_score(labels, scores)), 4)}
    for share in (0.01, 0.02, 0.05):
        line = np.quantile(scores[labels == 0], 1 - share)
        out[f"caught_at_{share:.0%}_benign"] = f"{int((scores[labels == 1] > line).sum())}/{int(labels.sum())}"
    return out


def rows(part: str, data: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training vectors, labels and weights of `part`, and the development rows' vectors and labels."""
    corpus = ti.build_corpus(data)
    embedders = iscore.Embedders()
    train = corpus.train
    weights = np.array(
        [ti.row_weight(e, ti.HARD_BENIGN_WEIGHT, ti.WRITTEN_BENIGN_WEIGHT, ti.ENRON_WEIGHT) for e in train]
    )
    labels = np.array([e.label for e in train])
    routed = part == "multilingual"
    if routed:
        vectors = ti.multilingual_rows(train, embedders)
        keep = ~np.isnan(vectors[:, 0])
        vectors, labels, weights = vectors[keep], labels[keep], weights[keep]
    else:
        vectors = np.asarray(embedders.embed([e.text for e in train]))
    judged = [
        e
        for name in DEVELOPMENT
        for e in isets.unseen(isets.heldout(isets.HELDOUT_SETS[name]), corpus)
        if needs_multilingual(e.text) == routed
    ]
    texts = [e.text for e in judged]
    judged_vectors = np.asarray(embedders.multi.embed(texts) if routed else embedders.embed(texts))
    embedders.save()
    return vectors, labels, weights, judged_vectors, np.array([e.label for e in judged])


def main(argv: list[str] | None = None) -> None:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--part", choices=sorted(SETTINGS), default="multilingual")
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    args = parser.parse_args(argv)
    x, y, w, judged_x, judged_y = rows(args.part, args.data)
    balanced = balanced_weights(y, w)
    c = intent_recipe.C_MULTILINGUAL if args.part == "multilingual" else 1.0
    results: dict[str, Any] = {}
    start = time.perf_counter()
    logistic = LogisticRegression(C=c, class_weight="balanced", max_iter=5000).fit(x, y, sample_weight=w)
    results[f"logistic C={c:g} (v13's part)"] = separation(judged_y, logistic.decision_function(judged_x))
    results[f"logistic C={c:g} (v13's part)"]["fit_s"] = round(time.perf_counter() - start, 1)
    print(args.part, "logistic", results[f"logistic C={c:g} (v13's part)"], flush=True)
    for hidden, alpha, epochs, seeds in SETTINGS[args.part]:
        start = time.perf_counter()
        logits = []
        for seed in range(seeds):
            net = MLPClassifier(hidden_layer_sizes=hidden, alpha=alpha, max_iter=epochs, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                net.fit(x, y, sample_weight=balanced)
            p = np.clip(net.predict_proba(judged_x)[:, 1], 1e-7, 1 - 1e-7)
            logits.append(np.log(p / (1 - p)))
        name = f"hidden {hidden} penalty {alpha:g} epochs {epochs} seeds {seeds}"
        results[name] = separation(judged_y, np.mean(logits, axis=0)) | {
            "fit_s_per_seed": round((time.perf_counter() - start) / seeds, 1)
        }
        print(args.part, name, results[name], flush=True)
    payload = {
        "part": args.part,
        "training_rows": int(y.size),
        "training_requests": int(y.sum()),
        "judged_rows": int(judged_y.size),
        "judged_requests": int(judged_y.sum()),
        "development_sets": list(DEVELOPMENT),
        "results": results,
    }
    out = OUT / f"intent_hidden_probe_{args.part}.json"
    qs.write_json(out, payload)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
