"""`Shield`: ragshield's guards for applications that retrieve and generate themselves.

The guard endpoints of the service and the LangChain / LlamaIndex adapters all use it.
It never re-implements the flow: each check runs a `RagPipeline` whose retriever returns
the retrieval the application already made and whose generator replays the text the
application's model produced, so policy checks, fail-closed handling, holdback and
redaction behave exactly as in the full pipeline.

* `check_query(query, hits)` - policy and query guards, then the context decorators
  (canaries); returns the verdicts and the decorated context to give the model.
* `check_output(decorated, text)` / `monitor(decorated, deltas)` - the output guards
  (canary scan, PII redaction) over the model's answer, whole or streamed.

Per-user counting: `check_query` records every query in the blocking policy (violated or
not); the output checks record violations only, so a query is counted once when clean.
A query whose output is flagged adds a second (violating) entry to the window, which
blocks slightly sooner than the integrated pipeline would: the conservative side.

The framework adapters link their query side to their output side through
`ragshield.integrations.runs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ragshield.errors import ConfigError, RagShieldError
from ragshield.guards.base import Defense, ViolationPolicy
from ragshield.guards.factory import DefenseContext, build_defense
from ragshield.integrations.embeddings import as_embedder
from ragshield.pipeline import DEFAULT_REFUSAL, MAX_QUERY_CHARS, RagPipeline
from ragshield.rag.retriever import Retriever
from ragshield.types import Chunk, GenerationRequest, Query, Response, RetrievalResult, ScoredChunk, Verdict

if TYPE_CHECKING:
    from ragshield.generators.base import Generator


class GuardBlockedError(RagShieldError):
    """A guard blocked the query or the answer. `response` holds the verdicts (no secrets)."""

    def __init__(self, message: str, response: Response) -> None:
        super().__init__(message)
        self.response = response

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        return self.response.verdicts


def scored_chunks(items: Iterable[tuple[Chunk, float]]) -> tuple[ScoredChunk, ...]:
    """Hits sorted by similarity (descending; cosine, higher = closer) with ranks 0..n-1."""
    ordered = sorted(items, key=lambda item: -float(item[1]))
    return tuple(ScoredChunk(chunk, float(similarity), rank) for rank, (chunk, similarity) in enumerate(ordered))


class _GivenRetrieval(Retriever):
    """A retriever that returns a retrieval the application already made (no embedder, no index)."""

    def __init__(self, result: RetrievalResult) -> None:  # no super().__init__: nothing to search
        self._result = result

    def retrieve(self, query: Query, k: int) -> RetrievalResult:
        return replace(self._result, query=query)


class _Replay:
    """A generator that replays deltas another model already produced (nothing is generated)."""

    name = "replay"

    def __init__(self, deltas: Iterable[str]) -> None:
        self._deltas = deltas

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        return iter(self._deltas)


class _Recording:
    """Wraps a `ContextDecorator` to keep the decorated retrieval it returns (for this call only)."""

    def __init__(self, decorator: Any, sink: list[RetrievalResult]) -> None:
        self._decorator = decorator
        self._sink = sink
        self.name: str = decorator.name

    def decorate(self, retrieval: RetrievalResult) -> RetrievalResult:
        decorated: RetrievalResult = self._decorator.decorate(retrieval)
        self._sink.append(decorated)
        return decorated


def recording_defense(defense: Defense, sink: list[RetrievalResult]) -> Defense:
    """The same defense whose decorators also append their output to `sink`.

    The pipeline's `Response.retrieval` is the undecorated retrieval; callers that must know
    the inserted canaries (to hand the decorated context to a model, or to scrub them from
    an audit line) read the last item of `sink`.
    """
    if not defense.decorators:
        return defense
    return replace(defense, decorators=tuple(_Recording(d, sink) for d in defense.decorators))


class _ViolationsOnly:
    """A policy view that records violations only (the query itself was counted at query time)."""

    def __init__(self, policy: ViolationPolicy) -> None:
        self._policy = policy
        self.name = policy.name

    def blocked_verdict(self, user_id: str) -> Verdict | None:
        return self._policy.blocked_verdict(user_id)

    def record(self, user_id: str, *, violated: bool) -> Verdict | None:
        return self._policy.record(user_id, violated=True) if violated else None


@dataclass(frozen=True)
class QueryDecision:
    """The outcome of `Shield.check_query`.

    `response` carries the verdicts and timings (`finish_reason` is `blocked` or `refused`
    when the query must not be answered). `decorated` is the context to give the model: the
    application's chunks with canaries inserted and recorded in `markers`; None when blocked.
    Treat `decorated` as secret: it holds the canaries, never show it to the end user.
    """

    response: Response
    decorated: RetrievalResult | None

    @property
    def blocked(self) -> bool:
        return self.decorated is None or self.response.finish_reason in {"blocked", "refused"}

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        return self.response.verdicts


class Shield:
    """Query and output guards for a RAG stack ragshield does not own.

    Args:
        defense: the parts to apply (`build_defense`, or `Shield.build`).
        policy: per-user blocking state (None: no blocking).
        refusal: the text a refused query receives.
        max_query_chars: longer queries raise `InvalidQueryError`.
    """

    def __init__(
        self,
        defense: Defense,
        *,
        policy: ViolationPolicy | None = None,
        refusal: str = DEFAULT_REFUSAL,
        max_query_chars: int = MAX_QUERY_CHARS,
    ) -> None:
        self.defense = defense
        self.policy = policy
        self.refusal = refusal
        self.max_query_chars = max_query_chars
        # rewriters change the query before retrieval; the application has already retrieved
        self._query_part = Defense(
            name=defense.name,
            query_guards=defense.query_guards,
            decorators=defense.decorators,
            fail_closed=defense.fail_closed,
        )
        self._output_part = Defense(
            name=defense.name, output_guards=defense.output_guards, fail_closed=defense.fail_closed
        )

    @classmethod
    def from_pipeline(cls, pipeline: RagPipeline) -> Shield:
        """The guards of an existing pipeline (same defense, policy and refusal)."""
        return cls(
            pipeline.defense, policy=pipeline.policy, refusal=pipeline.refusal, max_query_chars=pipeline.max_query_chars
        )

    @classmethod
    def build(
        cls,
        spec: str,
        *,
        embedder: Any = None,
        generator: Generator | None = None,
        oracle_generator: Generator | None = None,
        calibration: Sequence[RetrievalResult] = (),
        target_fpr: float = 0.01,
        policy: ViolationPolicy | None = None,
        fail_closed: bool = True,
        k: int = 3,
        params: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Shield:
        """A shield for registered defenses (`rag-ct+canary-rag`, see `ragshield list defenses`).

        `embedder` is a ragshield `Embedder` or the application's own LangChain `Embeddings` /
        LlamaIndex embedding model (`ragshield.integrations.embeddings.as_embedder`).

        Raises:
            UnknownNameError: a defense name is not registered.
            ConfigError: `embedder` is none of the accepted kinds, or a defense needs one and
                none was given.
        """
        own_embedder = as_embedder(embedder)
        context = DefenseContext(
            embedder=own_embedder,
            generator=generator,
            oracle_generator=oracle_generator,
            k=k,
            calibration=tuple(calibration),
            target_fpr=target_fpr,
            policy=policy,
            fail_closed=fail_closed,
        )
        try:
            defense = build_defense(spec, context, params)
        except ConfigError as error:
            if own_embedder is None and "embedder" in str(error):
                raise ConfigError(
                    f"defense {spec!r} needs an embedding model: pass Shield.build(..., embedder=...) with a "
                    "ragshield Embedder, your LangChain Embeddings or your LlamaIndex embedding model"
                ) from error
            raise
        return cls(defense, policy=policy)

    @property
    def needs_monitor(self) -> bool:
        """True when the defense inserts canaries or checks output: the context it decorates may
        only reach a model whose answer goes through `monitor` in the same run."""
        return bool(self.defense.decorators or self.defense.output_guards)

    def _pipeline(
        self, retrieval: RetrievalResult, defense: Defense, generator: Any, policy: ViolationPolicy | None
    ) -> RagPipeline:
        return RagPipeline(
            _GivenRetrieval(retrieval),
            generator,
            defense=defense,
            k=max(1, len(retrieval.hits)),
            policy=policy,
            refusal=self.refusal,
            max_query_chars=self.max_query_chars,
        )

    def check_query(self, query: Query | str, hits: Sequence[ScoredChunk], *, decorate: bool = True) -> QueryDecision:
        """Policy check, query guards and context decorators for one query and its retrieved hits.

        `hits` carry cosine similarities (higher = closer); `scored_chunks` builds them.
        With `decorate=False` the decorators (canaries) are skipped and `decorated` is the
        retrieval as given: for context that no output monitor will watch.

        Raises:
            InvalidQueryError: the query is empty or too long.
        """
        query = Query(query) if isinstance(query, str) else query
        retrieval = RetrievalResult(query=query, hits=tuple(hits))
        sink: list[RetrievalResult] = []
        part = self._query_part if decorate else replace(self._query_part, decorators=())
        pipeline = self._pipeline(retrieval, recording_defense(part, sink), _Replay(()), self.policy)
        response = pipeline.answer(query)
        if response.finish_reason in {"blocked", "refused"}:
            return QueryDecision(response, None)
        decorated = sink[-1] if sink else (response.retrieval or retrieval)
        return QueryDecision(response, decorated)

    def monitor(self, decorated: RetrievalResult, deltas: Iterable[str]) -> Iterator[str | Response]:
        """Stream the model's answer through the output guards: yields the text that may be shown
        (withheld until checked, redacted where a guard redacts), then the final `Response`.

        `decorated` is `QueryDecision.decorated` (the context the model answered from). A
        `Response` with `finish_reason == "blocked"` means the answer was halted.
        """
        policy = None if self.policy is None else _ViolationsOnly(self.policy)
        pipeline = self._pipeline(decorated, self._output_part, _Replay(deltas), policy)
        return pipeline.stream(decorated.query)

    def check_output(self, decorated: RetrievalResult, text: str) -> Response:
        """`monitor` over a whole answer; `Response.text` is what may be shown."""
        response: Response | None = None
        for item in self.monitor(decorated, (text,)):
            if isinstance(item, Response):
                response = item
        assert response is not None  # the pipeline always ends with a Response
        return response
