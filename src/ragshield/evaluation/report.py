"""Metrics, `results.json`, `report.md` and plots of an evaluation folder, from its transcripts alone.

`build_report(OUT)` never runs a generator: it reads the cached transcripts, the index's
chunks and the run's settings (`run.json`), scores leakage with `ragshield.metrics`, and
writes:

* `results.json`: `attack_rows` (`attack`, `defense`, `ulc`, `pii`, `asr`, `crr`, `queries`,
  `blocked`), `benign_rows` (`defense`, `fpr`, `utility`, `latency_p50_ms`,
  `latency_p95_ms`), plus `meta` and `detail` (drill-down: repeat@20, PII by kind, TPR,
  relative CRR, added latency, the RAG-CT re-scoring sweeps, the top-k sweep, and per cell
  `ci95`: bootstrap intervals of ULC / PII / CRR over its queries), and `warnings` (missing
  cells, failures, an empty benign set);
* `report.md` (`ragshield.evaluation.tables`), PNG plots (`ragshield.evaluation.plots`) and
  the self-contained `report.html` (`ragshield.evaluation.html_report`).

Data flows one way: harness -> report -> (scoring, tables, plots, html_report) -> results.
The renderers read only the `ResultTable` (`ragshield.evaluation.results`), so
`rerender_report` rebuilds every output from `results.json` alone.

Benign latency is measured end to end, except for query-time-only defenses whose allowed
answers were replayed from the undefended cell (`CellRecord.replayed`): their latency is
derived from measured parts (`_derived_latency`), and for layered cells composed from a
finished cell (`CellRecord.composed_from`, `ragshield.evaluation.compose`). The report marks
both "derived".

Per-cell metrics are cached in `metrics.json` (keyed by the cell's fingerprint and finish
time), so a rebuild after a resumed run scores only the new cells. The embedder (for CRR's
cosine condition and utility similarity) is loaded only when something must be scored.
"""

from __future__ import annotations

import base64
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.evaluation import rescoring
from ragshield.evaluation.cells import BENIGN, TranscriptCache, read_run_file, split_cell_name
from ragshield.evaluation.config import EvalConfig
from ragshield.evaluation.html_report import render_html
from ragshield.evaluation.plots import write_plots
from ragshield.evaluation.results import AttackRow, BenignRow, ResultTable
from ragshield.evaluation.scoring import KnowledgeBase, score_leakage
from ragshield.evaluation.tables import render_markdown
from ragshield.evaluation.workload import BENIGN_FILE, read_benign
from ragshield.metrics import (
    added_latency,
    detection_rates,
    latency_summary,
    utility_metrics,
)
from ragshield.metrics.leakage import is_blocked
from ragshield.rag.store import PII_FILE
from ragshield.types import Transcript

__all__ = ["AttackRow", "BenignRow", "ResultTable", "build_report", "rerender_report", "write_outputs"]

log = logging.getLogger(__name__)

RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"
HTML_FILE = "report.html"
METRICS_FILE = "metrics.json"
METRIC_VERSION = 2  # 2: bootstrap intervals of ULC / PII / CRR


def _metric_cache(out_dir: Path) -> dict[str, Any]:
    path = out_dir / METRICS_FILE
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except ValueError:
        data = {}
    return data


def _cached(cache: dict[str, Any], name: str, key: str, compute: Callable[[], Any]) -> Any:
    entry = cache.get(name)
    if entry is None or entry.get("key") != key:
        entry = cache[name] = {"key": key, "value": compute()}
    return entry["value"]


