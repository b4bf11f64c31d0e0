"""Typed configuration shared by `ragshield eval`, `ragshield serve` and `build_system`.

YAML files are validated by pydantic; unknown keys are errors (a typo must not silently
change a security setting).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragshield.errors import ConfigError

#: the repetition penalty of the user-facing commands (1.0 = off; see `benchmarks/degenerate.py`)
USER_REPEAT_PENALTY = 1.15
#: generators that take a `repeat_penalty` parameter (the fakes do not)
PENALTY_GENERATORS = frozenset({"llama-cpp", "openai-compatible", "transformers"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CalibrationConfig(_Strict):
    """Benign queries (JSONL with `query`) that trainable guards are fitted on."""

    path: str
    target_fpr: float = Field(0.01, gt=0.0, lt=1.0)
    limit: int | None = Field(None, gt=0)


class PolicyConfig(_Strict):
    """Per-user blocking: >= `k` violations in the last `window` queries blocks for `block_seconds`.

    `store` is `memory`, `sqlite:PATH` or `redis://HOST:PORT/DB`.
    """

    window: int = Field(20, gt=0)
    k: int = Field(3, gt=0)
    block_seconds: float = Field(3600.0, ge=0.0)
    store: str = "memory"


class SystemConfig(_Strict):
    """One guarded RAG system: where its knowledge lives and how it answers.

    `generator` and `oracle` are mappings with a `name` (`llama-cpp`, `openai-compatible`,
    ...) and that generator's parameters; `defense_params` maps a defense name to keyword
    parameters for its factory.

    The defaults are the user-facing ones (`ragshield ask`, `serve`, `demo`): the layered `shield`
    defense (`defenses: []` or `[none]` for none), the `chat` prompt
    layout (system prompt, stop sequences) and a generator with `repeat_penalty` 1.15, because
    SmolLM2-135M with the TGTB completion layout, greedy decoding and no penalty answers in
    loops (`benchmarks/degenerate.py`). A `generator` mapping given in full replaces the
    default one, penalty included. Paper replication (`EvalConfig`, `configs/*.yaml`) sets
    its own `tgtb` layout and generator, with no penalty and no stops.

    `index` is the index folder; its manifest names the corpus and the embedder it was built
    with, and the system uses that embedder (so neither is a setting here; `EvalConfig`, which
    builds its index, adds both).
    """

    index: str | None = None
    generator: dict[str, Any] = Field(
        default_factory=lambda: {"name": "llama-cpp", "repeat_penalty": USER_REPEAT_PENALTY}
    )
    oracle: dict[str, Any] | None = None
    k: int = Field(3, gt=0, le=100)
    prompt_layout: str = "chat"
    max_tokens: int = Field(256, gt=0)
    defenses: list[str] = Field(default_factory=lambda: ["shield"])
    defense_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    calibration: CalibrationConfig | None = None
    policy: PolicyConfig | None = None
    fail_closed: bool = True
    seed: int = 0

    @field_validator("generator")
    @classmethod
    def _has_name(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "name" not in value:
            raise ValueError("generator needs a 'name' (llama-cpp, openai-compatible, transformers)")
        return value

    @property
    def defense_spec(self) -> str:
        """The defenses joined with `+` (`none` when empty)."""
        names = [name for name in self.defenses if name != "none"]
        return "+".join(names) if names else "none"


def cli_system_config(
    *,
    index: str | Path,
    defense: str,
    generator: str,
    k: int,
    layout: str,
    max_tokens: int,
    calibration: str | Path | None = None,
    target_fpr: float = 0.01,
    params: dict[str, dict[str, Any]] | None = None,
    repeat_penalty: float = 1.0,
    generator_params: dict[str, Any] | None = None,
) -> SystemConfig:
    """The `SystemConfig` behind the one-shot commands (`ask`, `attack`, `scan`): their options
    map one to one onto it, and trainable guards are fitted on `calibration` (benign JSONL).
    `repeat_penalty` (1.0 = off) goes to the generators that take one (`PENALTY_GENERATORS`);
    `generator_params` (e.g. from `generator_settings`) are the generator's own parameters."""
    settings: dict[str, Any] = {"name": generator, **(generator_params or {})}
    if repeat_penalty != 1.0 and generator in PENALTY_GENERATORS:
        settings["repeat_penalty"] = repeat_penalty
    return SystemConfig(
        index=str(index),
        generator=settings,
        k=k,
        prompt_layout=layout,
        max_tokens=max_tokens,
        defenses=[defense],
        defense_params=params or {},
        calibration=CalibrationConfig(path=str(calibration), target_fpr=target_fpr) if calibration else None,
    )


def generator_settings(
    generator: str, *, url: str | None = None, model: str | None = None, key_env: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The generator name and parameters behind the CLI's `--generator-url/-model/-key-env`:
    any of them selects `openai-compatible` (the only generator reached over HTTP; the default
    `llama-cpp` gives way to it) and becomes its `base_url`, `model` and `api_key_env`.

    Raises:
        ConfigError: one of them is given with another named generator.
    """
    params = {key: value for key, value in (("base_url", url), ("model", model), ("api_key_env", key_env)) if value}
    if not params:
        return generator, {}
    if generator not in ("openai-compatible", "llama-cpp"):
        raise ConfigError(f"--generator-url/-model/-key-env need --generator openai-compatible, not {generator!r}")
    return "openai-compatible", params


def read_yaml(path: str | Path) -> dict[str, Any]:
    """A YAML mapping from a file, with `${VAR}` / `${VAR:-default}` filled from the environment
    (`ragshield.interpolation`), and clear errors for missing or malformed files.

    Raises:
        ConfigError: the file is missing, not YAML, not a mapping, or uses an unset variable
            without a default (the message names the variable).
    """
    from ragshield.interpolation import interpolate

    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"config file not found: {file}")
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ConfigError(f"{file} is not valid YAML: {error}") from error
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {file}: {error}") from error
    if not isinstance(data, dict):
        raise ConfigError(f"{file} must hold a mapping of settings")
    filled: dict[str, Any] = interpolate(data, source=str(file))
    return filled


def validate(model: type[_Strict], data: dict[str, Any], source: str = "config") -> Any:
    """Validate `data` against `model`, turning pydantic errors into one readable ConfigError."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc']) or '(root)'}: {item['msg']}" for item in error.errors()
        )
        raise ConfigError(f"invalid {source}: {problems}") from error
