"""The result data of an evaluation (`results.json`): rows, estimates with intervals, gaps.

The bottom of the report side: `ragshield.evaluation.report` builds a `ResultTable` from
transcripts; `tables`, `plots`, `html_report` and `summary` only read one. Nothing here imports
another evaluation module, so data flows one way (harness -> report -> renderers -> results).

A cell that did not run has no row: every accessor returns None for it, and renderers show it
as missing, never as 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ragshield.evaluation.cells import BENIGN
from ragshield.metrics.intervals import wilson


@dataclass(frozen=True)
class AttackRow:
    """Leakage of one attack against one defense. `asr`, `crr` in [0, 1]; higher = more leakage."""

    attack: str
    defense: str
    ulc: int
    pii: int
    asr: float
    crr: float
    queries: int
    blocked: int


@dataclass(frozen=True)
class BenignRow:
    """Cost of one defense to benign users: `fpr` = share of benign queries blocked or refused;
    `utility` = similarity metrics of the answers (higher = better); latency in milliseconds."""

    defense: str
    fpr: float
    utility: Mapping[str, float]
    latency_p50_ms: float
    latency_p95_ms: float


@dataclass(frozen=True)
class Estimate:
    """A measured value with its 95% interval and its n, in the quantity's own unit (a share in
    [0, 1] for rates, a count for counts). `low`/`high` are nan when no interval is known (e.g.
    results written before intervals were recorded); `n` is the number of queries behind it."""

    value: float
    low: float
    high: float
    n: int

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))


def rate_estimate(successes: int, n: int) -> Estimate | None:
    """A share of `n` queries with its Wilson interval; None (missing) when `n` is 0."""
    if n <= 0:
        return None
    low, high = wilson(successes, n)
    return Estimate(successes / n, low, high, n)


def share_estimate(rate: float | None, n: int | None) -> Estimate | None:
    """A rate recorded as a share of `n` queries (its count is `round(rate * n)`), with its
    Wilson interval; None when the rate or its n is unknown."""
    if rate is None or n is None or math.isnan(rate):
        return None
    return rate_estimate(round(rate * n), n)


@dataclass(frozen=True)
class ResultTable:
    """Everything `results.json` holds."""

    attack_rows: tuple[AttackRow, ...]
    benign_rows: tuple[BenignRow, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def attacks(self) -> list[str]:
        found = list(dict.fromkeys(row.attack for row in self.attack_rows))
        order = list(self.meta.get("attack_order", []))
        return [name for name in order if name in found] + [name for name in found if name not in order]

    @property
    def defenses(self) -> list[str]:
        found = [row.defense for row in self.attack_rows] + [row.defense for row in self.benign_rows]
        order = list(self.meta.get("defense_order", []))
        return [name for name in order if name in found] + [n for n in dict.fromkeys(found) if n not in order]

    def row(self, attack: str, defense: str) -> AttackRow | None:
        return next((r for r in self.attack_rows if r.attack == attack and r.defense == defense), None)

    def benign(self, defense: str) -> BenignRow | None:
        return next((r for r in self.benign_rows if r.defense == defense), None)

    def estimate(self, attack: str, defense: str, quantity: str) -> Estimate | None:
        """`asr`, `tpr` (Wilson), `ulc`, `pii`, `crr` (bootstrap over queries, when recorded) of
        one cell; None when the cell did not run."""
        row = self.row(attack, defense)
        if row is None:
            return None
        cell: Mapping[str, Any] = self.detail.get("cells", {}).get(f"{attack}__{defense}", {})
        if quantity == "asr":
            leaking = cell.get("leaking_queries")
            return share_estimate(row.asr, row.queries) if leaking is None else rate_estimate(leaking, row.queries)
        if quantity == "tpr":
            return rate_estimate(row.blocked, row.queries)
        if quantity not in ("ulc", "pii", "crr"):
            raise KeyError(f"no estimate for {quantity!r}; known: asr, tpr, ulc, pii, crr")
        low, high = cell.get("ci95", {}).get(quantity) or (math.nan, math.nan)
        return Estimate(float(getattr(row, quantity)), float(low), float(high), row.queries)

    def benign_fpr(self, defense: str) -> Estimate | None:
        """The benign FPR of a defense with its Wilson interval; None when its benign cell is missing."""
        row = self.benign(defense)
        if row is None:
            return None
        info: Mapping[str, Any] = self.detail.get("benign", {}).get(defense, {})
        blocked, n = info.get("blocked"), info.get("n")
        return share_estimate(row.fpr, n) if blocked is None or n is None else rate_estimate(blocked, n)

    def missing_cells(self) -> list[str]:
        """Configured main-grid cells with no result (not run yet, failed, or benign set empty)."""
        defenses = list(self.meta.get("defense_order", []))
        missing = [f"{a}__{d}" for d in defenses for a in self.meta.get("attack_order", []) if self.row(a, d) is None]
        if self.meta.get("benign_configured", self.benign_rows != ()):
            missing += [f"{BENIGN}__{d}" for d in defenses if self.benign(d) is None]
        return missing

    def benign_empty(self) -> bool:
        """A benign set was configured but held no query: FPR, utility and latency are missing."""
        return bool(self.meta.get("benign_configured")) and self.meta.get("benign_queries") == 0

    def warnings(self) -> list[str]:
        """What a reader must know before trusting the numbers (empty when the grid is whole)."""
        found = []
        if self.benign_empty():
            found.append(
                "the configured benign set is empty (0 queries): benign FPR, utility and latency are missing,"
                " not 0; check the benign path, offset and limit"
            )
        failures: Mapping[str, str] = self.detail.get("failures") or {}
        if failures:
            found.append(f"{len(failures)} cell(s) failed: {', '.join(sorted(failures))}")
        empty = self.benign_empty()  # its cells are already explained above
        missing = [
            name for name in self.missing_cells() if name not in failures and not (empty and name.startswith(BENIGN))
        ]
        if missing:
            found.append(f"{len(missing)} cell(s) have no result yet and are shown as missing: {', '.join(missing)}")
        return found

    def as_dict(self) -> dict[str, Any]:
        return {
            "meta": dict(self.meta),
            "attack_rows": [asdict(row) for row in self.attack_rows],
            "benign_rows": [{**asdict(row), "utility": dict(row.utility)} for row in self.benign_rows],
            "detail": dict(self.detail),
            "warnings": self.warnings(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ResultTable:
        """The table `as_dict` wrote (`results.json`), e.g. to re-render a report without transcripts."""
        return cls(
            tuple(AttackRow(**row) for row in data.get("attack_rows", [])),
            tuple(BenignRow(**row) for row in data.get("benign_rows", [])),
            dict(data.get("meta", {})),
            dict(data.get("detail", {})),
        )