def build_report(
    out_dir: str | Path,
    *,
    embedder: Any = None,
    plots: bool = True,
    progress: Callable[[str], None] | None = None,
) -> ResultTable:
    """Score every cached transcript of `out_dir` and write results.json, report.md and plots.

    `embedder` reuses an already loaded embedder (else the run's is loaded when needed).

    Raises:
        ConfigError: `out_dir` holds no evaluation.
    """
    folder = Path(out_dir)
    run = read_run_file(folder)
    config = EvalConfig.model_validate(run["config"])
    kb = KnowledgeBase(folder, run, config, embedder)
    cells = TranscriptCache(folder)
    transcripts = cells.transcripts()
    cache = _metric_cache(folder)
    keys = {name: _key(cells, name, kb.embedder_name) for name in transcripts}
    say = progress or (lambda _message: None)

    attack_rows: list[AttackRow] = []
    cell_detail: dict[str, dict[str, Any]] = {}
    leaks: dict[str, list[bool]] = {}
    for name, transcript in _ordered(transcripts, config):
        attack, defense = split_cell_name(name)
        if attack == BENIGN:
            continue
        say(f"scoring {name}")
        value = _cached(cache, name, keys[name], lambda t=transcript: score_leakage(kb, t))  # type: ignore[misc]
        numbers = value["leakage"]
        leaks[name] = value["leaks"]
        attack_rows.append(
            AttackRow(
                attack,
                defense,
                int(numbers["ulc"]),
                int(numbers["pii"]),
                float(numbers["asr"]),
                float(numbers["crr"]),
                int(numbers["queries"]),
                int(numbers["blocked"]),
            )
        )
        cell_detail[name] = {
            **numbers,
            "tpr": numbers["blocked"] / numbers["queries"] if numbers["queries"] else None,
            "ci95": value["ci95"],
            **_guard_notes(transcript),
        }

    benign_rows, benign_detail = _benign(kb, folder, transcripts, cache, keys, cells)
    _write_metric_cache(folder, cache)
    detail: dict[str, Any] = {
        "cells": cell_detail,
        "benign": benign_detail,
        "relative_crr": _relative_crr(attack_rows),
        "seconds": cells.seconds(),
        "composed": cells.composed(),
        "rescoring": _rescoring(transcripts, leaks, run, config),
        "topk": _topk(cells, kb, config, transcripts),
        "failures": run.get("failures", {}),
    }
    meta = {
        "corpus": config.corpus,
        "dataset": _dataset(config.corpus),
        "kb_size": run.get("kb_size"),
        "embedder": run.get("embedder"),
        "generator": run.get("generator"),
        "attacker": run.get("attacker"),
        "k": config.k,
        "max_tokens": config.max_tokens,
        "max_chunk_chars": config.max_chunk_chars,
        "seed": config.seed,
        "benign_queries": run.get("benign_queries"),
        "benign_configured": config.benign is not None,
        "calibration_queries": run.get("calibration_queries"),
        "target_fpr": config.calibration.target_fpr if config.calibration else None,
        "budgets": {spec.cell: spec.budget for spec in config.attacks},
        "attack_order": [spec.cell for spec in config.attacks],
        "defense_order": list(config.defenses),
        "finished": run.get("finished", False),
        "updated": run.get("updated"),
        "crr_rule": next((c.get("crr_rule") for c in cell_detail.values()), None),
        "pii_inventory": "exact (corpus inventory)" if (kb.index_dir / PII_FILE).is_file() else "scanned",
        "pii_items_in_kb": len(kb.pii) if attack_rows else None,
    }
    table = ResultTable(tuple(attack_rows), tuple(benign_rows), meta, detail)
    (folder / RESULTS_FILE).write_text(json.dumps(table.as_dict(), indent=1, default=_json_default), encoding="utf-8")
    write_outputs(table, folder, plots=plots)  # warnings: `table.warnings()`, also in results.json
    return table


def write_outputs(table: ResultTable, folder: Path, *, plots: bool = True) -> None:
    """Write `report.md`, the PNG plots and the self-contained `report.html` of `table` into `folder`."""
    images = write_plots(table, folder) if plots else []
    (folder / REPORT_FILE).write_text(render_markdown(table, images), encoding="utf-8")
    embedded = {name: base64.b64encode((folder / name).read_bytes()).decode("ascii") for name in images}
    (folder / HTML_FILE).write_text(render_html(table, embedded), encoding="utf-8")


