"""The `ragshield serve` configuration: a `SystemConfig` plus what only a network service needs.

```yaml
index: DIR                          # built with `ragshield index`
generator: {name: llama-cpp, repeat_penalty: 1.15}   # or {name: openai-compatible, base_url: ..., model: ...}
k: 3
prompt_layout: chat                 # default: system prompt + stop sequences (tgtb: the paper's completion layout)
defenses: [shield]                  # default; any registered defenses, applied in order
calibration: {path: FILE, target_fpr: 0.01}
policy: {window: 20, k: 3, block_seconds: 3600, store: "sqlite:PATH"}   # or "redis://HOST:PORT/0"
api_keys: {KEY: user-id}            # absent: no auth, one anonymous user (loopback only)
audit_log: PATH
```

The system part (index, generator, defenses, calibration, policy, ...) is the same
`SystemConfig` that `ragshield eval` and `build_system` read; unknown keys are errors.
Relative paths are resolved against the current directory, as everywhere else in ragshield.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

from pydantic import Field, field_validator

from ragshield.config import SystemConfig, read_yaml, validate
from ragshield.errors import ConfigError

ANONYMOUS_USER = "anonymous"
DEFAULT_MODEL_NAME = "ragshield"


class ServeConfig(SystemConfig):
    """A guarded RAG system served over HTTP.

    Args (beyond `SystemConfig`):
        api_keys: bearer key -> user id (the id the blocking policy counts violations for).
            None: no authentication, every request is the anonymous user, and the server
            refuses to bind a non-loopback address.
        audit_log: a JSONL file that receives one line per decision (None: no audit log).
        model_name: the model id clients send in `model`; any other id is a 404.
        request_timeout_s: seconds one request may take end to end; past it the request is
            stopped and, with `fail_closed`, counted as blocked (the verdict says "timeout").
        max_body_bytes: larger request bodies get a 413 before they are parsed.
        max_concurrent_requests: requests worked on at once, and the most worker threads the
            service runs (a timed-out request keeps its thread until its work ends); more wait
            in line.
        header_timeout_s: seconds a client may take to send its request line and headers;
            past it the connection is closed.
        body_timeout_s: seconds a client may take to send its request body; past it, a 408.
        shutdown_grace_s: after SIGTERM, seconds in-flight requests get to finish; then
            streams end with an error event (code `server_shutting_down`), others get a 503.
        open_docs: serve `/docs` and `/openapi.json` without a key (default: they need one).
        expose_verdicts: put guard names, scores and reasons into client responses. Off by
            default: scores tell an adaptive attacker how close a query came to a threshold.
    """

    api_keys: dict[str, str] | None = None
    audit_log: str | None = None
    model_name: str = DEFAULT_MODEL_NAME
    request_timeout_s: float = Field(120.0, gt=0.0)
    max_body_bytes: int = Field(256 * 1024, gt=0)
    max_concurrent_requests: int = Field(64, gt=0, le=1024)
    header_timeout_s: float = Field(10.0, gt=0.0)
    body_timeout_s: float = Field(30.0, gt=0.0)
    shutdown_grace_s: float = Field(10.0, ge=0.0)
    open_docs: bool = False
    expose_verdicts: bool = False

    @field_validator("api_keys")
    @classmethod
    def _keys_are_usable(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("api_keys is empty; remove it (anonymous, loopback only) or add KEY: user-id pairs")
        for key, user in value.items():
            if len(key) < 16:
                raise ValueError(
                    "every API key needs at least 16 characters (use: python -c 'import secrets; "
                    "print(secrets.token_urlsafe(24))')"
                )
            if not user.strip():
                raise ValueError("every API key needs a non-empty user id")
        return value


def load_serve_config(path: str | Path) -> ServeConfig:
    """Read and validate a serve config file.

    Raises:
        ConfigError: the file is missing, not YAML, or has unknown / invalid settings.
    """
    config: ServeConfig = validate(ServeConfig, read_yaml(path), source=f"serve config {path}")
    return config


def is_loopback(host: str) -> bool:
    """True when `host` (a name or an address) resolves only to loopback addresses."""
    if host in {"localhost", "localhost.localdomain"}:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses)


def check_bind(config: ServeConfig, host: str) -> None:
    """Refuse to expose an unauthenticated service beyond this machine.

    Raises:
        ConfigError: `api_keys` is absent and `host` is not a loopback address.
    """
    if config.api_keys is None and not is_loopback(host):
        raise ConfigError(
            f"refusing to bind {host!r} without authentication: add 'api_keys: {{KEY: user-id}}' to the "
            "config, or bind 127.0.0.1"
        )
