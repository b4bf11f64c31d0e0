"""Metrics: leakage (ULC, PII, ASR, CRR, repeat@20), detection, utility and latency cost.

Metrics read transcripts and plain values only, so reports can be rebuilt without running
any model. Definitions: each module's docstring (`leakage` cites the papers they come from).
Importing this package is cheap: presidio (for `PiiScanner`), nltk
(for ROUGE stemming) and scipy load on first use.
"""

from __future__ import annotations

from ragshield.metrics.base import MetricInputError
from ragshield.metrics.cost import added_latency, latency_summary
from ragshield.metrics.detection import auroc, detection_rates, tpr_at_fpr
from ragshield.metrics.leakage import LeakageReport, LeakageScorer, compute_leakage
from ragshield.metrics.pii import PiiIndex, PiiMatch, PiiScanner, inventory_from_chunks, leaked_pii, pii_key
from ragshield.metrics.text import RougeL, rouge_l
from ragshield.metrics.utility import utility_metrics

__all__ = [
    "LeakageReport",
    "LeakageScorer",
    "MetricInputError",
    "PiiIndex",
    "PiiMatch",
    "PiiScanner",
    "RougeL",
    "added_latency",
    "auroc",
    "compute_leakage",
    "detection_rates",
    "inventory_from_chunks",
    "latency_summary",
    "leaked_pii",
    "pii_key",
    "rouge_l",
    "tpr_at_fpr",
    "utility_metrics",
]
