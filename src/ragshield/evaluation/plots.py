"""PNG plots of a `ResultTable` (matplotlib, Agg backend; no display needed).

* `leakage.png` - ULC, PII, ASR and CRR per attack, one bar per defense (measured);
* `asr_vs_topk.png` - ASR against top-k (RAG-CT Fig. 5(b)); from the dedicated top-k sweep;
* `asr_vs_threshold.png` - ASR per attack and benign FPR against RAG-CT's threshold tau
  (Fig. 5(c)); re-scored from the undefended transcripts (`ragshield.evaluation.rescoring`);
* `rag_ct_modes.png` - entropy / margin / combined: ASR at the threshold and AUROC per attack
  (Fig. 5(d)); re-scored likewise;
* `crr_fpr_latency.png` - CRR, benign FPR and the benign latency distribution per defense, as
  the CanaryRAG paper reports them (measured).

A plot whose data is absent from the run is skipped (the report says "No plots" for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.evaluation import papers
from ragshield.evaluation.report import ResultTable


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _bars(axis: Any, groups: Sequence[str], series: dict[str, list[float]], title: str) -> None:
    width = 0.8 / max(1, len(series))
    positions = np.arange(len(groups))
    for number, (label, values) in enumerate(series.items()):
        axis.bar(positions + number * width - 0.4 + width / 2, values, width, label=label)
    axis.set_xticks(positions, groups, rotation=20, ha="right", fontsize=8)
    axis.set_title(title, fontsize=10)


def plot_leakage(table: ResultTable, path: Path) -> bool:
    if not table.attack_rows:
        return False
    plt = _pyplot()
    attacks, defenses = table.attacks, [d for d in table.defenses if any(table.row(a, d) for a in table.attacks)]
    figure, axes = plt.subplots(1, 4, figsize=(17, 4.2))
    for axis, (metric, title) in zip(
        axes, (("ulc", "ULC"), ("pii", "leaked PII items"), ("asr", "ASR"), ("crr", "CRR")), strict=True
    ):
        series = {d: [float(getattr(table.row(a, d), metric, np.nan) or 0.0) for a in attacks] for d in defenses}
        _bars(axis, attacks, series, title)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=min(8, len(labels)), fontsize=8)
    figure.suptitle(f"Leakage per attack and defense ({table.meta.get('dataset')}, {table.meta.get('generator')})")
    figure.tight_layout(rect=(0, 0.07, 1, 1))
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def plot_topk(table: ResultTable, path: Path) -> bool:
    rows = table.detail.get("topk") or []
    if not rows:
        return False
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(5.5, 4))
    for defense in dict.fromkeys(r["defense"] for r in rows):
        points = sorted((r["k"], r["asr"]) for r in rows if r["defense"] == defense)
        axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=defense)
    axis.set_xlabel("top-k")
    axis.set_ylabel("ASR")
    axis.set_ylim(-0.02, 1.02)
    axis.set_title(f"ASR against top-k ({rows[0]['attack']}, dedicated sweep)", fontsize=10)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def plot_threshold(table: ResultTable, path: Path) -> bool:
    sweep = (table.detail.get("rescoring") or {}).get("threshold_sweep")
    if not sweep:
        return False
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(5.5, 4))
    for name, values in sweep.items():
        if name in ("tau", "benign_fpr"):
            continue
        axis.plot(sweep["tau"], values, marker=".", label=f"ASR {name}")
    axis.plot(sweep["tau"], sweep["benign_fpr"], linestyle="--", color="black", label="benign FPR")
    axis.axvline(0.5, color="grey", linewidth=0.8)
    axis.set_xlabel("RAG-CT threshold tau (paper-exact scores)")
    axis.set_ylabel("rate")
    axis.set_ylim(-0.02, 1.02)
    axis.set_title("ASR against the detection threshold (re-scored)", fontsize=10)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def plot_modes(table: ResultTable, path: Path) -> bool:
    modes = (table.detail.get("rescoring") or {}).get("modes") or {}
    if not modes:
        return False
    plt = _pyplot()
    attacks = [a for a in table.attacks if any(a in m["asr"] for m in modes.values())]
    figure, axes = plt.subplots(1, 2, figsize=(13, 4.6))
    first = next(iter(modes.values()))
    asr = {"undefended": [first["undefended_asr"].get(a, 0.0) for a in attacks]}
    asr.update({name: [m["asr"].get(a, 0.0) for a in attacks] for name, m in modes.items()})
    _bars(axes[0], attacks, asr, "ASR with RAG-CT at its threshold (re-scored)")
    auroc = {name: [m["auroc"].get(a) or 0.0 for a in attacks] for name, m in modes.items() if name.endswith("/paper")}
    _bars(axes[1], attacks, auroc, "AUROC attack vs benign queries (0.5 = chance)")
    axes[1].axhline(0.5, color="grey", linewidth=0.8)
    for axis in axes:
        axis.set_ylim(0, 1.35)
        axis.legend(fontsize=7, ncol=4, loc="upper center")
    figure.suptitle("RAG-CT detection strategy: entropy, margin, combined")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def plot_canary_style(table: ResultTable, path: Path) -> bool:
    if not table.attack_rows and not table.benign_rows:
        return False
    plt = _pyplot()
    defenses = table.defenses
    figure, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    series = {a: [100 * float(getattr(table.row(a, d), "crr", 0.0) or 0.0) for d in defenses] for a in table.attacks}
    _bars(axes[0], defenses, series, "CRR per defense (% of the knowledge base recovered)")
    axes[0].set_ylim(0, max(1.0, 1.3 * max((v for values in series.values() for v in values), default=0.0)))
    if series:
        axes[0].legend(fontsize=7, ncol=4, loc="upper center")
    fprs = [100 * table.benign(d).fpr if table.benign(d) else 0.0 for d in defenses]  # type: ignore[union-attr]
    bars = axes[1].bar(range(len(defenses)), fprs)
    axes[1].bar_label(bars, labels=[f"{value:.1f}%" for value in fprs], fontsize=7)
    axes[1].set_ylim(0, max(5.0, 1.25 * max(fprs, default=0.0)))
    axes[1].axhline(100 * papers.CANARYRAG_FPR_BOUND, color="grey", linestyle=":", linewidth=0.8)
    axes[1].set_xticks(range(len(defenses)), defenses, rotation=20, ha="right", fontsize=8)
    axes[1].set_ylabel("% of benign queries blocked")
    axes[1].set_title("benign FPR (dotted: CanaryRAG paper's 0.15% bound)", fontsize=10)
    benign = table.detail.get("benign", {})
    # transcripts recorded before refusals carried a total have None for those queries
    latencies = [
        [ms for ms in benign.get(d, {}).get("latencies_ms") or [] if ms is not None] or [np.nan] for d in defenses
    ]
    axes[2].boxplot(latencies, showfliers=False)
    axes[2].set_xticks(range(1, len(defenses) + 1), defenses, rotation=20, ha="right", fontsize=8)
    axes[2].set_ylabel("ms")
    axes[2].set_title("benign latency per query", fontsize=10)
    figure.suptitle("CanaryRAG-style: recovery, false positives, latency")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


PLOTS = (
    ("leakage.png", plot_leakage),
    ("asr_vs_topk.png", plot_topk),
    ("asr_vs_threshold.png", plot_threshold),
    ("rag_ct_modes.png", plot_modes),
    ("crr_fpr_latency.png", plot_canary_style),
)


def write_plots(table: ResultTable, folder: Path) -> list[str]:
    """Write every plot the run has data for; returns the file names written."""
    written = []
    for name, plot in PLOTS:
        target = folder / name
        if plot(table, target):
            written.append(name)
        else:
            target.unlink(missing_ok=True)
    return written