def rerender_report(out_dir: str | Path, *, plots: bool = True) -> ResultTable:
    """Re-render report.md, plots and report.html from `results.json` alone (no transcripts, no
    scoring): for result folders that keep only their results, e.g. the committed ones.

    Raises:
        ConfigError: `out_dir` has no readable results.json.
    """
    folder = Path(out_dir)
    path = folder / RESULTS_FILE
    try:
        table = ResultTable.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError) as error:
        raise ConfigError(f"{path} is not a readable results file ({type(error).__name__}: {error})") from error
    write_outputs(table, folder, plots=plots)
    return table


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def _key(cells: TranscriptCache, name: str, embedder: str) -> str:
    record = cells.record(name)
    return f"{METRIC_VERSION}:{embedder}:{record.fingerprint if record else ''}:{record.finished if record else ''}"


def _write_metric_cache(folder: Path, cache: dict[str, Any]) -> None:
    path = folder / METRICS_FILE
    temporary = path.with_suffix(f".json.{os.getpid()}.tmp")  # two processes may finish at once
    temporary.write_text(json.dumps(cache, default=_json_default), encoding="utf-8")
    temporary.replace(path)


def _dataset(corpus: str) -> str:
    return corpus.partition(":")[0]


def _ordered(transcripts: Mapping[str, Transcript], config: EvalConfig) -> list[tuple[str, Transcript]]:
    """Cells in config order (defense, then attack), unknown cells last."""
    attacks = [spec.cell for spec in config.attacks] + [BENIGN]

    def rank(name: str) -> tuple[int, int, str]:
        attack, defense = split_cell_name(name)
        d = config.defenses.index(defense) if defense in config.defenses else len(config.defenses)
        a = attacks.index(attack) if attack in attacks else len(attacks)
        return d, a, name

    return sorted(transcripts.items(), key=lambda item: rank(item[0]))


def _guard_notes(transcript: Transcript) -> dict[str, Any]:
    """Which guards blocked how many responses, and the CanaryRAG oracle states seen."""
    blocked_by: dict[str, int] = {}
    oracle: set[str] = set()
    for response in transcript.responses:
        for guard in response.blocked_by:
            blocked_by[guard] = blocked_by.get(guard, 0) + 1
        for verdict in response.verdicts:
            state = verdict.evidence.get("oracle")
            if isinstance(state, dict) and state.get("status"):
                oracle.add(str(state["status"]))
    return {"blocked_by": dict(sorted(blocked_by.items())), "oracle_status": sorted(oracle)}


def _relative_crr(rows: Sequence[AttackRow]) -> dict[str, float | None]:
    """CanaryRAG's relative mean CRR: mean over attacks of CRR(defense) / CRR(none); None when
    no attack recovered any chunk undefended."""
    base = {row.attack: row.crr for row in rows if row.defense == "none"}
    result: dict[str, float | None] = {}
    for defense in dict.fromkeys(row.defense for row in rows):
        ratios = [row.crr / base[row.attack] for row in rows if row.defense == defense and base.get(row.attack)]
        result[defense] = float(np.mean(ratios)) if ratios else None
    return result


def _benign(
    kb: KnowledgeBase,
    folder: Path,
    transcripts: Mapping[str, Transcript],
    cache: dict[str, Any],
    keys: Mapping[str, str],
    cells: TranscriptCache,
) -> tuple[list[BenignRow], dict[str, Any]]:
    references = {item.query.id: item.reference for item in read_benign(folder / BENIGN_FILE)}
    baseline = transcripts.get(f"{BENIGN}__none")
    rows: list[BenignRow] = []
    detail: dict[str, Any] = {}
    for name, transcript in transcripts.items():
        first, defense = split_cell_name(name)
        if first != BENIGN or not transcript.responses:
            continue
        key = keys[name] + (f"|{keys[f'{BENIGN}__none']}" if baseline is not None else "")
        utility = _cached(cache, name, key, lambda t=transcript: _utility(kb, t, baseline, references))  # type: ignore[misc]
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


