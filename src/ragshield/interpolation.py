"""`${VAR}` and `${VAR:-default}` in YAML configs, filled from the environment.

Every config file ragshield reads goes through `ragshield.config.read_yaml`, which applies
`interpolate` to the parsed document, so secrets (API keys, Redis URLs with passwords, endpoint
tokens) can stay out of the file:

```yaml
api_keys: {"${RAGSHIELD_API_KEY}": alice}
policy: {store: "${POLICY_STORE:-sqlite:runs/policy.db}"}
oracle: {name: openai-compatible, base_url: "${ORACLE_URL}", api_key: "${ORACLE_KEY}"}
```

* `${VAR}` is the value of `VAR`; an unset `VAR` is an error that names it and where it is used.
* `${VAR:-default}` is `default` when `VAR` is unset or empty (as in the shell).
* `$${` is a literal `${`.

Substitution happens after parsing, in mapping keys and in string values, so a value from the
environment is always one string: it cannot add keys or change the document's structure (pydantic
still turns `"8000"` into a number where a setting is one). Comments are not interpolated.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ragshield.errors import ConfigError

# ${NAME} or ${NAME:-default}; a default runs to the first `}` (write no `}` inside it)
_REFERENCE = re.compile(r"\$(\$?)\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: mappings whose keys are secrets (never shown in error messages)
SECRET_MAPPINGS = frozenset({"api_keys"})


def interpolate(data: Any, env: Mapping[str, str] | None = None, *, source: str = "config") -> Any:
    """`data` (a parsed YAML document) with every `${VAR}` / `${VAR:-default}` filled from `env`.

    Args:
        data: mappings, lists and scalars as `yaml.safe_load` returns them.
        env: the variables (default: `os.environ`).
        source: what the error messages name (the file).

    Raises:
        ConfigError: a referenced variable is unset and has no default, or a reference is malformed
            (`${}`, `${1X}`, `${X:default}`); the message names the variable and the setting.
    """
    return _walk(data, os.environ if env is None else env, source, ())


def _walk(value: Any, env: Mapping[str, str], source: str, where: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _fill(value, env, source, where)
    if isinstance(value, dict):
        # the keys of a secret mapping (api_keys) are secrets: error messages name them `<key>`
        hidden = bool(where) and where[-1] in SECRET_MAPPINGS
        filled: dict[Any, Any] = {}
        for key, item in value.items():
            shown = "<key>" if hidden or (isinstance(key, str) and "${" in key) else str(key)
            new_key = _fill(key, env, source, (*where, shown)) if isinstance(key, str) else key
            if new_key in filled:
                raise ConfigError(
                    f"{source}: {_path(where) or '(root)'} has two keys that are equal after interpolation; "
                    "give each its own value"
                )
            filled[new_key] = _walk(item, env, source, (*where, shown))
        return filled
    if isinstance(value, list):
        return [_walk(item, env, source, (*where, str(index))) for index, item in enumerate(value)]
    return value


def _fill(text: str, env: Mapping[str, str], source: str, where: tuple[str, ...]) -> str:
    if "${" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        if match.group(1):  # `$${...}`: an escaped, literal `${...}`
            return "${" + match.group(2) + "}"
        name, separator, default = match.group(2).partition(":-")
        if not _NAME.match(name):
            raise ConfigError(
                f"{source}: {_path(where) or '(root)'} has a malformed reference ${{{match.group(2)}}}; write "
                "${NAME} or ${NAME:-default} (write $${ for a literal ${)"
            )
        found = env.get(name)
        if separator:
            return found if found else default
        if found is None:
            raise ConfigError(
                f"{source}: {_path(where) or '(root)'} uses ${{{name}}}, but the environment variable {name} is not "
                f"set; export {name}, or give a default with ${{{name}:-default}}"
            )
        return found

    return _REFERENCE.sub(replace, text)


def _path(where: tuple[str, ...]) -> str:
    return ".".join(where)
