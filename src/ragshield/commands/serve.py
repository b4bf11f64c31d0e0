"""`ragshield serve --config FILE.yaml [--host 127.0.0.1 --port 8000]`: the guarded RAG service."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragshield.errors import missing_extra


def serve(config_path: Path, host: str, port: int, log_level: str) -> None:
    """Load the config, refuse unsafe binds, build the system and run uvicorn until interrupted.

    Raises:
        ConfigError: invalid config, or no `api_keys` with a non-loopback `host`.
        BackendUnavailable: the `server` extra is not installed.
    """
    import importlib.util

    if importlib.util.find_spec("uvicorn") is None:  # pragma: no cover - depends on the install
        raise missing_extra("uvicorn", "server")
    from ragshield.service.settings import check_bind, load_serve_config

    config = load_serve_config(config_path)
    check_bind(config, host)  # before loading any model: fail fast on an unsafe bind
    from ragshield.service.app import create_app

    app = create_app(config)
    typer.secho(
        f"ragshield serving {config.model_name!r} (defense: {app.state.ragshield.pipeline.defense.name}) "
        f"on http://{host}:{port}/v1",
        err=True,
    )
    from ragshield.service.server import run_server

    run_server(app, host=host, port=port, log_level=log_level)  # header timeout, draining SIGTERM


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        config: Annotated[Path, typer.Option(help="serve config YAML (index, generator, defenses, policy, api_keys)")],
        host: Annotated[str, typer.Option(help="address to bind; non-loopback needs api_keys")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="TCP port")] = 8000,
        log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    ) -> None:
        """Serve the guarded RAG system: OpenAI-compatible /v1/chat/completions, guard endpoints, metrics."""
        serve(config, host, port, log_level)
