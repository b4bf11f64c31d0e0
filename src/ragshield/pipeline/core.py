"""`RagPipeline`: the only orchestration of the RAG flow.

    Query -> (policy) -> rewriters -> Retriever -> QueryGuards -> ContextDecorators
          -> PromptBuilder -> Generator.stream -> OutputMonitors -> (policy) -> Response

The CLI, the HTTP service, the framework adapters and the evaluation harness all call
`answer` or `stream`; none re-implements the flow. Each stage is a small method; errors,
timings and the user's policy record each go one way (`ragshield.pipeline.run`): any part
of the defense that raises fails closed (blocks, and counts as a violation like any block)
unless the defense says `fail_closed=False`; its verdict says which.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ragshield.errors import InvalidQueryError
from ragshield.generators.base import GenerationCancelled, Generator, StreamEnd, check_cancelled
from ragshield.guards.base import NO_DEFENSE, Defense, OutputMonitor, ViolationPolicy, flags_request
from ragshield.pipeline.output import OutputStage
from ragshield.pipeline.run import Failed, Halt, Run, elapsed_ms
from ragshield.pipeline.tracing import RequestSpans
from ragshield.rag.prompting import PromptBuilder
from ragshield.rag.retriever import Retriever
from ragshield.types import Action, GenerationRequest, Query, Response, RetrievalResult, Verdict

log = logging.getLogger(__name__)

DEFAULT_REFUSAL = "I can't help with that request."
MAX_QUERY_CHARS = 8000


def validate_query(query: Query | str, max_chars: int = MAX_QUERY_CHARS) -> Query:
    """A `Query` from a string or query; raises `InvalidQueryError` when empty or too long."""
    if isinstance(query, str):
        query = Query(query)
    if not isinstance(query.text, str) or not query.text.strip():
        raise InvalidQueryError("the query is empty; send a question")
    if len(query.text) > max_chars:
        raise InvalidQueryError(f"the query has {len(query.text)} characters; the limit is {max_chars}")
    return query


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
        tracer_provider: the OpenTelemetry tracer provider for the stage spans (None: the
            global one; without a configured SDK no span is created).
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
        tracer_provider: Any = None,
    ) -> None:
        self.retriever = retriever
        self.generator = generator
        self.defense = defense
        self.prompt_builder = prompt_builder or PromptBuilder()
        self.k = k
        self.policy = policy
        self.refusal = refusal
        self.max_query_chars = max_query_chars
        self.tracer_provider = tracer_provider

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
            tracer_provider=self.tracer_provider,
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
        run = self._run(query)
        try:
            refused = self._before_generation(run)
            if refused is not None:
                yield refused
                return
            yield from self._generate(run)
        finally:
            run.spans.end()  # a stream abandoned before its Response still ends its span

    def screen(self, query: Query | str) -> Response:
        """Run only the stages before generation (policy, rewriters, retrieval, query guards).

        Returns the refusal (`finish_reason` `blocked` or `refused`) when the query would be
        refused, else a Response with `finish_reason` `screened`, empty text, the allow
        verdicts and the stage timings: nothing was generated. An allowed query is not
        recorded in the per-user policy (only `answer`/`stream` finish it).

        Raises:
            InvalidQueryError: the query is empty or longer than `max_query_chars`.
        """
        run = self._run(query)
        try:
            return self._before_generation(run) or run.response("", "screened")
        finally:
            run.spans.end()

    def _run(self, query: Query | str) -> Run:
        query = validate_query(query, self.max_query_chars)
        spans = RequestSpans(query, self.defense.name, tracer_provider=self.tracer_provider)
        return Run(query, fail_closed=self.defense.fail_closed, spans=spans)

    # -- stages before generation --------------------------------------------------------

    def _before_generation(self, run: Run) -> Response | None:
        """Policy, rewriting, retrieval, query guards; the refusal when the query is refused."""
        try:
            self._check_policy(run)
        except Halt:  # a blocked user (or a failing store, closed): not a query of the window
            return self._refusal(run, "refused", record=False)
        try:
            retrieval_query = self._rewrite(run)
            self._retrieve(run, retrieval_query)
            self._check_query(run)
        except Halt:
            return self._refusal(run, "blocked")
        return None

    def _check_policy(self, run: Run) -> None:
        policy = self.policy
        if policy is None:
            return
        with run.stage("policy"):
            user = run.query.user_id
            verdict = run.check(policy.name, _policy_verdict, policy, user)
            if verdict.blocked:
                raise Halt(policy.name)

    def _rewrite(self, run: Run) -> Query:
        """The query retrieval uses: the client's, rewritten by each rewriter in turn."""
        retrieval_query = run.query
        if not self.defense.rewriters:
            return retrieval_query
        with run.stage("rewrite"):
            for rewriter in self.defense.rewriters:
                name, current = rewriter.name, retrieval_query
                rewritten = run.attempt("rewrite", name, rewriter.rewrite, current)
                retrieval_query = current if isinstance(rewritten, Failed) else rewritten
        return retrieval_query

    def _retrieve(self, run: Run, retrieval_query: Query) -> None:
        with run.stage("retrieve", timed=True) as span:
            retrieval = self.retriever.retrieve(retrieval_query, self.k)
            span.set("retrieval.hits", len(retrieval.hits))
        # the client's original text is what the prompt answers; only retrieval used the rewrite
        # (a rewritten query's embedding is not the client's: guards must not reuse it)
        vector = retrieval.query_vector if retrieval_query.text == run.query.text else None
        run.retrieval = replace(retrieval, query=run.query, query_vector=vector)

    def _check_query(self, run: Run) -> None:
        """Every query guard gives its verdict (evidence), then any block refuses the query."""
        retrieval = run.retrieval
        assert retrieval is not None
        with run.stage("query_guards"):
            blocked, signals = False, []
            for guard in self.defense.query_guards:
                verdict = run.check(guard.name, guard.check, retrieval)
                blocked = verdict.blocked or blocked
                if flags_request(verdict):
                    signals.append(guard.name)
            if blocked:
                raise Halt("query guards")
        if signals:  # what the decorators see: a flagged request may get more (shield's canaries)
            run.retrieval = replace(retrieval, signals=tuple(signals))

    def _refusal(self, run: Run, reason: str, *, record: bool = True) -> Response:
        if record:
            run.record_policy(self.policy)
        return run.response(self.refusal, reason)

    # -- generation ----------------------------------------------------------------------

    def _generate(self, run: Run) -> Iterator[str | Response]:
        try:
            decorated = self._decorate(run)
            output = self._open(run, decorated)
        except Halt:
            yield self._refusal(run, "blocked")
            return
        with run.stage("generate") as span:
            stream = _GenerationStream(self.generator, self.prompt_builder.build(decorated), output, run)
            yield from stream.released()
            span.set("finish_reason", stream.finish)
            span.set("released_chars", len(output.text))
        yield from self._finish(run, output, stream)

    def _finish(self, run: Run, output: OutputStage, stream: _GenerationStream) -> Iterator[str | Response]:
        """Close the monitors, release the rest when nothing blocked, record the request, respond."""
        with run.stage("close", timed=True):
            output.close()
        finish = "blocked" if run.blocked else stream.finish
        if finish not in ("blocked", "error"):
            try:
                piece = output.flush()
            except Halt:
                finish = "blocked"
            else:
                if piece:
                    yield piece
        if finish == "stop" and stream.cut_by_limit:
            finish = "length"
        if finish != "cancelled":  # a cancelled answer was never delivered: not a query of the window
            run.record_policy(self.policy)
        if output.withholder.withheld_chars:
            run.timings["withheld_chars"] = float(output.withholder.withheld_chars)
        yield run.response(output.text, finish, error=stream.error)

    def _decorate(self, run: Run) -> RetrievalResult:
        decorated = run.retrieval
        assert decorated is not None
        if not self.defense.decorators:
            return decorated
        with run.stage("decorate"):
            for decorator in self.defense.decorators:
                current = decorated
                result = run.attempt("decorate", decorator.name, decorator.decorate, current)
                decorated = current if isinstance(result, Failed) else result
        return decorated

    def _open(self, run: Run, decorated: RetrievalResult) -> OutputStage:
        monitors: list[tuple[str, OutputMonitor]] = []
        with run.stage("open"):
            for guard in self.defense.output_guards:
                monitor = run.attempt("guard", guard.name, guard.open, decorated)
                if not isinstance(monitor, Failed):
                    monitors.append((guard.name, monitor))
        return OutputStage(run, monitors)


