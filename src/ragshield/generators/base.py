"""The `Generator` protocol and helpers shared by every backend."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from ragshield.registry import GENERATORS, resolve
from ragshield.types import GenerationRequest


@runtime_checkable
class Generator(Protocol):
    """Streams text deltas for a request. Backends raise `GenerationError` on failure."""

    @property
    def name(self) -> str: ...

    def stream(self, request: GenerationRequest) -> Iterator[str]: ...


def complete(generator: Generator, request: GenerationRequest) -> str:
    """The whole answer as one string."""
    return "".join(generator.stream(request))


async def astream(generator: Generator, request: GenerationRequest) -> AsyncIterator[str]:
    """Async iteration over a sync generator's deltas; each step runs in a worker thread so the
    event loop is never blocked by model inference."""
    iterator = iter(generator.stream(request))
    sentinel = object()
    while True:
        delta = await asyncio.to_thread(next, iterator, sentinel)
        if delta is sentinel:
            return
        yield str(delta)


def make_generator(spec: Mapping[str, Any] | str) -> Generator:
    """A generator from a config mapping such as `{name: llama-cpp, max_ctx: 2048}` or a name.

    Raises:
        UnknownNameError: unknown generator name.
    """
    params = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = str(params.pop("name", "llama-cpp"))
    cls = resolve(GENERATORS, name, kind="generator")
    generator: Generator = cls(**params)
    return generator
