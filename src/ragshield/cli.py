"""The `ragshield` command line (typer + rich).

Each command group lives in `ragshield.commands.<name>` and registers itself on the app;
this module only assembles them and turns ragshield errors into one clear line and a
non-zero exit code.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from typing import Annotated

import typer

from ragshield.errors import RagShieldError

COMMAND_MODULES = ("core", "listing", "scan", "canary", "attack", "evaluate", "serve", "calibrate")

app = typer.Typer(
    name="ragshield",
    help="Defend RAG systems against knowledge-base extraction, attack them, and measure both.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        from ragshield import __version__

        try:
            installed = version("ragshield")
        except PackageNotFoundError:  # run from a source tree
            installed = __version__
        typer.echo(f"ragshield {installed}")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Defend RAG systems against knowledge-base extraction, attack them, and measure both."""


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        module_name = f"ragshield.commands.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name == module_name:  # a command group not installed in this build
                continue
            raise
        module.register(app)


_register_commands()


def main() -> None:
    """Console entry point: run the app; ragshield errors exit with status 2 and one message."""
    logging.basicConfig(level=os.environ.get("RAGSHIELD_LOG", "WARNING"), format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except RagShieldError as error:
        typer.secho(f"error: {error}", err=True, fg=typer.colors.RED)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
