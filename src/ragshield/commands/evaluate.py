"""`ragshield eval` (run or resume an attacks x defenses grid) and `ragshield report` (rebuild its report)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragshield.evaluation.report import ResultTable

console = Console()
err_console = Console(stderr=True)


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
        rich_table.add_column(defense, justify="right")
    for attack in table.attacks:
        cells = []
        for defense in defenses:
            row = table.row(attack, defense)
            if row is None:
                cells.append("-")
                continue
            blocked = f"blocked {row.blocked}/{row.queries}"
            cells.append(f"ULC {row.ulc} PII {row.pii}\nASR {row.asr:.2f} CRR {100 * row.crr:.1f}%\n{blocked}")
        rich_table.add_row(attack, *cells)
    return rich_table


def benign_table(table: ResultTable) -> Table:
    rich_table = Table(title="benign queries")
    for column in ("defense", "FPR", "latency p50 ms", "p95 ms"):
        rich_table.add_column(column, justify="right" if column != "defense" else "left")
    for row in table.benign_rows:
        rich_table.add_row(
            row.defense, f"{100 * row.fpr:.1f}%", f"{row.latency_p50_ms:.0f}", f"{row.latency_p95_ms:.0f}"
        )
    return rich_table


def print_summary(table: ResultTable, out: Path, *, title: str) -> None:
    console.print(leakage_table(table, title=title))
    if table.benign_rows:
        console.print(benign_table(table))
    failures = table.detail.get("failures") or {}
    for cell, reason in failures.items():
        err_console.print(f"[red]cell {cell} failed:[/red] {reason}")
    console.print(f"report: {out / 'report.md'}  results: {out / 'results.json'}")


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        config: Annotated[Path, typer.Option(help="evaluation YAML (see configs/*.yaml)")],
        out: Annotated[Path, typer.Option(help="output folder (transcripts, results.json, report.md, plots)")],
    ) -> None:
        """Run (or resume) an attacks x defenses grid; finished cells are cached and skipped."""
        from ragshield.evaluation.config import load_eval_config
        from ragshield.evaluation.harness import run_evaluation

        settings = load_eval_config(config)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=err_console) as bars:
            table = run_evaluation(settings, out, progress=BarProgress(bars))
        print_summary(table, out, title=f"leakage: {settings.corpus}")
        if table.detail.get("failures"):
            raise typer.Exit(1)

    @app.command("report")
    def report_command(
        out: Annotated[Path, typer.Argument(help="an output folder of `ragshield eval`")],
        plots: Annotated[bool, typer.Option(help="write the PNG plots")] = True,
    ) -> None:
        """Rebuild results.json, report.md and the plots from the recorded transcripts (no generation)."""
        from ragshield.evaluation.report import build_report

        table = build_report(out, plots=plots, progress=lambda message: err_console.print(message, style="dim"))
        print_summary(table, out, title=f"leakage: {table.meta.get('corpus')}")
