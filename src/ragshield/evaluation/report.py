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

Data flows one way: harness -> report -> (benign_scoring, scoring, metric_cache, tables, plots,
html_report) -> results.
The renderers read only the `ResultTable` (`ragshield.evaluation.results`), so
`rerender_report` rebuilds every output from `results.json` alone.

Benign latency is measured end to end, except for query-time-only defenses whose allowed
answers were replayed from the undefended cell (`CellRecord.replayed`): their latency is
derived from measured parts (`ragshield.evaluation.benign_scoring`), and for layered cells
composed from a finished cell (`CellRecord.composed_from`, `ragshield.evaluation.compose`).
The report marks both "derived".

Per-cell metrics are cached in `metrics.json` (`ragshield.evaluation.metric_cache`), so a
rebuild after a resumed run scores only the new cells. The embedder (for CRR's cosine
condition and utility similarity) is loaded only when something must be scored.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.errors import ConfigError
from ragshield.evaluation import rescoring
from ragshield.evaluation.benign_scoring import score_benign
from ragshield.evaluation.cells import BENIGN, TranscriptCache, read_run_file, split_cell_name
from ragshield.evaluation.config import EvalConfig
from ragshield.evaluation.html_report import render_html
from ragshield.evaluation.metric_cache import cached, json_default, metric_key, read_metric_cache, write_metric_cache
from ragshield.evaluation.plots import write_plots
from ragshield.evaluation.results import AttackRow, BenignRow, ResultTable
from ragshield.evaluation.scoring import KnowledgeBase, score_leakage
from ragshield.evaluation.tables import render_markdown
from ragshield.rag.store import PII_FILE
from ragshield.types import Transcript

__all__ = ["AttackRow", "BenignRow", "ResultTable", "build_report", "rerender_report", "write_outputs"]

log = logging.getLogger(__name__)

RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"
HTML_FILE = "report.html"


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
    cache = read_metric_cache(folder)
    keys = {name: metric_key(cells, name, kb.embedder_name) for name in transcripts}
    say = progress or (lambda _message: None)

    attack_rows: list[AttackRow] = []
    cell_detail: dict[str, dict[str, Any]] = {}
    leaks: dict[str, list[bool]] = {}
    for name, transcript in _ordered(transcripts, config):
        attack, defense = split_cell_name(name)
        if attack == BENIGN:
            continue
        say(f"scoring {name}")
        value = cached(cache, name, keys[name], lambda t=transcript: score_leakage(kb, t))  # type: ignore[misc]
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

    benign_rows, benign_detail = score_benign(kb, folder, transcripts, cache, keys, cells)
    write_metric_cache(folder, cache)
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
    (folder / RESULTS_FILE).write_text(json.dumps(table.as_dict(), indent=1, default=json_default), encoding="utf-8")
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