def _rescoring(
    transcripts: Mapping[str, Transcript], leaks: Mapping[str, list[bool]], run: Mapping[str, Any], config: EvalConfig
) -> dict[str, Any]:
    """RAG-CT re-scored on the undefended transcripts: the threshold sweep and the mode ablation."""
    attacks = {split_cell_name(n)[0]: n for n in transcripts if n.endswith("__none") and not n.startswith(BENIGN)}
    benign = transcripts.get(f"{BENIGN}__none")
    if not attacks:
        return {}
    calibration = [row for row in run.get("calibration_profiles", []) if len(row) >= 2]
    target = config.calibration.target_fpr if config.calibration else None
    benign_rows = rescoring.profiles(benign) if benign is not None else []
    # the n behind every re-scored rate (queries of each undefended transcript, benign queries)
    result: dict[str, Any] = {"modes": {}, "n": {a: len(transcripts[n].responses) for a, n in attacks.items()}}
    result["benign_n"] = len(benign_rows)
    for mode in rescoring.MODES:
        for variant, fpr in (("paper", None), ("calibrated", target)):
            if variant == "calibrated" and (fpr is None or not calibration):
                continue
            scored: dict[str, rescoring.ScoredQueries] = {}
            for attack, name in attacks.items():
                scores, threshold = rescoring.score_profiles(
                    rescoring.profiles(transcripts[name]),
                    mode=mode,
                    k=config.k,
                    calibration=calibration,
                    target_fpr=fpr,
                )
                scored[attack] = rescoring.ScoredQueries(tuple(scores), tuple(leaks[name]))
            benign_scores, _ = rescoring.score_profiles(
                benign_rows, mode=mode, k=config.k, calibration=calibration, target_fpr=fpr
            )
            result["modes"][f"{mode}/{variant}"] = {
                "threshold": threshold,
                "asr": {a: rescoring.asr_at(s, threshold) for a, s in scored.items()},
                "undefended_asr": {a: float(np.mean(s.leaks)) if s.leaks else 0.0 for a, s in scored.items()},
                "auroc": {a: rescoring.safe_auroc(benign_scores, list(s.scores)) for a, s in scored.items()},
                "benign_fpr": float(np.mean(np.asarray(benign_scores) >= threshold)) if benign_scores else None,
            }
            if mode == "combined" and variant == "paper":
                result["threshold_sweep"] = rescoring.threshold_sweep(scored, benign_scores)
    return result


def _topk(
    cells: TranscriptCache, kb: KnowledgeBase, config: EvalConfig, transcripts: Mapping[str, Transcript]
) -> list[dict[str, Any]]:
    """ASR / ULC / PII at each top-k of the sweep (the main cell's first `budget` queries at the main k)."""
    sweep = config.topk_sweep
    if sweep is None:
        return []
    rows: list[dict[str, Any]] = []
    found = cells.sweep_transcripts()
    for defense in sweep.defenses:
        for k in sweep.values:
            main = transcripts.get(f"{sweep.attack}__{defense}") if k == config.k else None
            if main is not None:
                transcript: Transcript | None = Transcript(
                    main.kind, main.name, main.defense, main.responses[: sweep.budget], main.seed
                )
            else:
                transcript = found.get(f"topk-{k}__{sweep.attack}__{defense}")
            if transcript is None:
                continue
            scored = score_leakage(kb, transcript)
            numbers = scored["leakage"]
            rows.append(
                {
                    "k": k,
                    "attack": sweep.attack,
                    "defense": defense,
                    **{key: numbers[key] for key in ("ulc", "pii", "asr", "crr", "queries", "blocked")},
                    "ci95": scored["ci95"],
                }
            )
    return rows