class _GenerationStream:
    """The generator's deltas through the output stage: released text, then how it ended."""

    def __init__(self, generator: Generator, request: GenerationRequest, output: OutputStage, run: Run) -> None:
        self.generator, self.request, self.output, self.run = generator, request, output, run
        self.finish: str = "stop"
        self.error: str | None = None  # the exception type when the generator died
        self.cut_by_limit = False

    def released(self) -> Iterator[str]:
        """The pieces released while the model generates; sets `finish` / `error` / `cut_by_limit`."""
        started = time.perf_counter()
        deltas = iter(self.generator.stream(self.request))
        try:
            for delta in deltas:
                check_cancelled()  # a client that left or timed out frees the model within one delta
                if isinstance(delta, StreamEnd):  # empty; says the token limit cut the answer
                    self.cut_by_limit = self.cut_by_limit or delta.reason == "length"
                    continue
                if "first_token" not in self.run.timings:
                    self.run.timings["first_token"] = elapsed_ms(started)
                piece = self.output.feed(delta)
                if piece:
                    yield piece
        except Halt:  # a monitor blocked or failed closed: its verdict is recorded
            self.finish = "blocked"
        except GenerationCancelled:
            self.finish = "cancelled"
        except Exception as error:  # the generator died mid-stream: end cleanly, say why
            self.finish, self.error = "error", type(error).__name__
            log.warning("generation failed mid-stream: %s", self.error)
        finally:
            close = getattr(deltas, "close", None)
            if close is not None:
                close()
            self.run.add_time("generate", started)


def _policy_verdict(policy: ViolationPolicy, user_id: str) -> Verdict:
    """The policy's BLOCK verdict while the user is blocked, else an ALLOW verdict."""
    return policy.blocked_verdict(user_id) or Verdict(policy.name, Action.ALLOW, 0.0, 1.0, "user is not blocked")
