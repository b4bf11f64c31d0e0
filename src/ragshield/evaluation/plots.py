"""PNG plots of a `ResultTable` (matplotlib, Agg backend; no display needed).

* `leakage.png` - ULC, PII, ASR and CRR per attack, one bar per defense (measured);
* `asr_vs_topk.png` - ASR against top-k (RAG-CT Fig. 5(b)); from the dedicated top-k sweep;
* `asr_vs_threshold.png` - ASR per attack and benign FPR against RAG-CT's threshold tau
  (Fig. 5(c)); re-scored from the undefended transcripts (`ragshield.evaluation.rescoring`);
* `rag_ct_modes.png` - entropy / margin / combined: ASR at the threshold and AUROC per attack
  (Fig. 5(d)); re-scored likewise;
* `crr_fpr_latency.png` - CRR, benign FPR and the benign latency distribution per defense, as
  the CanaryRAG paper reports them (measured).

Every axis is labelled with its quantity and unit from `ragshield.evaluation.units` (rates in
percent everywhere), bars carry their 95% intervals where known, and a cell that did not run is
a gap labelled "missing", never a bar of height 0. A plot whose data is absent from the run is
skipped (the report says "No plots" for it).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragshield.evaluation import papers
from ragshield.evaluation.results import Estimate, ResultTable, share_estimate
from ragshield.evaluation.tables import rescoring_n
from ragshield.evaluation.units import ASR, AUROC, CRR, FPR, LATENCY, MISSING, PII, ULC, Quantity

NAN = float("nan")
Series = dict[str, list[Estimate | None]]  # legend label -> one estimate per group (None = missing)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _tidy(figure: Any, rect: tuple[float, float, float, float] = (0, 0, 1, 1)) -> None:
    # tight_layout only warns when long tick labels leave it no room; the figure is still drawn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        figure.tight_layout(rect=rect)


def bar_heights(series: Series, quantity: Quantity) -> dict[str, list[float]]:
    """The bar heights in display units; a missing estimate is nan (drawn as a gap, not a 0 bar)."""
    return {
        label: [NAN if e is None or math.isnan(e.value) else quantity.display(e.value) for e in values]
        for label, values in series.items()
    }


def _bars(axis: Any, groups: Sequence[str], series: Series, quantity: Quantity, *, xlabel: str, title: str) -> None:
    """Grouped bars with their intervals; each missing bar is labelled `missing` at its place."""
    width = 0.8 / max(1, len(series))
    positions = np.arange(len(groups))
    heights = bar_heights(series, quantity)
    for number, (label, estimates) in enumerate(series.items()):
        x = positions + number * width - 0.4 + width / 2
        values = np.asarray(heights[label], dtype=np.float64)
        low = [NAN if e is None or not e.has_interval else quantity.display(e.low) for e in estimates]
        high = [NAN if e is None or not e.has_interval else quantity.display(e.high) for e in estimates]
        below = np.clip(values - np.asarray(low), 0, None)
        above = np.clip(np.asarray(high) - values, 0, None)
        bars = axis.bar(x, values, width, label=label)
        known = ~np.isnan(below)
        if known.any():
            axis.errorbar(
                x[known],
                values[known],
                yerr=[below[known], above[known]],
                fmt="none",
                ecolor="dimgrey",
                elinewidth=0.7,
                capsize=2,
            )
        colour = bars.patches[0].get_facecolor() if bars.patches else "black"
        for place, value in zip(x, values, strict=True):
            # a gap says `missing`; a measured 0 says `0`, so the two never look alike
            if math.isnan(value) or value == 0:
                label = MISSING if math.isnan(value) else "0"
                axis.text(place, 0, label, rotation=90, ha="center", va="bottom", fontsize=6, color=colour)
    axis.set_xticks(positions, groups, rotation=20, ha="right", fontsize=8)
    axis.set_xlabel(xlabel)
    axis.set_ylabel(quantity.axis_label, fontsize=8)
    axis.set_title(title, fontsize=10)
    if quantity.unit == "%":
        tops = [quantity.display(e.high if e.has_interval else e.value) for v in series.values() for e in v if e]
        axis.set_ylim(0, min(105.0, max(5.0, 1.15 * max([t for t in tops if not math.isnan(t)], default=0.0))))


def plot_leakage(table: ResultTable) -> Any:
    if not table.attack_rows:
        return None
    plt = _pyplot()
    attacks, defenses = table.attacks, [d for d in table.defenses if any(table.row(a, d) for a in table.attacks)]
    figure, axes = plt.subplots(1, 4, figsize=(18, 4.6))
    for axis, (key, quantity) in zip(axes, (("ulc", ULC), ("pii", PII), ("asr", ASR), ("crr", CRR)), strict=True):
        series: Series = {d: [table.estimate(a, d, key) for a in attacks] for d in defenses}
        _bars(axis, attacks, series, quantity, xlabel="attack", title=quantity.name)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=min(8, len(labels)), fontsize=8)
    figure.suptitle(f"Leakage per attack and defense ({table.meta.get('dataset')}, {table.meta.get('generator')})")
    _tidy(figure, rect=(0, 0.07, 1, 1))
    return figure


def plot_topk(table: ResultTable) -> Any:
    rows = table.detail.get("topk") or []
    if not rows:
        return None
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(5.5, 4))
    for defense in dict.fromkeys(r["defense"] for r in rows):
        points = sorted((r["k"], share_estimate(r["asr"], r["queries"])) for r in rows if r["defense"] == defense)
        ks = [k for k, _ in points]
        estimates = [e for _, e in points]
        values = [NAN if e is None else ASR.display(e.value) for e in estimates]
        below = [0.0 if e is None else ASR.display(e.value - e.low) for e in estimates]
        above = [0.0 if e is None else ASR.display(e.high - e.value) for e in estimates]
        axis.errorbar(ks, values, yerr=[below, above], marker="o", capsize=3, label=defense)
    axis.set_xticks(sorted({r["k"] for r in rows}))
    axis.set_xlabel("top-k (chunks retrieved per query)")
    axis.set_ylabel(ASR.axis_label, fontsize=8)
    axis.set_ylim(-2, 102)
    axis.set_title(f"ASR against top-k ({rows[0]['attack']}, dedicated sweep)", fontsize=10)
    axis.legend(fontsize=8)
    _tidy(figure)
    return figure


def plot_threshold(table: ResultTable) -> Any:
    sweep = (table.detail.get("rescoring") or {}).get("threshold_sweep")
    if not sweep:
        return None
    plt = _pyplot()
    n, benign_n = rescoring_n(table)
    figure, axis = plt.subplots(figsize=(6, 4.2))
    for name, values in sweep.items():
        if name in ("tau", "benign_fpr"):
            continue
        axis.plot(sweep["tau"], [ASR.display(v) for v in values], marker=".", label=f"ASR {name} (n={n.get(name)})")
    fpr = [NAN if v is None else FPR.display(v) for v in sweep["benign_fpr"]]
    axis.plot(sweep["tau"], fpr, linestyle="--", color="black", label=f"benign FPR (n={benign_n})")
    axis.axvline(0.5, color="grey", linewidth=0.8)
    axis.set_xlabel("RAG-CT threshold tau (paper-exact score A, unitless)")
    axis.set_ylabel("ASR or benign FPR (% of queries)", fontsize=8)
    axis.set_ylim(-2, 102)
    axis.set_title("ASR against the detection threshold (re-scored)", fontsize=10)
    axis.legend(fontsize=7)
    _tidy(figure)
    return figure


def plot_modes(table: ResultTable) -> Any:
    modes = (table.detail.get("rescoring") or {}).get("modes") or {}
    if not modes:
        return None
    plt = _pyplot()
    n, _ = rescoring_n(table)
    attacks = [a for a in table.attacks if any(a in m["asr"] for m in modes.values())]
    figure, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    first = next(iter(modes.values()))
    asr: Series = {"undefended": [share_estimate(first["undefended_asr"].get(a), n.get(a)) for a in attacks]}
    asr.update({name: [share_estimate(m["asr"].get(a), n.get(a)) for a in attacks] for name, m in modes.items()})
    _bars(axes[0], attacks, asr, ASR, xlabel="attack", title="ASR with RAG-CT at its threshold (re-scored)")
    auroc: Series = {
        name: [None if m["auroc"].get(a) is None else Estimate(m["auroc"][a], NAN, NAN, 0) for a in attacks]
        for name, m in modes.items()
        if name.endswith("/paper")
    }
    _bars(axes[1], attacks, auroc, AUROC, xlabel="attack", title="AUROC attack vs benign queries")
    axes[1].axhline(0.5, color="grey", linewidth=0.8)
    axes[1].set_ylim(0, 1)  # AUROC's whole range
    for axis in axes:  # room above the bars for the legend
        axis.set_ylim(0, 1.35 * axis.get_ylim()[1])
    for axis in axes:
        axis.legend(fontsize=7, ncol=4, loc="upper center")
    figure.suptitle("RAG-CT detection strategy: entropy, margin, combined")
    _tidy(figure)
    return figure


def plot_canary_style(table: ResultTable) -> Any:
    if not table.attack_rows and not table.benign_rows:
        return None
    plt = _pyplot()
    defenses = table.defenses
    figure, axes = plt.subplots(1, 3, figsize=(17, 4.6))
    crr: Series = {a: [table.estimate(a, d, "crr") for d in defenses] for a in table.attacks}
    _bars(axes[0], defenses, crr, CRR, xlabel="defense", title="CRR per defense")
    if crr:
        axes[0].legend(fontsize=7, ncol=4, loc="upper center")
    fpr: Series = {"benign FPR": [table.benign_fpr(d) for d in defenses]}
    _bars(axes[1], defenses, fpr, FPR, xlabel="defense", title="benign FPR (dotted: CanaryRAG paper's 0.15% bound)")
    axes[1].axhline(FPR.display(papers.CANARYRAG_FPR_BOUND), color="grey", linestyle=":", linewidth=0.8)
    benign = table.detail.get("benign", {})
    # transcripts recorded before refusals carried a total have None for those queries; a
    # defense without a benign cell gets an empty box and a `missing` label
    latencies = [[ms for ms in benign.get(d, {}).get("latencies_ms") or [] if ms is not None] for d in defenses]
    axes[2].boxplot([values or [NAN] for values in latencies], showfliers=False)
    for place, values in enumerate(latencies, start=1):
        if not values:
            axes[2].text(place, 0, MISSING, rotation=90, ha="center", va="bottom", fontsize=6)
    axes[2].set_xticks(range(1, len(defenses) + 1), defenses, rotation=20, ha="right", fontsize=8)
    axes[2].set_xlabel("defense")
    axes[2].set_ylabel(LATENCY.axis_label, fontsize=8)
    axes[2].set_title("benign latency per query", fontsize=10)
    figure.suptitle("CanaryRAG-style: recovery, false positives, latency")
    _tidy(figure)
    return figure


PLOTS: tuple[tuple[str, Callable[[ResultTable], Any]], ...] = (
    ("leakage.png", plot_leakage),
    ("asr_vs_topk.png", plot_topk),
    ("asr_vs_threshold.png", plot_threshold),
    ("rag_ct_modes.png", plot_modes),
    ("crr_fpr_latency.png", plot_canary_style),
)


def figures(table: ResultTable) -> dict[str, Any]:
    """Every plot the run has data for, as open matplotlib figures (close them when done)."""
    drawn = {name: plot(table) for name, plot in PLOTS}
    return {name: figure for name, figure in drawn.items() if figure is not None}


def write_plots(table: ResultTable, folder: Path) -> list[str]:
    """Write every plot the run has data for; returns the file names written."""
    plt = _pyplot()
    drawn = figures(table)
    for name, _ in PLOTS:
        figure = drawn.get(name)
        if figure is None:
            (folder / name).unlink(missing_ok=True)
            continue
        figure.savefig(folder / name, dpi=110)
        plt.close(figure)
    return [name for name, _ in PLOTS if name in drawn]
