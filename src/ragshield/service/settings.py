"""The `ragshield serve` configuration: a `SystemConfig` plus what only a network service needs.

```yaml
index: DIR                          # built with `ragshield index`; absent: guard-only (see below)
generator: {name: llama-cpp, repeat_penalty: 1.15}   # or {name: openai-compatible, base_url: ..., model: ...}
k: 3
prompt_layout: chat                 # default: system prompt + stop sequences (tgtb: the paper's completion layout)
defenses: [shield]                  # default; any registered defenses, applied in order
calibration: {path: FILE, target_fpr: 0.01}
policy: {window: 20, k: 3, block_seconds: 3600, store: "sqlite:PATH"}   # or "redis://HOST:PORT/0"
api_keys: {"${RAGSHIELD_KEY}": user-id}   # absent: no auth, one anonymous user (loopback only)
api_keys_file: PATH                 # more KEY: user-id pairs, from a file kept out of the config
rate_limit: {requests: 60, per_seconds: 60}   # per API key; shared through the policy store
audit_log: PATH
```

Without `index` the service is guard-only: it serves `/v1/guard/query` and
`/v1/guard/output` for an application that retrieves and generates itself, loads no index and
no model, and answers `/v1/chat/completions` with 404 `guard_only_service`. Its default
defenses are `GUARD_ONLY_DEFENSES`, which need no model (see `ragshield.service.guard_only`).

Every value may use `${VAR}` / `${VAR:-default}` (`ragshield.interpolation`).

The system part (index, generator, defenses, calibration, policy, ...) is the same
`SystemConfig` that `ragshield eval` and `build_system` read; unknown keys are errors.
Relative paths are resolved against the current directory, as everywhere else in ragshield.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import stat
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, field_validator, model_validator

from ragshield.config import SystemConfig, _Strict, read_yaml, validate
from ragshield.errors import ConfigError
from ragshield.interpolation import interpolate

log = logging.getLogger(__name__)

ANONYMOUS_USER = "anonymous"
DEFAULT_MODEL_NAME = "ragshield"
MIN_KEY_CHARS = 16


class RateLimitConfig(_Strict):
    """At most `requests` requests per API key in any `per_seconds`-second window.

    `store`: where the counts live: `memory` (this process), `redis://HOST:PORT/DB`, or None
    (default): the policy store's Redis when the policy uses one (so every replica shares the
    limit), else this process's memory. Past the limit a request gets 429 with `Retry-After`.
    """

    requests: int = Field(gt=0, le=1_000_000)
    per_seconds: int = Field(60, gt=0, le=86_400)
    store: str | None = None

    @field_validator("store")
    @classmethod
    def _known_store(cls, value: str | None) -> str | None:
        if value is not None and value != "memory" and not value.startswith(("redis://", "rediss://")):
            raise ValueError("rate_limit store must be 'memory' or a redis:// URL")
        return value


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
        api_keys_file: a YAML file of more `KEY: user-id` pairs (a mounted secret), read at
            startup and merged with `api_keys`.
        rate_limit: per-key request limit (`RateLimitConfig`); None: no limit.
        embedder: guard-only services (no `index`) only: the embedder of guards that embed
            (e.g. `intent`); with an index, its manifest names the embedder and this must be unset.
    """

    api_keys: dict[str, str] | None = None
    api_keys_file: str | None = None
    rate_limit: RateLimitConfig | None = None
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
    embedder: str | None = None

    @field_validator("api_keys")
    @classmethod
    def _keys_are_usable(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("api_keys is empty; remove it (anonymous, loopback only) or add KEY: user-id pairs")
        check_keys(value)
        return value

    @model_validator(mode="before")
    @classmethod
    def _merge_key_file(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not data.get("api_keys_file"):
            return data
        from_file = read_key_file(str(data["api_keys_file"]))
        given = data.get("api_keys") or {}
        if not isinstance(given, dict):
            return data  # the field's own validation reports it
        for key, user in from_file.items():
            if key in given and given[key] != user:
                raise ValueError("a key in api_keys_file is also in api_keys with another user id; keep one")
        return {**data, "api_keys": {**given, **from_file}}

    @property
    def guard_only(self) -> bool:
        """True when the config names no index: only the guard endpoints are served."""
        return not self.index

    @model_validator(mode="after")
    def _embedder_only_without_index(self) -> ServeConfig:
        if self.embedder is not None and self.index:
            raise ValueError("embedder: the index's manifest names its embedder; set `embedder` only without an index")
        return self


def check_keys(keys: dict[str, str]) -> None:
    """Refuse short keys and empty user ids (messages never show a key).

    Raises:
        ValueError: a key under `MIN_KEY_CHARS` characters or a blank user id.
    """
    for key, user in keys.items():
        if not isinstance(key, str) or len(key) < MIN_KEY_CHARS:
            raise ValueError(
                f"every API key needs at least {MIN_KEY_CHARS} characters (use: python -c 'import secrets; "
                "print(secrets.token_urlsafe(24))')"
            )
        if not isinstance(user, str) or not user.strip():
            raise ValueError("every API key needs a non-empty user id")


def read_key_file(path: str) -> dict[str, str]:
    """`KEY: user-id` pairs from a YAML file (a mounted secret); `${VAR}` works here too.

    Errors never quote the file (a YAML parser's message shows the offending line: a key).

    Raises:
        ValueError: the file is unreadable, not YAML, not a mapping of strings, or holds an unusable key.
        ConfigError: a `${VAR}` without a default names an unset variable.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
        mode = file.stat().st_mode
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"api_keys_file {path}: cannot read it ({type(error).__name__})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ValueError(f"api_keys_file {path} is not valid YAML{where}") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"api_keys_file {path} must hold KEY: user-id pairs")
    filled = interpolate({"api_keys": data}, source=f"api_keys_file {path}")["api_keys"]
    if not all(isinstance(key, str) and isinstance(user, str) for key, user in filled.items()):
        raise ValueError(f"api_keys_file {path} must hold KEY: user-id pairs (strings)")
    check_keys(filled)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("api_keys_file %s is readable by other users; chmod 600 it", path)
    return dict(filled)


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
