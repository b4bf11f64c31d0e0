"""Equality harness for `context-echo` speed work: the same streamed cases through two revisions.

Real retrieved chunks (HealthcareMagic and Enron from ../shared/data, three per request, their first
1,200 characters), each
request's answer written in every view of `ragshield.encodings` (prose, the copy, prose), plus the
cost benchmark's prose, streamed through `ContextEchoGuard` in several settings: `redact` with the
unnatural-output detector (4-character deltas, and random 1-13-character deltas), `halt` with PII,
without the detector with PII and a per-user budget. Per case it records the withheld spans, every
verdict (score, reason, evidence) and the delta at which a `halt` stream stopped.

With `--baseline REV` the code of git revision REV and the working tree each run the cases in a
fresh interpreter and the script prints how many cases differ (exit status 1 if any). Nothing is
written to the repository.

    .venv/bin/python benchmarks/release_equality.py --baseline main [--requests 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from revisions import revision_src, run_worker

REPO = Path(__file__).resolve().parents[1]
PROSE_VOCABULARY = (  # the cost benchmark's
    "the patient should rest and drink water if the pain or fever persists see your doctor who may "
    "consider tests of blood pressure heart and lungs take 400 mg twice daily with food"
)
QUESTION = "Can you tell me what the records say about this?"


def _stream(guard: Any, retrieval: Any, text: str, sizes: list[int]) -> dict[str, Any]:
    monitor = guard.open(retrieval)
    cursor, number, halted = 0, 0, None
    while cursor < len(text):
        size = sizes[number % len(sizes)]
        verdict = monitor.observe(text[cursor : cursor + size])
        cursor += size
        number += 1
        if verdict is not None:
            said = [verdict.action.value, verdict.score, verdict.reason, verdict.evidence]
            halted = {"delta": number, "verdict": said}
            break
    closed = monitor.close()
    spans = [(span.start, span.end, span.reason) for span in monitor.withheld(0, len(text) + 1)]
    return {
        "spans": spans,
        "halted": halted,
        "verdict": [closed.action.value, closed.score, closed.reason, closed.evidence],
        "holdback": monitor.holdback_chars,
    }


def run_cases(requests: int, seed: int) -> list[dict[str, Any]]:
    """Every case's outcome, in a fixed order, with the code on `sys.path`."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from ragshield.encodings import VIEWS, encode
    from ragshield.guards.release.budget import MemoryBudget
    from ragshield.guards.release.echo import ContextEchoGuard, EchoSettings
    from ragshield.pii.analyzer import PiiAnalyzer
    from ragshield.pii.store import ChunkPiiStore
    from ragshield.types import Query, RetrievalResult, ScoredChunk
    from release_views import knowledge_bases  # the cost and views benchmark's chunk loader

    pii = ChunkPiiStore(PiiAnalyzer(ner=False))
    budget = MemoryBudget()
    guards = {
        "redact": ContextEchoGuard(settings=EchoSettings()),
        "halt+pii": ContextEchoGuard(settings=EchoSettings(action="halt"), pii=pii),
        "plain+pii+budget": ContextEchoGuard(settings=EchoSettings(unnatural=False), pii=pii, budget=budget),
    }
    rng = random.Random(seed)
    jitter = [rng.randint(1, 13) for _ in range(997)]
    words = PROSE_VOCABULARY.split()
    prose = " ".join(rng.choice(words) for _ in range(800))
    out: list[dict[str, Any]] = []
    for kb, chunks in knowledge_bases(2000).items():
        for number in range(requests):
            # the chunks' first 1,200 characters: each request is indexed once per case (setup dominates)
            triple = [replace(chunk, text=chunk.text[:1200]) for chunk in rng.sample(chunks, 3)]
            hits = tuple(ScoredChunk(chunk, 0.9 - 0.1 * i, i) for i, chunk in enumerate(triple))
            retrieval = RetrievalResult(Query(QUESTION, user_id=f"eq-{kb}-{number}"), hits)
            record = triple[0].text[:600]
            for view in ("prose", *VIEWS):
                copy = prose[:2000] if view == "prose" else encode(record, view, random.Random(number))
                text = f"Sure. {prose[: 40 * (number + 1)]}\n{copy}\n{prose[-120:]} Hope this helps."
                for name, guard in guards.items():
                    for deltas, sizes in (("4", [4]), ("jitter", jitter)):
                        if deltas == "jitter" and name != "redact":
                            continue
                        case = _stream(guard, retrieval, text, sizes)
                        out.append({"case": f"{kb}/{number}/{view}/{name}/{deltas}", **case})
    return out


def _run_in(src: Path, requests: int, seed: int) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = run_worker(
        __file__, src, ["--worker", "--requests", str(requests), "--seed", str(seed)], timeout=3600
    )
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--baseline", default="main", help="git revision to compare the working tree with")
    parser.add_argument("--requests", type=int, default=3, help="requests (three chunks each) per knowledge base")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_cases(args.requests, args.seed), default=str))
        return 0
    with revision_src(args.baseline) as (commit, baseline_src):
        before = _run_in(baseline_src, args.requests, args.seed)
    after = _run_in(REPO / "src", args.requests, args.seed)
    differ = [a["case"] for a, b in zip(before, after, strict=True) if {**a, "holdback": 0} != {**b, "holdback": 0}]
    holdbacks = sorted({(a["holdback"], b["holdback"]) for a, b in zip(before, after, strict=True)})
    withheld = sum(bool(case["spans"]) for case in after)
    halted = sum(case["halted"] is not None for case in after)
    digest = hashlib.sha256(json.dumps(after, default=str).encode()).hexdigest()[:12]
    print(
        f"{len(after)} cases ({withheld} with withheld spans, {halted} halted), {len(differ)} differ from {commit}; "
        f"holdback (before, after): {holdbacks}; digest {digest}"
    )
    for case in differ[:20]:
        print("  differs:", case)
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
