"""Exceptions. Every message says what went wrong and how to fix it."""

from __future__ import annotations

import importlib
from types import ModuleType


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


def missing_extra(package: str, extra: str, *, needed_for: str | None = None) -> BackendUnavailable:
    """The error for an optional dependency that is not installed: names the package, what needs it
    (when given) and the `pip install 'ragshield[extra]'` line that fixes it."""
    purpose = f" (needed for {needed_for})" if needed_for else ""
    return BackendUnavailable(
        f"the optional dependency {package!r} is not installed{purpose}; run: pip install 'ragshield[{extra}]'"
    )


def require_extra(module: str, *, extra: str, package: str | None = None, needed_for: str | None = None) -> ModuleType:
    """Import `module` (an optional dependency) at the point of use, or raise the missing-extra error.

    Only a missing `module` itself (or one of its parents) is reported as a missing extra; an import
    error inside an installed package is re-raised as it is, since reinstalling the extra would not
    fix it.

    Args:
        module: the module to import, e.g. `"faiss"`.
        extra: the ragshield extra that installs it, e.g. `"models"`.
        package: the distribution name to show when it differs from the module (`"faiss-cpu"`).
        needed_for: what needs it, shown in the message (`"the FAISS index"`).

    Raises:
        BackendUnavailable: `module` is not installed; the message says `pip install 'ragshield[extra]'`.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is None or not (module == error.name or module.startswith(error.name + ".")):
            raise
        raise missing_extra(package or module, extra, needed_for=needed_for) from error
