"""Streaming the application's answer through a `Shield`, sync and async, for the adapters.

* `release(items, ...)` turns `Shield.monitor`'s output (text, then the final `Response`) into
  the text a framework hands its caller: the checked text, then on a halt either
  `GuardBlockedError` or the refusal.
* `amonitor(shield, decorated, deltas)` is `Shield.monitor` for an async stream: the guards
  run in one worker thread (they are synchronous and may block, e.g. the canary oracle calls
  a model) while the event loop keeps reading the model; each checked piece is handed back as
  soon as it is released, so an async caller gets a real stream, and a halt stops the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from ragshield.integrations.shield import GuardBlockedError, Shield
from ragshield.types import Response, RetrievalResult

__all__ = ["OnBlock", "amonitor", "arelease", "release"]

OnBlock = Literal["raise", "refuse"]
_END = object()


@dataclass(frozen=True)
class _Failed:
    error: BaseException


def _piece(
    item: str | Response, *, refusal: str, on_block: OnBlock, on_final: Callable[[Response], None] | None
) -> str | None:
    """What one item of `Shield.monitor` shows the caller (None: nothing); `on_final` sees the final
    `Response`, and a halted answer ends with the refusal or raises for `on_block="raise"`."""
    if not isinstance(item, Response):
        return item
    if on_final is not None:
        on_final(item)
    if item.finish_reason != "blocked":
        return None
    if on_block == "raise":
        raise GuardBlockedError("the answer was stopped by a guard", item)
    return ("\n" if item.text else "") + refusal


def release(
    items: Iterable[str | Response],
    *,
    refusal: str,
    on_block: OnBlock,
    on_final: Callable[[Response], None] | None = None,
) -> Iterator[str]:
    """The checked text of `Shield.monitor(...)`; `on_final` sees the final `Response` first.

    Raises:
        GuardBlockedError: a guard halted the answer and `on_block="raise"`.
    """
    for item in items:
        piece = _piece(item, refusal=refusal, on_block=on_block, on_final=on_final)
        if piece is not None:
            yield piece


async def arelease(
    items: AsyncIterable[str | Response],
    *,
    refusal: str,
    on_block: OnBlock,
    on_final: Callable[[Response], None] | None = None,
) -> AsyncIterator[str]:
    """`release` for `amonitor`."""
    async for item in items:
        piece = _piece(item, refusal=refusal, on_block=on_block, on_final=on_final)
        if piece is not None:
            yield piece


async def amonitor(
    shield: Shield, decorated: RetrievalResult, deltas: AsyncIterable[str]
) -> AsyncIterator[str | Response]:
    """`Shield.monitor` over an async stream of the model's deltas (same items, same guarantees).

    Closing the returned iterator early, or a guard halting the answer, stops reading `deltas`.
    """
    loop = asyncio.get_running_loop()
    inbox: queue.SimpleQueue[object] = queue.SimpleQueue()  # deltas -> worker (blocking side)
    outbox: asyncio.Queue[object] = asyncio.Queue()  # worker -> event loop

    def handed_over() -> Iterator[str]:
        while True:
            item = inbox.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error  # the model's failure reaches the pipeline, as in the sync path
            assert isinstance(item, str)
            yield item

    def post(item: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody is listening any more
            loop.call_soon_threadsafe(outbox.put_nowait, item)

    def work() -> None:
        try:
            for item in shield.monitor(decorated, handed_over()):
                post(item)
        except BaseException as error:  # handed to the awaiting caller
            post(_Failed(error))
        finally:
            post(_END)

    async def feed() -> None:
        try:
            async for delta in deltas:
                inbox.put(delta)
        except Exception as error:  # the pipeline decides (fail closed)
            inbox.put(_Failed(error))
        finally:
            inbox.put(_END)

    feeder = asyncio.ensure_future(feed())
    worker = loop.run_in_executor(None, work)
    try:
        while True:
            item = await outbox.get()
            if item is _END:
                break
            if isinstance(item, _Failed):
                raise item.error
            assert isinstance(item, (str, Response))
            yield item
        await worker
    finally:
        feeder.cancel()  # a halted or abandoned answer stops the model
        inbox.put(_END)  # and frees the worker if it still waits for a delta
