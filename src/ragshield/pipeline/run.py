"""One request as it moves through the pipeline, and its three single paths.

* **Errors.** Every part of a defense (the policy check, a rewriter, a query guard, a decorator,
  an output guard's `open`, a monitor's `observe` / `withheld` / `redact` / `close`) runs through
  `Run.attempt`. A part that raises gets one error verdict, which names only the exception type
  (messages can quote chunk text or canaries). Failing closed (`Defense.fail_closed`, the
  default), the verdict blocks and `Halt` stops the request at once: before generation the client
  gets the refusal, during generation nothing more is released. Failing open, the verdict allows
  and the part is skipped for the rest of the request. A failed-closed part is recorded exactly
  like a guard that blocked: it counts as a violation of the user's policy window.
* **Timings.** `Run.attempt` adds each part's time to `timings_ms[<stage>:<part>]` (also when it
  raises); `Run.stage` times a whole stage (`retrieve`, `generate`, `close`) and opens its
  tracing span, which names the verdicts the stage added.
* **Policy.** `Run.record_policy` is the one place the user's window is written: once per request
  that reached retrieval, with `violated` = a blocking verdict or an intent signal. Refusals by
  the policy itself, cancelled answers and allowed screenings are not recorded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

from ragshield.guards.base import INTENT_SIGNAL, ViolationPolicy, error_verdict
from ragshield.pipeline.tracing import RequestSpans, StageSpan
from ragshield.types import Query, Response, RetrievalResult, Verdict

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_P = ParamSpec("_P")


class Halt(Exception):
    """The request stops here: a part failed closed, or a guard blocked."""


@dataclass(frozen=True)
class Failed:
    """A part that raised and failed open; its ALLOW error verdict is already recorded."""

    verdict: Verdict


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started` (a `time.perf_counter()` reading), rounded to microseconds."""
    return round((time.perf_counter() - started) * 1000.0, 3)


@dataclass
class Run:
    """Mutable state of one request while it runs (never leaves the pipeline package)."""

    query: Query
    fail_closed: bool
    spans: RequestSpans
    started: float = field(default_factory=time.perf_counter)
    retrieval: RetrievalResult | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    # -- the error path ----------------------------------------------------------------------

    def attempt(
        self, stage: str, part: str, call: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs
    ) -> _T | Failed:
        """`call(*args, **kwargs)`, timed into `timings["<stage>:<part>"]`; when it raises, the
        error verdict of `part` is recorded and, failing open, returned as `Failed`.

        Raises:
            Halt: the part raised and the defense fails closed (its BLOCK verdict is recorded).
        """
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        except Exception as error:  # a defense part must never crash the request
            log.warning("%s raised %s", part, type(error).__name__)
            verdict = error_verdict(part, error, fail_closed=self.fail_closed)
            self.verdicts.append(verdict)
            if verdict.blocked:
                raise Halt(part) from None
            return Failed(verdict)
        finally:
            self.add_time(f"{stage}:{part}", started)

    def check(self, part: str, call: Callable[_P, Verdict], *args: _P.args, **kwargs: _P.kwargs) -> Verdict:
        """A guard's verdict through `attempt` (stage `guard`), recorded; a part that failed open
        gives its (already recorded) error verdict."""
        verdict = self.attempt("guard", part, call, *args, **kwargs)
        if isinstance(verdict, Failed):
            return verdict.verdict
        self.verdicts.append(verdict)
        return verdict

    # -- the timing path ---------------------------------------------------------------------

    def add_time(self, key: str, started: float) -> None:
        """Add the time since `started` to `timings[key]` (parts called repeatedly accumulate)."""
        self.timings[key] = round(self.timings.get(key, 0.0) + elapsed_ms(started), 3)

    @contextmanager
    def stage(self, name: str, *, timed: bool = False) -> Iterator[StageSpan]:
        """Run one stage: its span (with the verdicts it added) and, when `timed`, `timings[name]`."""
        started, first_verdict = time.perf_counter(), len(self.verdicts)
        with self.spans.stage(name) as span:
            try:
                yield span
            except Halt:
                span.set("halted", True)
                raise
            except Exception as error:  # e.g. the retriever failed: the caller gets the exception
                span.error(error)
                raise
            finally:
                span.verdicts(self.verdicts[first_verdict:])
                if timed:
                    self.add_time(name, started)

    # -- the policy path ---------------------------------------------------------------------

    @property
    def blocked(self) -> bool:
        """Whether any recorded verdict blocks."""
        return any(verdict.blocked for verdict in self.verdicts)

    def record_policy(self, policy: ViolationPolicy | None) -> None:
        """Note this request in the user's window: violated when a verdict blocks or signals intent.

        A withheld span alone is not an intent signal (a small model quotes records for benign
        users); a guard that saw one says so in its verdict's evidence (`INTENT_SIGNAL`).
        """
        if policy is None:
            return
        violated = self.blocked or any(verdict.evidence.get(INTENT_SIGNAL) for verdict in self.verdicts)
        with self.stage("record"):
            try:
                verdict = self.attempt("guard", policy.name, policy.record, self.query.user_id, violated=violated)
            except Halt:  # the store failed: its BLOCK verdict is recorded, the answer already went out
                return
        if isinstance(verdict, Verdict):
            self.verdicts.append(verdict)

    # -- the response ------------------------------------------------------------------------

    def response(self, text: str, finish_reason: str, *, error: str | None = None) -> Response:
        """The final `Response`, with the total latency; ends the request's span."""
        self.timings["total"] = elapsed_ms(self.started)
        response = Response(
            query=self.query,
            text=text,
            retrieval=self.retrieval,
            verdicts=tuple(self.verdicts),
            finish_reason=finish_reason,
            timings_ms=dict(self.timings),
            error=error,
        )
        self.spans.finish(response)
        return response
