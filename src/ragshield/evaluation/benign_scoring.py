"""The benign cells of an evaluation folder: false-positive rate, utility and latency per defense.

Latency is measured end to end, except for query-time-only defenses whose allowed answers were
replayed from the undefended cell (`CellRecord.replayed`): their latency is derived from
measured parts (`_derived_latency`); a layered cell composed from a finished cell
(`CellRecord.composed_from`) already carries its source's measured latency plus the screening
time. Both are marked "derived" (`latency_derived`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragshield.evaluation.cells import BENIGN, TranscriptCache, split_cell_name
from ragshield.evaluation.metric_cache import cached
from ragshield.evaluation.results import BenignRow
from ragshield.evaluation.scoring import KnowledgeBase
from ragshield.evaluation.workload import BENIGN_FILE, read_benign
from ragshield.metrics import added_latency, detection_rates, latency_summary, utility_metrics
from ragshield.metrics.leakage import is_blocked
from ragshield.types import Transcript


def score_benign(
    kb: KnowledgeBase,
    folder: Path,
    transcripts: Mapping[str, Transcript],
    cache: dict[str, Any],
    keys: Mapping[str, str],
    cells: TranscriptCache,
) -> tuple[list[BenignRow], dict[str, Any]]:
    """One `BenignRow` per benign cell, and its drill-down (blocked, n, latency, added latency)
    by defense. `cache` holds the per-cell metrics (`ragshield.evaluation.metric_cache`)."""
    references = {item.query.id: item.reference for item in read_benign(folder / BENIGN_FILE)}
    baseline = transcripts.get(f"{BENIGN}__none")
    rows: list[BenignRow] = []
    detail: dict[str, Any] = {}
    for name, transcript in transcripts.items():
        first, defense = split_cell_name(name)
        if first != BENIGN or not transcript.responses:
            continue
        key = keys[name] + (f"|{keys[f'{BENIGN}__none']}" if baseline is not None else "")
        utility = cached(cache, name, key, lambda t=transcript: _utility(kb, t, baseline, references))  # type: ignore[misc]
        record = cells.record(name)
        replayed = bool(record and record.replayed and baseline is not None)
        timed = _derived_latency(transcript, baseline) if replayed and baseline is not None else transcript
        # a composed cell's totals are already its source's measured latency + the screening time
        derived = replayed or bool(record and record.composed_from)
        latency = latency_summary(timed.responses)
        rates = detection_rates([is_blocked(r) for r in transcript.responses], [])
        rows.append(BenignRow(defense, float(rates["fpr"] or 0.0), utility, latency["p50_ms"], latency["p95_ms"]))
        added = added_latency(timed.responses, baseline.responses) if baseline is not None else None
        detail[defense] = {
            "blocked": sum(map(is_blocked, transcript.responses)),
            "n": len(transcript.responses),
            "latency": latency,
            "added_latency": added,
            "latencies_ms": [r.timings_ms.get("total") for r in timed.responses],
            "latency_derived": derived,
            **withheld_summary(transcript),
        }
    return rows, detail


def _derived_latency(transcript: Transcript, baseline: Transcript) -> Transcript:
    """The transcript with each allowed answer's replayed generation time replaced by the
    undefended run's measured generation time for the identical request.

    Used for benign cells of query-time-only defenses (RAG-CT, rule-based, ...), whose allowed
    answers were replayed: total = this run's measured retrieval + guard + close time + the
    undefended generation (and first-token) time of the same query. Blocked queries keep their
    measured total (no generation happened).
    """
    generation = {r.query.id: r.timings_ms.get("generate", 0.0) for r in baseline.responses}
    responses = []
    for response in transcript.responses:
        timings = dict(response.timings_ms)
        if not is_blocked(response) and response.query.id in generation and "total" in timings:
            timings["total"] = timings["total"] - timings.get("generate", 0.0) + generation[response.query.id]
            timings["generate"] = generation[response.query.id]
        responses.append(replace(response, timings_ms=timings))
    return replace(transcript, responses=tuple(responses))


def _utility(
    kb: KnowledgeBase, transcript: Transcript, baseline: Transcript | None, references: Mapping[str, str]
) -> dict[str, float]:
    answers = [response.text for response in transcript.responses]
    result: dict[str, float] = {}
    gold = [references.get(response.query.id, "") for response in transcript.responses]
    if any(reference.strip() for reference in gold):
        for key, value in utility_metrics(answers, gold, kb.embedder).items():
            result[f"reference_{key}"] = float(value)
    if baseline is not None and transcript.defense != "none":
        undefended = {response.query.id: response.text for response in baseline.responses}
        pairs = [undefended.get(response.query.id, "") for response in transcript.responses]
        if any(text.strip() for text in pairs):
            for key, value in utility_metrics(answers, pairs, kb.embedder).items():
                result[f"undefended_{key}"] = float(value)
    return result


def withheld_summary(transcript: Transcript) -> dict[str, Any]:
    """What release containment withheld from the benign answers: characters per answer (mean over
    every answer, 0 where nothing was withheld) and how many answers had a withheld span."""
    withheld = [float(r.timings_ms.get("withheld_chars", 0.0)) for r in transcript.responses]
    return {
        "withheld_chars_mean": sum(withheld) / len(withheld) if withheld else None,
        "answers_withheld": sum(1 for chars in withheld if chars > 0),
    }
