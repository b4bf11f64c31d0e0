"""One display unit per reported quantity, defined once for tables, plots, HTML and the console.

`results.json` stores rates as shares in [0, 1] and counts as integers; everything a person
reads shows rates in percent (`ASR 12.5% [8.1, 18.7]`), counts as integers, latency in ms and
AUROC as a score in [0, 1]. A value that is absent renders as `MISSING`, never as 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ragshield.evaluation.results import Estimate
from ragshield.metrics.intervals import interval_text

MISSING = "missing"  # a cell that did not run, or a set that came out empty
NOT_APPLICABLE = "n/a"  # a value that does not exist for this row (e.g. no paper number)


@dataclass(frozen=True)
class Quantity:
    """How one quantity is shown: `scale` turns the stored value into the display `unit`."""

    name: str
    unit: str
    meaning: str
    scale: float = 1.0
    digits: int = 0

    @property
    def axis_label(self) -> str:
        """`ASR (% of attack queries)`: the label of every plot axis showing this quantity."""
        return f"{self.name} ({self.meaning})"

    @property
    def symbol(self) -> str:
        return "%" if self.unit == "%" else ""

    def text(self, value: float | None) -> str:
        """The value in display units (`12.5%`, `7`), or `MISSING`."""
        if value is None or math.isnan(value):
            return MISSING
        return f"{self.scale * value:.{self.digits}f}{self.symbol}"

    def estimate_text(self, estimate: Estimate | None, *, with_n: bool = True) -> str:
        """`12.5% [8.1, 18.7] (n=200)`: the value, its 95% interval when known, and its n."""
        if estimate is None or math.isnan(estimate.value):
            return MISSING
        text = interval_text(
            estimate.value, estimate.low, estimate.high, scale=self.scale, digits=self.digits, unit=self.symbol
        )
        return f"{text} (n={estimate.n})" if with_n else text

    def display(self, value: float) -> float:
        """The stored value in display units (for plot coordinates)."""
        return self.scale * value


def _rate(name: str, meaning: str) -> Quantity:
    return Quantity(name, "%", meaning, scale=100.0, digits=1)


ASR = _rate("ASR", "% of attack queries leaking PII")
CRR = _rate("CRR", "% of knowledge-base chunks recovered")
TPR = _rate("TPR", "% of attack queries blocked")
FPR = _rate("FPR", "% of benign queries blocked")
ULC = Quantity("ULC", "chunks", "unique leaked chunks")
PII = Quantity("PII", "items", "distinct leaked PII items")
LATENCY = Quantity("latency", "ms", "ms per query")
AUROC = Quantity("AUROC", "", "attack vs benign, 0.5 = chance", digits=3)

QUANTITIES = {
    "asr": ASR,
    "crr": CRR,
    "tpr": TPR,
    "fpr": FPR,
    "ulc": ULC,
    "pii": PII,
    "latency": LATENCY,
    "auroc": AUROC,
}
