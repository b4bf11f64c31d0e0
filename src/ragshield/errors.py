"""Exceptions. Every message says what went wrong and how to fix it."""

from __future__ import annotations


class RagShieldError(Exception):
    """Base class of every error ragshield raises on purpose."""


class ConfigError(RagShieldError):
    """A configuration value, name or file is invalid."""


class InvalidQueryError(RagShieldError):
    """A query is empty, too long or not text."""


class IndexLoadError(RagShieldError):
    """An index folder is missing, corrupt, or built with another embedder."""


class BackendUnavailable(RagShieldError):
    """An optional dependency or a model is missing; the message names the `pip install` fix."""


class GenerationError(RagShieldError):
    """A generator failed (model crashed, endpoint unreachable, stream broken)."""


class NotFittedError(RagShieldError, ValueError):
    """A trainable detector was used before `fit`."""


class UnknownNameError(ConfigError, KeyError):
    """A registry name does not exist; the message lists the valid names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def missing_extra(package: str, extra: str) -> BackendUnavailable:
    """The error for an optional dependency that is not installed."""
    return BackendUnavailable(
        f"the optional dependency {package!r} is not installed; run: pip install 'ragshield[{extra}]'"
    )
