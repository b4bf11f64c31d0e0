"""`RagPipeline`: the only orchestration of the RAG flow.

    Query -> (policy) -> rewriters -> Retriever -> QueryGuards -> ContextDecorators
          -> PromptBuilder -> Generator.stream -> OutputMonitors -> Response

The CLI, the HTTP service, the framework adapters and the evaluation harness all call
`answer` or `stream`; none re-implements the flow. Any part that raises fails closed
(blocks) unless the defense says `fail_closed=False`; the verdict says which.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TypeVar

from ragshield.errors import InvalidQueryError
from ragshield.generators.base import GenerationCancelled, Generator, StreamEnd, check_cancelled
from ragshield.guards.base import INTENT_SIGNAL, NO_DEFENSE, Defense, OutputMonitor, ViolationPolicy, error_verdict
from ragshield.pipeline.release import Withholder
from ragshield.rag.prompting import PromptBuilder
from ragshield.rag.retriever import Retriever
from ragshield.types import Action, Query, Response, RetrievalResult, Verdict

log = logging.getLogger(__name__)

_T = TypeVar("_T")

DEFAULT_REFUSAL = "I can't help with that request."
MAX_QUERY_CHARS = 8000


def _now() -> float:
    return time.perf_counter()


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


def validate_query(query: Query | str, max_chars: int = MAX_QUERY_CHARS) -> Query:
    """A `Query` from a string or query; raises `InvalidQueryError` when empty or too long."""
    if isinstance(query, str):
        query = Query(query)
    if not isinstance(query.text, str) or not query.text.strip():
        raise InvalidQueryError("the query is empty; send a question")
    if len(query.text) > max_chars:
        raise InvalidQueryError(f"the query has {len(query.text)} characters; the limit is {max_chars}")
    return query


@dataclass
class _Run:
    """Mutable state of one answer while it streams (never leaves this module)."""

    query: Query
    retrieval: RetrievalResult | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


class RagPipeline:
    """A RAG system with a defense in front of and behind the generator.

    Args:
        retriever: embeds and searches the knowledge base.
        generator: the target model.
        defense: the parts to apply (default: none).
        prompt_builder: the prompt layout (default: TGTB completion layout).
        k: chunks retrieved per query.
        policy: per-user blocking state (None: no per-user blocking).
        refusal: the text a refused or blocked query receives.
        max_query_chars: longer queries raise `InvalidQueryError`.
    """

    def __init__(
        self,
        retriever: Retriever,
        generator: Generator,
        *,
        defense: Defense = NO_DEFENSE,
        prompt_builder: PromptBuilder | None = None,
        k: int = 3,
        policy: ViolationPolicy | None = None,
        refusal: str = DEFAULT_REFUSAL,
        max_query_chars: int = MAX_QUERY_CHARS,
    ) -> None:
        self.retriever = retriever
        self.generator = generator
        self.defense = defense
        self.prompt_builder = prompt_builder or PromptBuilder()
        self.k = k
        self.policy = policy
        self.refusal = refusal
        self.max_query_chars = max_query_chars

    def with_defense(self, defense: Defense) -> RagPipeline:
        """The same system behind another defense (retriever and generator are shared)."""
        return RagPipeline(
            self.retriever,
            self.generator,
            defense=defense,
            prompt_builder=self.prompt_builder,
            k=self.k,
            policy=self.policy,
            refusal=self.refusal,
            max_query_chars=self.max_query_chars,
        )

    # -- public entry points -------------------------------------------------------------

    def answer(self, query: Query | str) -> Response:
        """Answer one query; the returned `Response.text` is what a client would receive."""
        response: Response | None = None
        for item in self.stream(query):
            if isinstance(item, Response):
                response = item
        assert response is not None  # stream always ends with a Response
        return response

    def stream(self, query: Query | str) -> Iterator[str | Response]:
        """Yield the text deltas released to the client, then the final `Response`.

        Text is withheld (`holdback_chars` of the output monitors) until checked, so a
        blocked canary or PII item never reaches the client, even split across deltas.

        Raises:
            InvalidQueryError: the query is empty or longer than `max_query_chars`.
        """
        run, start, refused = self._start(query)
        if refused is not None:
            yield refused
            return
        yield from self._generate(run, start)

    def screen(self, query: Query | str) -> Response:
        """Run only the stages before generation (policy, rewriters, retrieval, query guards).

        Returns the refusal (`finish_reason` `blocked` or `refused`) when the query would be
        refused, else a Response with `finish_reason` `screened`, empty text, the allow
        verdicts and the stage timings: nothing was generated. An allowed query is not
        recorded in the per-user policy (only `answer`/`stream` finish it).

        Raises:
            InvalidQueryError: the query is empty or longer than `max_query_chars`.
        """
        run, start, refused = self._start(query)
        if refused is not None:
            return refused
        run.timings["total"] = _ms(start)
        return Response(run.query, "", run.retrieval, tuple(run.verdicts), "screened", dict(run.timings))

    def _start(self, query: Query | str) -> tuple[_Run, float, Response | None]:
        """Validate the query and run the stages before generation: the run, its start time
        and, when the query is refused, the refusal with its total latency."""
        run = _Run(validate_query(query, self.max_query_chars))
        start = _now()
        refused = self._before_generation(run)
        if refused is not None:
            refused = replace(refused, timings_ms={**refused.timings_ms, "total": _ms(start)})
        return run, start, refused

    # -- stages --------------------------------------------------------------------------

    def _guarded(self, name: str, run: _Run, call: Callable[[], Verdict]) -> Verdict:
        """Run one guard; a raising guard yields the defense's fail-closed/open verdict."""
        started = _now()
        try:
            verdict = call()
        except Exception as error:  # a guard must never crash the request
            log.warning("guard %s raised %s", name, type(error).__name__)
            verdict = error_verdict(name, error, fail_closed=self.defense.fail_closed)
        run.timings[f"guard:{name}"] = run.timings.get(f"guard:{name}", 0.0) + _ms(started)
        run.verdicts.append(verdict)
        return verdict

    def _refusal(self, run: _Run, reason: str) -> Response:
        return Response(
            query=run.query,
            text=self.refusal,
            retrieval=run.retrieval,
            verdicts=tuple(run.verdicts),
            finish_reason=reason,
            timings_ms=dict(run.timings),
        )

    def _before_generation(self, run: _Run) -> Response | None:
        """Policy, rewriting, retrieval, query guards; a Response when the query is refused."""
        user = run.query.user_id
        policy = self.policy
        if policy is not None:
            blocked = self._guarded(policy.name, run, lambda: policy.blocked_verdict(user) or _allow(policy.name))
            if blocked.blocked:
                return self._refusal(run, "refused")
        retrieval_query = run.query
        for rewriter in self.defense.rewriters:
            started = _now()
            try:
                retrieval_query = rewriter.rewrite(retrieval_query)
            except Exception as error:
                run.verdicts.append(error_verdict(rewriter.name, error, fail_closed=self.defense.fail_closed))
                if self.defense.fail_closed:
                    return self._refusal(run, "blocked")
            run.timings[f"rewrite:{rewriter.name}"] = _ms(started)
        started = _now()
        retrieval = self.retriever.retrieve(retrieval_query, self.k)
        # the client's original text is what the prompt answers; only retrieval used the rewrite
        # (a rewritten query's embedding is not the client's: guards must not reuse it)
        vector = retrieval.query_vector if retrieval_query.text == run.query.text else None
        run.retrieval = replace(retrieval, query=run.query, query_vector=vector)
        run.timings["retrieve"] = _ms(started)
        retrieval_for_guards = run.retrieval
        flagged = False
        for guard in self.defense.query_guards:
            verdict = self._guarded(guard.name, run, lambda g=guard: g.check(retrieval_for_guards))  # type: ignore[misc]
            flagged = flagged or verdict.blocked
        if flagged:
            self._record(run, violated=True)
            return self._refusal(run, "blocked")
        return None

    def _decorate(self, run: _Run) -> RetrievalResult | None:
        decorated = run.retrieval
        assert decorated is not None
        for decorator in self.defense.decorators:
            started = _now()
            try:
                decorated = decorator.decorate(decorated)
            except Exception as error:
                verdict = error_verdict(decorator.name, error, fail_closed=self.defense.fail_closed)
                run.verdicts.append(verdict)
                if verdict.blocked:
                    return None
            run.timings[f"decorate:{decorator.name}"] = _ms(started)
        return decorated

    def _generate(self, run: _Run, start: float) -> Iterator[str | Response]:
        decorated = self._decorate(run)
        if decorated is None:
            self._record(run, violated=True)
            yield self._refusal(run, "blocked")
            return
        monitors: list[tuple[str, OutputMonitor]] = []
        for guard in self.defense.output_guards:
            try:
                monitors.append((guard.name, guard.open(decorated)))
            except Exception as error:
                verdict = error_verdict(guard.name, error, fail_closed=self.defense.fail_closed)
                run.verdicts.append(verdict)
                if verdict.blocked:
                    self._record(run, violated=True)
                    yield self._refusal(run, "blocked")
                    return
        holdback = max((monitor.holdback_chars for _, monitor in monitors), default=0)
        request = self.prompt_builder.build(decorated)
        # produced text not yet released; it stays under `holdback` plus one delta, so appending
        # and cutting it costs O(delta) per token, not O(answer) (no rejoin of the whole answer)
        pending = ""
        released = 0  # produced characters already passed on (the produced offset of `pending`)
        withholder = Withholder()
        client_text: list[str] = []
        finish, error_name = "stop", None
        cut_by_limit = False
        halted = False
        halted_by: OutputMonitor | None = None
        generation_started = _now()
        first_token_ms: float | None = None
        deltas = iter(self.generator.stream(request))
        try:
            for delta in deltas:
                check_cancelled()  # a client that left or timed out frees the model within one delta
                if isinstance(delta, StreamEnd):  # empty; says the token limit cut the answer
                    cut_by_limit = cut_by_limit or delta.reason == "length"
                    continue
                if first_token_ms is None:
                    first_token_ms = _ms(generation_started)
                pending += delta
                for name, monitor in monitors:
                    seen = self._observe(name, monitor, delta, run)
                    if seen is not None and seen.blocked:
                        halted, halted_by = True, monitor
                        break
                if halted:
                    finish = "blocked"
                    break
                cut = len(pending) - holdback
                if cut > 0:
                    cut = _release_boundary(pending, cut) if holdback else cut
                    if cut > 0:
                        piece = self._redact(monitors, pending[:cut], released, withholder, run)
                        if piece is None:  # a redactor failed closed: release nothing more
                            finish = "blocked"
                            break
                        pending = pending[cut:]
                        released += cut
                        client_text.append(piece)
                        if piece:
                            yield piece
        except GenerationCancelled:
            finish = "cancelled"
        except Exception as error:  # the generator died mid-stream: end cleanly, say why
            finish, error_name = "error", type(error).__name__
            log.warning("generation failed mid-stream: %s", error_name)
        finally:
            close = getattr(deltas, "close", None)
            if close is not None:
                close()
        run.timings["generate"] = _ms(generation_started)
        if first_token_ms is not None:
            run.timings["first_token"] = first_token_ms
        closing_started = _now()
        for name, monitor in monitors:
            if monitor is halted_by:  # its BLOCK is already recorded; close() only releases it (oracle)
                try:
                    monitor.close()
                except Exception as error:
                    log.warning("monitor %s failed to close: %s", name, type(error).__name__)
                continue
            self._guarded(name, run, monitor.close)
        run.timings["close"] = _ms(closing_started)
        violated = any(v.blocked for v in run.verdicts)
        if violated:
            finish = "blocked"
        elif finish != "error" and pending:
            piece = self._redact(monitors, pending, released, withholder, run)
            if piece is None:
                finish = "blocked"
            else:
                client_text.append(piece)
                if piece:
                    yield piece
        if finish == "stop" and cut_by_limit:
            finish = "length"
        # a withheld span alone is not an intent signal (a small model quotes records for benign
        # users); a guard that saw one says so in its verdict's evidence
        signalled = violated or any(v.evidence.get(INTENT_SIGNAL) for v in run.verdicts)
        # a cancelled answer was never delivered: it is not a query of the user's window
        policy_verdict = None if finish == "cancelled" else self._record(run, violated=signalled)
        if policy_verdict is not None:
            run.verdicts.append(policy_verdict)
        if withholder.withheld_chars:
            run.timings["withheld_chars"] = float(withholder.withheld_chars)
        run.timings["total"] = _ms(start)
        yield Response(
            query=run.query,
            text="".join(client_text),
            retrieval=run.retrieval,
            verdicts=tuple(run.verdicts),
            finish_reason=finish,
            timings_ms=dict(run.timings),
            error=error_name,
        )

    def _observe(self, name: str, monitor: OutputMonitor, delta: str, run: _Run) -> Verdict | None:
        started = _now()
        verdict: Verdict | None
        try:
            verdict = monitor.observe(delta)
        except Exception as error:
            verdict = error_verdict(name, error, fail_closed=self.defense.fail_closed)
        key = f"guard:{name}"
        run.timings[key] = run.timings.get(key, 0.0) + _ms(started)
        if verdict is not None and verdict.blocked:
            run.verdicts.append(verdict)
        return verdict

    def _redact(
        self, monitors: list[tuple[str, OutputMonitor]], text: str, start: int, withholder: Withholder, run: _Run
    ) -> str | None:
        """The text to release for the produced text [start, start + len(text)).

        First the spans that position-based monitors (`SpanRedactor`) withhold are replaced by one
        marker each; then the piece passes through each monitor's `redact`, in defense order (each
        sees the previous one's output). A monitor that raises adds its error verdict and, failing
        closed, withholds the text (None). May run after `close()` for the final flush.
        """
        spans = []
        for name, monitor in monitors:
            withheld = getattr(monitor, "withheld", None)
            if withheld is None:
                continue
            try:
                spans.extend(self._timed(name, run, lambda w=withheld: w(start, start + len(text))))  # type: ignore[misc]
            except Exception as error:
                verdict = error_verdict(name, error, fail_closed=self.defense.fail_closed)
                run.verdicts.append(verdict)
                if verdict.blocked:
                    return None
        text = withholder.apply(text, start, spans)
        for name, monitor in monitors:
            redact = getattr(monitor, "redact", None)
            if redact is None:
                continue
            try:
                text = self._timed(name, run, lambda r=redact, t=text: r(t))  # type: ignore[misc]
            except Exception as error:
                verdict = error_verdict(name, error, fail_closed=self.defense.fail_closed)
                run.verdicts.append(verdict)
                if verdict.blocked:
                    return None
        return text

    @staticmethod
    def _timed(name: str, run: _Run, call: Callable[[], _T]) -> _T:
        """`call()`, its time added to the guard's timing."""
        started = _now()
        try:
            return call()
        finally:
            key = f"guard:{name}"
            run.timings[key] = run.timings.get(key, 0.0) + _ms(started)

    def _record(self, run: _Run, *, violated: bool) -> Verdict | None:
        if self.policy is None:
            return None
        try:
            return self.policy.record(run.query.user_id, violated=violated)
        except Exception as error:
            log.warning("policy store failed: %s", type(error).__name__)
            return error_verdict(self.policy.name, error, fail_closed=self.defense.fail_closed)


def _allow(guard: str) -> Verdict:
    return Verdict(guard, Action.ALLOW, 0.0, 1.0, "user is not blocked")


def _release_boundary(text: str, cut: int) -> int:
    """Move a release point back to just after whitespace, so a redactor never sees half a word.

    Falls back to `cut` when the pending span has no whitespace (long tokens still flow).
    """
    space = max(text.rfind(" ", 0, cut), text.rfind("\n", 0, cut))
    return space + 1 if space >= 0 else cut
