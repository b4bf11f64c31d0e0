"""Summary of the likelihood-oracle separation rows: AUROC with bootstrap CIs per knowledge base,
family, variant and wording source, and TPR / FPR at thresholds calibrated on one benign fold."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from canary_likelihood_queries import KB_QUESTIONS, LIKELIHOOD_FAMILIES
from ragshield.metrics.intervals import wilson


def _bootstrap_auroc(benign: list[float], attack: list[float], seed: int, rounds: int = 2000) -> list[float]:
    """Percentile bootstrap 95% CI of the AUROC, benign and attack rows resampled apart (stratified).

    Vectorised: a resample's AUROC is its weighted share of (attack > benign) pairs, ties half."""
    import numpy as np

    from ragshield.metrics.intervals import bootstrap_weights

    b, a = np.asarray(benign, dtype=np.float64), np.asarray(attack, dtype=np.float64)
    wins = (a[None, :] > b[:, None]) + 0.5 * (a[None, :] == b[:, None])  # benign x attack
    weights_b = bootstrap_weights(b.size, resamples=rounds, seed=seed)
    weights_a = bootstrap_weights(a.size, resamples=rounds, seed=seed + 1)
    values = np.einsum("rb,ba,ra->r", weights_b, wins, weights_a) / (b.size * a.size)
    low, high = np.percentile(values, [2.5, 97.5])
    return [round(float(low), 3), round(float(high), 3)]


def _flagged(rows: list[dict[str, Any]], thresholds: tuple[float, float]) -> int:
    """Rows the union rule flags: either drop reaches its threshold."""
    return sum(row["canary_drop"] >= thresholds[0] or row["copy_drop"] >= thresholds[1] for row in rows)


def _rate(flagged: int, total: int) -> dict[str, Any]:
    low, high = wilson(flagged, total)
    return {"flagged": flagged, "n": total, "rate": round(flagged / total, 3) if total else None, "ci95": [low, high]}


def _aurocs(benign: list[dict[str, Any]], attack: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    from ragshield.metrics.detection import auroc

    out: dict[str, Any] = {"queries": len(attack)}
    for key in ("canary_drop", "copy_drop"):
        b = [row[key] for row in benign]
        a = [row[key] for row in attack]
        out[f"auroc_{key}"] = round(auroc(b, a), 3)
        out[f"auroc_{key}_95ci"] = _bootstrap_auroc(b, a, seed)
        out[f"median_{key}"] = round(statistics.median(a), 3)
    return out


def _calibrated(benign: list[dict[str, Any]], attacks: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Two folds of the benign rows (alternating within each passage): thresholds fit at 1% FPR on one
    fold (`fit_thresholds`), the FPR measured on the other and the TPR on every attack row."""
    from ragshield.guards.canary.likelihood import LikelihoodScore, fit_thresholds

    # within each passage the benign rows alternate between the folds (in query order), so both
    # folds hold every passage and both benign sources in equal shares
    folds: list[list[dict[str, Any]]] = [[], []]
    for passage in sorted({(row["kb"], row["passage"]) for row in benign}):
        mine = sorted((row for row in benign if (row["kb"], row["passage"]) == passage), key=lambda r: r["index"])
        for number, row in enumerate(mine):
            folds[number % 2].append(row)
    out = []
    for fit, held in (folds, folds[::-1]):
        if len(fit) < 2 or not held:
            continue
        thresholds = fit_thresholds([LikelihoodScore(r["canary_drop"], r["copy_drop"], 0, 0) for r in fit], 0.01)
        out.append(
            {
                "calibration_n": len(fit),
                "thresholds": [round(value, 4) for value in thresholds],
                "calibration_flagged": _flagged(fit, thresholds),
                "fpr_held_out": _rate(_flagged(held, thresholds), len(held)),
                "tpr": {family: _rate(_flagged(rows, thresholds), len(rows)) for family, rows in attacks.items()},
                "tpr_by_source": {
                    f"{family}/{source}": _rate(_flagged(part, thresholds), len(part))
                    for family, rows in attacks.items()
                    for source in sorted({r["source"] for r in rows})
                    for part in [[r for r in rows if r["source"] == source]]
                },
            }
        )
    return out


def summarise_likelihood(rows: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Per knowledge base and pooled: AUROC (bootstrap 95% CI) of each violation score for all
    benign rows against each family (and per variant or wording source), and the union rule's
    FPR / TPR at thresholds calibrated at 1% FPR on one benign fold, evaluated on the other."""
    out: dict[str, Any] = {"rows": len(rows), "by_kb": {}}
    for kb in (*KB_QUESTIONS, "pooled"):
        if kb == "pooled" and len(out["by_kb"]) < 2:  # one knowledge base: pooled would repeat it
            continue
        mine = [row for row in rows if kb == "pooled" or row["kb"] == kb]
        benign = [row for row in mine if row["family"] == "benign"]
        if len(benign) < 4:
            continue
        attacks = {f: [r for r in mine if r["family"] == f] for f in LIKELIHOOD_FAMILIES[1:]}
        attacks = {family: found for family, found in attacks.items() if found}
        entry: dict[str, Any] = {
            "benign": len(benign),
            "benign_by_source": dict(sorted(Counter(row["source"] for row in benign).items())),
            "passages": len({(row["kb"], row["passage"]) for row in mine}),
            "median_ms_per_query": round(statistics.median(row["ms"] for row in mine), 1),
            "median_benign_canary_drop": round(statistics.median(row["canary_drop"] for row in benign), 3),
            "median_benign_copy_drop": round(statistics.median(row["copy_drop"] for row in benign), 3),
            "families": {family: _aurocs(benign, found, seed) for family, found in attacks.items()},
            "variants": {
                f"{family}/{variant}": _aurocs(benign, [r for r in found if r["variant"] == variant], seed)
                for family, found in attacks.items()
                for variant in sorted({r["variant"] for r in found})
            },
            # the wordings never used to tune the oracle (held) apart from the attack module's own
            "sources": {
                f"{family}/{source}": _aurocs(benign, part, seed)
                for family, found in attacks.items()
                for source in sorted({r["source"] for r in found})
                for part in [[r for r in found if r["source"] == source]]
            },
            "calibrated": _calibrated(benign, attacks),
            # the two benign sources apart: which benign traffic the attacks are (not) told from
            "by_benign_source": {
                source: {
                    "benign": len(part),
                    "median_canary_drop": round(statistics.median(r["canary_drop"] for r in part), 3),
                    "median_copy_drop": round(statistics.median(r["copy_drop"] for r in part), 3),
                    **{family: _aurocs(part, found, seed) for family, found in attacks.items()},
                }
                for source in sorted({row["source"] for row in benign})
                for part in [[row for row in benign if row["source"] == source]]
            },
        }
        out["by_kb"][kb] = entry
    return out
