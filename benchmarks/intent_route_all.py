"""Can a deployment that retrieves with multilingual-e5-small score EVERY query from that vector?

The `intent` model reads English queries with its MiniLM part and routes other languages to its
multilingual (e5) part. A deployment retrieving with `multilingual-e5-small` gets non-English
queries scored from the retrieval's own vector; if the e5 part also held on English, English
queries would need no MiniLM pass either. This scores every query set of
`benchmarks/query_detection.py` (both knowledge bases) and the hand-written held-apart sets v6 and
v7 twice at the shipped operating point: as shipped (routed) and with every query forced through
the multilingual part. One batch per embedder; about 30 min single-thread here (e5 on 8.8k texts).

    python benchmarks/intent_route_all.py [--data ../shared/data]

Writes `benchmarks/results/intent_route_all.json` and prints a table (flagged share, Wilson 95%).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import query_sets as qs
from ragshield.guards.intent_model import IntentModel
from ragshield.metrics.intervals import rate_text
from ragshield.rag.embedding import MultilingualE5Embedder, SentenceTransformerEmbedder

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "intent_route_all.json"


def labelled_sets(data: Path) -> list[tuple[str, list[str]]]:
    """(name, texts) of every query set of both scenarios and of held-apart sets v6 / v7 by label and language."""
    scenarios, _ = qs.load_scenarios(data, qs.DEFAULT_CACHE)
    sets = [(f"{sc.kb}/{name}/{qset.kind}", qset.texts) for sc in scenarios for name, qset in sc.sets.items()]
    for version in ("v6", "v7"):
        path = REPO / "benchmarks" / "data" / f"intent_heldout_{version}.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for label in ("attack", "benign"):
            for english in (True, False):
                texts = [r["text"] for r in rows if r["label"] == label and (r.get("lang", "en") == "en") == english]
                if texts:
                    sets.append((f"heldout-{version}/{label}/{'en' if english else 'other'}", texts))
    return sets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=qs.DEFAULT_DATA)
    args = parser.parse_args()
    sets = labelled_sets(args.data)
    texts = sorted({text for _, group in sets for text in group})
    model = IntentModel.load()
    started = time.perf_counter()
    english_vectors = SentenceTransformerEmbedder().embed(texts)
    e5_vectors = MultilingualE5Embedder().embed(texts)
    print(f"embedded {len(texts)} texts in {time.perf_counter() - started:.0f} s", flush=True)
    routed = {i: e5_vectors[i] for i, r in enumerate(model.routes(texts)) if r}
    shipped = np.array([s.probability for s in model.score(texts, english_vectors, routed)])
    forced = np.array([s.probability for s in model.score(texts, english_vectors, dict(enumerate(e5_vectors)))])
    row = {text: i for i, text in enumerate(texts)}
    out: dict[str, dict[str, int]] = {}
    for name, group in sets:
        index = [row[text] for text in group]
        shipped_n, forced_n = (
            int((shipped[index] >= model.threshold).sum()),
            int((forced[index] >= model.threshold).sum()),
        )
        out[name] = {"n": len(group), "shipped": shipped_n, "forced": forced_n}
        print(
            f"{name:52s} shipped {rate_text(shipped_n, len(group)):28s} "
            f"all multilingual {rate_text(forced_n, len(group))}"
        )
    OUT.write_text(
        json.dumps({"threshold": model.threshold, "model": model.meta.get("model_version"), "sets": out}, indent=1)
        + "\n"
    )
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
