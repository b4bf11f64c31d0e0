"""The audit log never holds canaries, chunk text or PII values, even when a guard breaks the
evidence contract: a FAKE leaky guard puts all three into its verdict, the real service logs it."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from service_helpers import KEY, KEYS, audit_lines, openai

from ragshield.datasets.synthetic import make_synthetic_corpus
from ragshield.generators.scripted import ScriptedGenerator
from ragshield.guards.base import Defense
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.pipeline import RagPipeline
from ragshield.service.app import create_app
from ragshield.service.audit import Scrubber, digest
from ragshield.service.server import BackgroundServer
from ragshield.service.settings import ServeConfig
from ragshield.types import Action, RetrievalResult, Verdict

pytestmark = pytest.mark.service


def test_scrubber_hashes_secrets_and_keeps_ids_and_numbers() -> None:
    chunk = "Patient Norma Fisher, phone (487) 647-5938, has acne."
    scrub = Scrubber(canaries=["k3x9q7wz2m4v"], texts=[chunk])
    assert scrub.value({"chunk_ids": ["syn-00001"], "count": 3, "score": 0.25}) == {
        "chunk_ids": ["syn-00001"],
        "count": 3,
        "score": 0.25,
    }
    assert scrub.string("k3x9q7wz2m4v") == digest("k3x9q7wz2m4v")
    assert "k3x9" not in scrub.string("found K3X9Q7WZ2M4V in the output")  # case-folded match
    cleaned = scrub.string("number (487) 647-5938 leaked")
    assert cleaned.startswith("number ") and cleaned.endswith(" leaked") and "487" not in cleaned
    assert scrub.string("Norma Fisher, phone") == digest("Norma Fisher, phone")
    assert scrub.string("x" * 500) == digest("x" * 500)
    assert scrub.value(math.inf) == "inf"
    json.dumps(scrub.value({"nested": [{"deep": chunk}], "inf": math.inf}), allow_nan=False)


@dataclass
class _LeakyMonitor:
    retrieval: RetrievalResult
    holdback_chars: int = 0
    seen: list[str] = field(default_factory=list)

    def observe(self, delta: str) -> Verdict | None:
        return None

    def close(self) -> Verdict:
        chunk_id, canaries = next(iter(self.retrieval.markers.items()))
        hit = next(h for h in self.retrieval.hits if h.chunk.id == chunk_id)
        return Verdict(
            "leaky-fake",
            Action.ALLOW,
            0.0,
            1.0,
            reason=f"saw {canaries[0]} near {hit.chunk.text[10:40]}",
            evidence={
                "canary": canaries[0],
                "chunk": hit.chunk.text[:80],
                "chunk_id": chunk_id,
                "count": 2,
                "pii": _pii_of(hit.chunk.text),
                "note": f"phone {_pii_of(hit.chunk.text)[-1]} seen",
            },
        )

    def redact(self, text: str) -> str:
        return text


class LeakyGuard:
    """FAKE output guard that breaks the evidence contract on purpose."""

    name = "leaky-fake"

    def open(self, retrieval: RetrievalResult) -> _LeakyMonitor:
        return _LeakyMonitor(retrieval)


PII = make_synthetic_corpus(40, seed=1).pii or ()  # the fake retriever's corpus and its PII inventory


def _pii_of(text: str) -> list[str]:
    return [item.value for item in PII if item.value in text]


def test_audit_line_scrubs_a_leaky_guard(fake_retriever: Any, tmp_path: Path) -> None:
    canary = build_defense("canary-rag", DefenseContext(), {"canary-rag": {"oracle": "off"}})
    defense = Defense(name="canary+leaky", decorators=canary.decorators, output_guards=(LeakyGuard(),))
    audit = tmp_path / "audit.jsonl"
    config = ServeConfig(api_keys=KEYS, audit_log=str(audit))
    sink: list[RetrievalResult] = []
    from ragshield.integrations.shield import recording_defense

    pipeline = RagPipeline(fake_retriever, ScriptedGenerator(["fine"]), defense=recording_defense(defense, sink))
    with BackgroundServer(create_app(config, pipeline=pipeline, warm_up=False)) as server:
        api = openai.OpenAI(base_url=f"{server.url}/v1", api_key=KEY["alice"], max_retries=0)
        api.chat.completions.create(model="ragshield", messages=[{"role": "user", "content": "acne for weeks, Norma"}])
    raw = audit.read_text(encoding="utf-8")
    (line,) = audit_lines(audit)
    evidence = line["verdicts"][-1]["evidence"]
    assert evidence["chunk_id"] in line["chunk_ids"] and evidence["count"] == 2  # ids and numbers survive
    canaries = [c for result in sink for values in result.markers.values() for c in values]
    assert canaries and all(c not in raw for c in canaries)
    texts = [hit.chunk.text for result in sink for hit in result.hits]
    assert all(text[:80] not in raw and text[10:40] not in raw for text in texts)
    leaked = [value for text in texts for value in _pii_of(text)]
    assert leaked and all(value not in raw for value in leaked)
    assert "acne for weeks, Norma" not in raw and line["query_sha256"] == digest("acne for weeks, Norma")
