"""`ragshield serve --config FILE.yaml [--host 127.0.0.1 --port 8000]`: the guarded RAG service."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragshield.errors import require_extra

#: what `ragshield serve` imports from the `guard` extra (the `server` extra holds them too)
SERVICE_MODULES = (("fastapi", "fastapi"), ("uvicorn", "uvicorn"), ("prometheus_client", "prometheus-client"))


def serve(config_path: Path, host: str, port: int, log_level: str) -> None:
    """Load the config, refuse unsafe binds, build the system (or, without an index, the guard-only
    service) and run uvicorn until interrupted.

    Raises:
        ConfigError: invalid config, or no `api_keys` with a non-loopback `host`.
        BackendUnavailable: an extra the config needs is not installed (the message names it).
    """
    from ragshield.service.settings import check_bind, load_serve_config

    config = load_serve_config(config_path)
    extra = "guard" if config.guard_only else "server"
    for module, package in SERVICE_MODULES:
        require_extra(module, extra=extra, package=package, needed_for="ragshield serve")
    check_bind(config, host)  # before loading any model: fail fast on an unsafe bind
    from ragshield.service.app import create_app

    app = create_app(config)
    state = app.state.ragshield
    what = "guard-only (/v1/guard/query, /v1/guard/output)" if state.pipeline is None else repr(config.model_name)
    typer.secho(f"ragshield serving {what} (defense: {state.shield.defense.name}) on http://{host}:{port}/v1", err=True)
    from ragshield.service.server import run_server

    run_server(app, host=host, port=port, log_level=log_level)  # header timeout, draining SIGTERM


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        config: Annotated[
            Path,
            typer.Option(help="serve config YAML (index, generator, defenses, policy, api_keys); no index: guard-only"),
        ],
        host: Annotated[str, typer.Option(help="address to bind; non-loopback needs api_keys")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="TCP port")] = 8000,
        log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    ) -> None:
        """Serve the guarded RAG system: OpenAI-compatible /v1/chat/completions, guard endpoints, metrics.

        A config without `index` serves the guard endpoints only (install: pip install 'ragshield[guard]').
        """
        serve(config, host, port, log_level)
