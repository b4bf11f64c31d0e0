"""The output stage: the answer's monitors decide what of the produced text reaches the client.

Produced text is withheld until every monitor has seen it: the largest `holdback_chars` of the
monitors trails the generator, so a canary or PII item split across deltas never reaches the
client. Released pieces end at whitespace (a redactor never sees half a word); withheld spans
(`SpanRedactor`) become one marker each, then each monitor's `redact` rewrites the piece.

Every monitor call goes through `Run.attempt` (the pipeline's one error and timing path): a
monitor that raises is skipped for the rest of the answer when failing open, and halts the
answer when failing closed, exactly as a monitor that returns a BLOCK verdict does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from ragshield.guards.base import OutputMonitor, Withheld
from ragshield.pipeline.release import Withholder
from ragshield.pipeline.run import Failed, Halt, Run
from ragshield.types import Verdict

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_P = ParamSpec("_P")


class OutputStage:
    """The open monitors of one answer and the text not yet released to the client.

    `feed(delta)` and `flush()` return the text to release (possibly empty); both raise `Halt`
    when a monitor blocks or fails closed, after which nothing more may be released.
    """

    def __init__(self, run: Run, monitors: list[tuple[str, OutputMonitor]]) -> None:
        self.run = run
        self.monitors = monitors
        # fixed for the answer: a monitor that fails open later must not shrink the window
        self.holdback = max((monitor.holdback_chars for _, monitor in monitors), default=0)
        # produced text not yet released; it stays under `holdback` plus one delta, so appending
        # and cutting it costs O(delta) per token, not O(answer) (no rejoin of the whole answer)
        self.pending = ""
        self.released = 0  # produced characters already passed on (the produced offset of `pending`)
        self.withholder = Withholder()
        self.client_text: list[str] = []
        self._retired: list[tuple[str, OutputMonitor]] = []  # blocked or raised: no more calls

    def feed(self, delta: str) -> str:
        """Show `delta` to every monitor; the text that may now be released."""
        self.pending += delta
        for name, monitor in list(self.monitors):
            verdict = self._attempt(name, monitor, monitor.observe, delta)
            if isinstance(verdict, Verdict) and verdict.blocked:
                self.run.verdicts.append(verdict)
                self._retire(monitor)
                raise Halt(name)
        cut = len(self.pending) - self.holdback
        if cut > 0 and self.holdback:
            cut = _release_boundary(self.pending, cut)
        return self._release(cut) if cut > 0 else ""

    def close(self) -> None:
        """Each monitor's verdict on the whole answer; a retired monitor is only freed (oracle)."""
        for name, monitor in self.monitors:
            try:
                self.run.check(name, monitor.close)
            except Halt:  # recorded; the other monitors still give their verdicts
                continue
        for name, monitor in self._retired:  # their verdict is already recorded
            try:
                monitor.close()
            except Exception as error:
                log.warning("monitor %s failed to close: %s", name, type(error).__name__)

    def flush(self) -> str:
        """The rest of the produced text, when nothing blocked (call after `close`)."""
        return self._release(len(self.pending)) if self.pending else ""

    def _release(self, cut: int) -> str:
        """Release `pending[:cut]`: withheld spans become markers, then each monitor redacts."""
        piece, start = self.pending[:cut], self.released
        spans: list[Withheld] = []
        for name, monitor in list(self.monitors):
            withheld = getattr(monitor, "withheld", None)
            if withheld is not None:
                found = self._attempt(name, monitor, withheld, start, start + cut)
                spans.extend(() if isinstance(found, Failed) else found)
        text = self.withholder.apply(piece, start, spans)
        for name, monitor in list(self.monitors):
            redact = getattr(monitor, "redact", None)
            if redact is not None:
                redacted = self._attempt(name, monitor, redact, text)
                text = text if isinstance(redacted, Failed) else redacted
        self.pending = self.pending[cut:]
        self.released += cut
        self.client_text.append(text)
        return text

    def _attempt(
        self, name: str, monitor: OutputMonitor, call: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs
    ) -> _T | Failed:
        """`Run.attempt` for one monitor call; a monitor that raised is retired either way."""
        try:
            result = self.run.attempt("guard", name, call, *args, **kwargs)
        except Halt:
            self._retire(monitor)
            raise
        if isinstance(result, Failed):
            self._retire(monitor)
        return result

    def _retire(self, monitor: OutputMonitor) -> None:
        """Stop calling a monitor that blocked or raised; `close` only frees it."""
        self._retired.extend((name, kept) for name, kept in self.monitors if kept is monitor)
        self.monitors = [(name, kept) for name, kept in self.monitors if kept is not monitor]

    @property
    def text(self) -> str:
        """Everything released to the client so far."""
        return "".join(self.client_text)


def _release_boundary(text: str, cut: int) -> int:
    """Move a release point back to just after whitespace, so a redactor never sees half a word.

    Falls back to `cut` when the pending span has no whitespace (long tokens still flow).
    """
    space = max(text.rfind(" ", 0, cut), text.rfind("\n", 0, cut))
    return space + 1 if space >= 0 else cut
