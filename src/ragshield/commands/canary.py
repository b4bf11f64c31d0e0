"""`ragshield canary ...`: CanaryRAG helpers (the false-blocking bound of the per-user policy)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ragshield.guards.policy import false_block_bound


def register(app: typer.Typer) -> None:
    canary_app = typer.Typer(help="CanaryRAG helpers.", no_args_is_help=True)

    @canary_app.command("bound")
    def bound_command(
        p: Annotated[float, typer.Option("--p", help="per-query false-positive rate of the detector (0-1)")],
        window: Annotated[int, typer.Option("--window", help="queries in the sliding window (W)")],
        k: Annotated[int, typer.Option("--k", help="violations in the window that block a user")],
        as_json: Annotated[bool, typer.Option("--json", help="print a JSON object")] = False,
    ) -> None:
        """Print P(Binomial(W, p) >= k): the chance that a benign user is blocked within one window."""
        value = false_block_bound(p, window, k)
        if as_json:
            typer.echo(json.dumps({"p": p, "window": window, "k": k, "false_block_bound": value}))
        else:
            typer.echo(f"{value:.6g}")

    app.add_typer(canary_app, name="canary")
