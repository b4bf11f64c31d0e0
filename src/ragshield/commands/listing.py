"""`ragshield list KIND [--json]`: the registered names, where each comes from, and what it is.

Built-ins are described by their docstrings (their modules are imported, no model is loaded);
plugins by their distribution's summary, so listing never imports a plugin module. Every text
goes to Rich as plain `Text`, so brackets in a description (`pip install 'ragshield[hf]'`)
are printed, not read as markup.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragshield.registry import BUILTIN, KINDS, entries_of, resolve

console = Console()


def describe(kind: str) -> list[dict[str, Any]]:
    """One row per registered name of `kind`: name, source, target, description, paper."""
    table = KINDS[kind]
    rows = []
    for entry in entries_of(table):
        description, paper = entry.summary, ""
        if entry.source == BUILTIN:
            try:
                target = resolve(table, entry.name)
                doc = (getattr(target, "__doc__", None) or "").strip()
                description = doc.splitlines()[0] if doc else ""
                paper = " ".join(filter(None, (getattr(target, "paper_title", ""), getattr(target, "paper_url", ""))))
            except ImportError as error:
                description = f"(unavailable: {error})"
        rows.append(
            {
                "name": entry.name,
                "source": entry.source,
                "target": entry.target,
                "description": description,
                "paper": paper,
            }
        )
    return rows


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_command(
        kind: Annotated[str, typer.Argument(help="defenses | attacks | generators | embedders | indexes | corpora")],
        as_json: Annotated[bool, typer.Option("--json", help="print a JSON array instead of a table")] = False,
    ) -> None:
        """List registered names, where each comes from (built-in or a plugin's distribution), and what it is."""
        if kind not in KINDS:
            raise typer.BadParameter(f"unknown kind {kind!r}; valid kinds: {', '.join(KINDS)}")
        rows = describe(kind)
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        table = Table(title=Text(kind))
        for column in ("name", "source", "description", "paper"):
            table.add_column(column)
        for row in rows:
            table.add_row(*(Text(str(row[column])) for column in ("name", "source", "description", "paper")))
        console.print(table)
