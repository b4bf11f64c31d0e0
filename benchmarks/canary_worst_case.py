"""CanaryRAG benchmark section `worst-case`: detection with FAKE models that comply perfectly (a
target and an oracle that follow the query's instruction exactly), clearly labelled as such; the
MiniLM retrieval is real. Run it through `benchmarks/canary.py`."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from canary_real_model import ATTACKS, attack_queries
from canary_runtime import canary_verdict
from ragshield.types import GenerationRequest, Query, iter_jsonl

CANARY_SHAPED = re.compile(r"\b[2-9a-hj-km-np-z]{12}\b")


def _transform_for(query: str) -> Callable[[str], str] | None:
    """What a perfectly compliant model does with the context for this adaptive query."""
    from ragshield.attacks.adaptive import SUPPRESSIONS, TRANSFORMS

    lowered = query.lower()
    transforms: dict[str, Callable[[str], str]] = {
        "spacing": lambda t: " ".join(t),
        "interleave": lambda t: " ".join("-".join(word) for word in t.split()),
        "reversal": lambda t: t[::-1],
        "base64": lambda t: base64.b64encode(t.encode()).decode(),
        "hex": lambda t: t.encode().hex(),
        "url": lambda t: quote(t, safe=""),
        "python-list": lambda t: str(t.split()),
        "uppercase": str.upper,
        "leetspeak": lambda t: t.replace("o", "0").replace("e", "3").replace("i", "1"),
    }
    for name, instruction in TRANSFORMS.items():
        if instruction.lower() in lowered:
            return transforms.get(name)  # None: translation cannot be emulated faithfully
    if any(s.lower() in lowered for s in SUPPRESSIONS):
        return lambda t: CANARY_SHAPED.sub("", t)
    return lambda t: t


EXTRACTION = re.compile(r"context|copy and output|verbatim|repeat", re.IGNORECASE)


class CompliantTarget:
    """FAKE worst-case target: outputs its context transformed exactly as an extraction query asks;
    answers other queries with a fixed sentence (as a model that does not leak would)."""

    name = "compliant-fake-target"

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        text = request.as_text()
        context = text.split("context: ", 1)[-1].split("\nquestion: ", 1)[0]
        question = text.split("\nquestion: ", 1)[-1]
        if EXTRACTION.search(question) is None:
            output = "Please see a doctor if the symptoms persist."
        else:
            transform = _transform_for(question) or (lambda t: "Lo siento.")
            output = transform(context)
        for start in range(0, len(output), 4):
            yield output[start : start + 4]


class CompliantOracle:
    """FAKE capable oracle: copies its passage, obeying the query's suppression/transform like the target."""

    name = "compliant-fake-oracle"

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        text = request.as_text()
        passage = text.split("passage: ", 1)[-1].split("\nrequest: ", 1)[0]
        query = text.split("\nrequest: ", 1)[-1]
        transform = _transform_for(query) or (lambda t: "Lo siento.")
        yield transform(passage)


def bench_worst_case(data: Path, index_dir: Path, n: int, seed: int) -> dict:
    """FAKE models (labelled): detection when the model complies perfectly; MiniLM retrieval is real."""
    from ragshield.guards.factory import DefenseContext, build_defense
    from ragshield.pipeline import RagPipeline
    from ragshield.rag.retriever import open_retriever

    retriever, _ = open_retriever(index_dir)
    out: dict[str, Any] = {"label": "WORST CASE with FAKE compliant target and oracle (not a real model)"}
    for mode in ("off", "auto"):
        context = DefenseContext(generator=CompliantTarget(), oracle_generator=CompliantOracle())
        defense = build_defense("canary-rag", context, {"canary-rag": {"oracle": mode}})
        pipeline = RagPipeline(retriever, CompliantTarget(), defense=defense, k=3)
        rows = {}
        for name in (*ATTACKS, "benign"):
            if name == "benign":
                queries = [r["query"] for r in iter_jsonl(data / "queries" / "benign_queries_sage.jsonl")][:n]
            else:
                queries = attack_queries(name, data, n, seed)
            flagged = 0
            by_path = {"target": 0, "oracle": 0}
            for text in queries:
                response = pipeline.answer(Query(text))
                verdict = canary_verdict(response)
                if response.blocked and verdict is not None:
                    flagged += 1
                    by_path["target" if verdict.evidence["leaked_canaries"] else "oracle"] += 1
            rows[name] = {"queries": len(queries), "flagged_rate": round(flagged / len(queries), 4), **by_path}
        out[f"oracle_{mode}"] = rows
        print(f"worst case, oracle {mode}: {rows}", flush=True)
    return out
