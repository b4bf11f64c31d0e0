"""Console output of an evaluation: rich progress bars and the leakage / benign tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragshield.evaluation.results import ResultTable
from ragshield.evaluation.units import ASR, CRR, FPR, LATENCY, MISSING


def bar_columns() -> tuple[Any, ...]:
    return (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


class BarProgress:
    """Rich progress bars for `run_evaluation`: one bar per grid cell, kept on screen when done."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def start(self, cell: str, total: int) -> None:
        self.tasks[cell] = self.progress.add_task(cell, total=total)

    def advance(self, cell: str, done: int, total: int) -> None:
        self.progress.update(self.tasks[cell], completed=done, total=total)

    def finish(self, cell: str, *, cached: bool, failed: bool = False) -> None:
        task = self.tasks[cell]
        label = f"{cell} (cached)" if cached else f"{cell} [red](FAILED)[/red]" if failed else cell
        total = self.progress.tasks[task].total or 0
        self.progress.update(task, description=label, completed=total if not failed else None)


def leakage_table(table: ResultTable, *, title: str) -> Table:
    """ULC / PII / ASR / CRR per attack (rows) and defense (columns)."""
    rich_table = Table(title=title)
    rich_table.add_column("attack")
    defenses = [d for d in table.defenses if any(table.row(a, d) for a in table.attacks)]
    for defense in defenses:
        rich_table.add_column(escape(defense), justify="right")
    for attack in table.attacks:
        cells = []
        for defense in defenses:
            row = table.row(attack, defense)
            if row is None:
                cells.append(f"[yellow]{MISSING}[/yellow]")
                continue
            asr = ASR.estimate_text(table.estimate(attack, defense, "asr"), with_n=False)
            crr = CRR.estimate_text(table.estimate(attack, defense, "crr"), with_n=False)
            cells.append(f"ULC {row.ulc} PII {row.pii}\nASR {asr}\nCRR {crr}\nblocked {row.blocked}/{row.queries}")
        rich_table.add_row(escape(attack), *cells)
    return rich_table


def benign_table(table: ResultTable) -> Table:
    rich_table = Table(title="benign queries")
    for column in ("defense", "FPR [95% CI]", "latency p50 (ms)", "p95 (ms)"):
        rich_table.add_column(column, justify="right" if column != "defense" else "left")
    for row in table.benign_rows:
        rich_table.add_row(
            escape(row.defense),
            FPR.estimate_text(table.benign_fpr(row.defense)),
            LATENCY.text(row.latency_p50_ms),
            LATENCY.text(row.latency_p95_ms),
        )
    return rich_table


def print_summary(console: Console, table: ResultTable, out: Path, *, title: str) -> None:
    """The leakage and benign tables, failed cells, and where the report is (warnings: `ragshield eval`)."""
    console.print(leakage_table(table, title=title))
    if table.benign_rows:
        console.print(benign_table(table))
    failures = table.detail.get("failures") or {}
    for cell, reason in failures.items():
        console.print(f"[red]cell {escape(cell)} failed:[/red] {escape(str(reason))}")
    console.print(f"report: {out / 'report.html'}  {out / 'report.md'}  results: {out / 'results.json'}")
