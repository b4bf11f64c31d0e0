"""`ragshield eval` (run or resume an attacks x defenses grid) and `ragshield report` (rebuild its report)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress

from ragshield.evaluation.summary import BarProgress, bar_columns, print_summary

console = Console()
err_console = Console(stderr=True)


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        config: Annotated[Path, typer.Option(help="evaluation YAML (see configs/*.yaml)")],
        out: Annotated[Path, typer.Option(help="output folder (transcripts, results.json, report.md, plots)")],
        defense: Annotated[
            list[str] | None,
            typer.Option(help="run only this configured defense (repeatable); other processes may run the rest"),
        ] = None,
    ) -> None:
        """Run (or resume) an attacks x defenses grid; finished cells are cached and skipped."""
        from ragshield.evaluation.config import load_eval_config
        from ragshield.evaluation.harness import run_evaluation

        settings = load_eval_config(config)
        with Progress(*bar_columns(), console=err_console) as bars:
            table = run_evaluation(settings, out, progress=BarProgress(bars), only=defense or None)
        print_summary(console, table, out, title=f"leakage: {settings.corpus}")
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
        print_summary(console, table, out, title=f"leakage: {table.meta.get('corpus')}")
