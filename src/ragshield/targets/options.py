"""The `TargetSpec` behind `ragshield attack`'s target options (`--target`, `--target-url`, ...,
or a `--target-config` YAML file holding one `TargetSpec` mapping)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragshield.config import read_yaml, validate
from ragshield.errors import ConfigError
from ragshield.targets import TARGET_KINDS, TargetSpec


def pairs(values: list[str] | None, what: str) -> dict[str, Any]:
    """`KEY=VALUE` options as a mapping (values are JSON when they parse, else text).

    Raises:
        ConfigError: an option without `=`.
    """
    result: dict[str, Any] = {}
    for value in values or ():
        key, sep, raw = value.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{what} {value!r} is not KEY=VALUE")
        try:
            result[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            result[key.strip()] = raw
    return result


def target_spec(
    kind: str,
    *,
    config: Path | None = None,
    url: str | None = None,
    model: str | None = None,
    key_env: str | None = None,
    headers: list[str] | None = None,
    body: list[str] | None = None,
    stream: bool | None = None,
    template: str | None = None,
    answer: str | None = None,
    runnable: str | None = None,
    history: int = 0,
    label: str | None = None,
) -> TargetSpec:
    """The target of the CLI options; `config` (a YAML `TargetSpec`) wins over `kind`, and the
    other options, when given, are added to its options.

    Raises:
        ConfigError: unknown kind, an option the kind does not take, or an invalid file.
    """
    if config is not None:
        spec: TargetSpec = validate(TargetSpec, read_yaml(config), source=f"target config {config}")
        kind, options = spec.kind, dict(spec.options)
        history = history or spec.history
        label = label or spec.label
    elif kind not in TARGET_KINDS:
        raise ConfigError(f"unknown target {kind!r}; valid targets: {', '.join(TARGET_KINDS)}")
    else:
        options = {}
    extra_body = pairs(body, "--target-body")
    extra_headers = {key: str(value) for key, value in pairs(headers, "--target-header").items()}
    given: dict[str, Any] = {}
    if kind == "openai-chat":
        given = {"base_url": url, "model": model, "api_key_env": key_env, "stream": stream}
        given["headers"] = {**options.get("headers", {}), **extra_headers} if extra_headers else None
        given["body"] = {**options.get("body", {}), **extra_body} if extra_body else None
    elif kind == "rest":
        given = {"url": url, "answer": answer, "sse": stream}
        given["headers"] = {**options.get("headers", {}), **extra_headers} if extra_headers else None
        if template is not None:
            text = Path(template[1:]).read_text(encoding="utf-8") if template.startswith("@") else template
            try:
                given["body"] = json.loads(text)
            except json.JSONDecodeError as error:
                raise ConfigError(f"--request-template is not JSON: {error}") from error
    elif kind == "langchain":
        given = {"runnable": runnable}
    elif any(value is not None for value in (url, model, template, answer, runnable)) or headers or body:
        raise ConfigError("the local target takes --index and --generator options, not --target-* options")
    options.update({key: value for key, value in given.items() if value is not None})
    return TargetSpec(kind=kind, label=label, history=history, options=options)
