"""`ragshield eval` (run or resume an attacks x defenses grid) and `ragshield report` (rebuild its report).

Exit status of both: 0 when every configured cell has a result; 1 when a cell failed or the
configured benign set came out empty (the report then shows those numbers as missing and
says why, and the warnings are printed on stderr). Cells merely not run yet (another process
runs them: `--defense`) are shown as missing and warned about, without changing the status.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from ragshield.evaluation.results import ResultTable
from ragshield.evaluation.summary import BarProgress, bar_columns, print_summary

console = Console()
err_console = Console(stderr=True)

INCOMPLETE = 1  # exit status: a cell failed, or the configured benign set is empty


def _finish(table: ResultTable) -> None:
    """Warn on stderr, and exit INCOMPLETE when results a reader expects are absent."""
    for warning in table.warnings():
        err_console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    if table.detail.get("failures") or table.benign_empty():
        raise typer.Exit(INCOMPLETE)


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        config: Annotated[Path, typer.Option(help="evaluation YAML (see configs/*.yaml)")],
        out: Annotated[
            Path, typer.Option(help="output folder (transcripts, results.json, report.md, report.html, plots)")
        ],
        defense: Annotated[
            list[str] | None,
            typer.Option(help="run only this configured defense (repeatable); other processes may run the rest"),
        ] = None,
        attack: Annotated[
            list[str] | None,
            typer.Option(
                help="run only this configured attack label, or 'benign' (repeatable); other processes may run the rest"
            ),
        ] = None,
    ) -> None:
        """Run (or resume) an attacks x defenses grid; finished cells are cached and skipped.

        Exits 1 when a cell failed or the configured benign set is empty (its FPR is then missing).
        """
        from ragshield.evaluation.config import load_eval_config
        from ragshield.evaluation.harness import run_evaluation

        settings = load_eval_config(config)
        with Progress(*bar_columns(), console=err_console) as bars:
            table = run_evaluation(
                settings, out, progress=BarProgress(bars), only=defense or None, only_phases=attack or None
            )
        print_summary(console, table, out, title=f"leakage: {settings.corpus}")
        _finish(table)

    @app.command("report")
    def report_command(
        out: Annotated[Path, typer.Argument(help="an output folder of `ragshield eval`")],
        plots: Annotated[bool, typer.Option(help="write the PNG plots (also embedded in report.html)")] = True,
        from_results: Annotated[
            bool,
            typer.Option(help="re-render from results.json alone (a folder without transcripts); no scoring"),
        ] = False,
    ) -> None:
        """Rebuild results.json, report.md, report.html and the plots from the recorded transcripts (no generation).

        Exits 1 when a cell failed or the configured benign set is empty.
        """
        from ragshield.evaluation.report import build_report, rerender_report

        if from_results:
            table = rerender_report(out, plots=plots)
        else:
            table = build_report(out, plots=plots, progress=lambda message: err_console.print(message, style="dim"))
        print_summary(console, table, out, title=f"leakage: {table.meta.get('corpus')}")
        _finish(table)
