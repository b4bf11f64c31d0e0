"""Keyword parameters checked against signatures, for every registry (defenses, attacks,
generators, corpora).

A factory states what it takes in its signature. One that passes `**options` on to a class
or function says so with `@forwards(Target)`, and the options that target takes become valid
too. So a typo in a config is rejected before anything is built, with the list of valid
names, instead of surfacing as a bare `TypeError` from deep inside a constructor.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from ragshield.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])
_FORWARDS = "__ragshield_forwards__"
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def forwards(*targets: Callable[..., Any] | Iterable[str]) -> Callable[[F], F]:
    """Mark a factory whose `**options` go to `targets` (callables, or literal name lists)."""

    def mark(function: F) -> F:
        setattr(function, _FORWARDS, targets)
        return function

    return mark


def accepted_parameters(target: Callable[..., Any], *, skip: Iterable[str] = ()) -> tuple[str, ...] | None:
    """The keyword parameters `target` accepts, in signature order; None when it takes any.

    `skip` names parameters the caller fills itself (a defense's `context`, a corpus's path);
    they are not offered to users.
    """
    skipped = set(skip)
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # builtins without a signature: cannot check
        return None
    names: list[str] = []
    open_ended = False
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            open_ended = True
        elif parameter.kind in _NAMED and parameter.name not in skipped:
            names.append(parameter.name)
    if not open_ended:
        return tuple(names)
    targets = getattr(target, _FORWARDS, None)
    if targets is None:
        return None
    for forwarded in targets:
        more = accepted_parameters(forwarded, skip=skipped) if callable(forwarded) else tuple(str(n) for n in forwarded)
        if more is None:
            return None
        names.extend(name for name in more if name not in names)
    return tuple(names)


def check_parameters(
    target: Callable[..., Any], params: Mapping[str, Any], *, kind: str, name: str, skip: Iterable[str] = ()
) -> None:
    """Reject keyword `params` that `target` does not take.

    Raises:
        ConfigError: an unknown parameter; the message names the component and lists the
            valid parameters.
    """
    accepted = accepted_parameters(target, skip=skip)
    if accepted is None:
        return
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        valid = ", ".join(accepted) or "none"
        plural = "s" if len(unknown) > 1 else ""
        raise ConfigError(f"{kind} {name!r} takes no parameter{plural} {', '.join(unknown)}; valid parameters: {valid}")
