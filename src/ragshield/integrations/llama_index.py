"""LlamaIndex adapters (`pip install 'ragshield[llamaindex]'`).

* `GuardNodePostprocessor` - a node postprocessor: runs ragshield's policy and query guards on
  the retrieved nodes and their scores and, inside a guarded run, returns the nodes with
  canaries inserted.
* `GuardedQueryEngine` - wraps a query engine that uses the postprocessor: checks its answer
  (streamed or whole) with the output guards, returns the refusal when a guard blocks, and
  gives back source nodes WITHOUT the canaries.
* `GuardedChatEngine` (`ragshield.integrations.llama_index_chat`) - the same for chat engines
  (`index.as_chat_engine(chat_mode="context", node_postprocessors=[...])`), whose memory keeps
  what the user was shown, not what the model wrote.
* `RagshieldEmbedding`, `GeneratorLLM` - ragshield's local models as LlamaIndex components.
  The other way round, `Shield.build(embedder=your_embed_model)` lets the guards use your own.

Failing closed. The postprocessor decorates nodes only inside a run opened by
`GuardedQueryEngine` / `GuardedChatEngine`, which check the answer. In any other engine, with
a shield that inserts canaries or checks output, it raises `ConfigError`
(`standalone="raise"`, the default) or, with `standalone="undecorated"`, passes the nodes on
undecorated after the query guards with a `StandaloneRetrievalWarning`.

Scores. Node scores are converted to cosine similarities with `metric`: `cosine` (the default:
LlamaIndex's `SimpleVectorStore`), `l2_squared` (FAISS `IndexFlatL2` through
llama-index-vector-stores-faiss), `inner_product` (FAISS `IndexFlatIP`), ... (see
`ragshield.integrations.store_scores`); scores that cannot be cosines of a top-k raise `ConfigError`.
Put the postprocessor first, before any reranker that replaces scores.

A streamed answer's `metadata["ragshield"]` reads `{"blocked": None, "stage": None}` until the
stream is consumed, then says whether it was halted. All checks run through `Shield`, that is
through `RagPipeline`. Copy-paste examples: docs/adapters.md.

```python
shield = Shield.build("intent+canary-rag", embedder=embed_model)      # your LlamaIndex embedding
engine = index.as_query_engine(llm=llm, similarity_top_k=3,
                               node_postprocessors=[GuardNodePostprocessor(shield=shield)])
guarded = GuardedQueryEngine(engine, shield, user_id="u-42")
print(guarded.query("What helps a stiff neck?"))
```
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Iterator
from typing import Any, Literal

from ragshield.errors import ConfigError, missing_extra
from ragshield.integrations.runs import (
    Standalone,
    StandaloneRetrievalWarning,
    guard_retrieval,
    guarded_run,
    require_guarded_retrieval,
)
from ragshield.integrations.shield import GuardBlockedError, Shield, scored_chunks
from ragshield.integrations.store_scores import check_similarities, to_cosine
from ragshield.integrations.streaming import OnBlock, release
from ragshield.rag.embedding import embed_documents
from ragshield.types import ChatMessage, Chunk, GenerationRequest, Query, RetrievalResult
from ragshield.types import Response as ShieldResponse

try:
    from llama_index.core.base.base_query_engine import BaseQueryEngine
    from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
    from llama_index.core.base.response.schema import RESPONSE_TYPE, Response, StreamingResponse
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.llms import CustomLLM
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import NodeWithScore, QueryBundle
    from pydantic import ConfigDict, PrivateAttr
except ImportError as error:  # pragma: no cover - depends on the install
    raise missing_extra("llama-index-core", "llamaindex") from error

__all__ = [
    "GeneratorLLM",
    "GuardBlockedError",
    "GuardNodePostprocessor",
    "GuardedQueryEngine",
    "RagshieldEmbedding",
    "StandaloneRetrievalWarning",
]


class GuardNodePostprocessor(BaseNodePostprocessor):
    """Query guards and canaries on retrieved nodes.

    Args:
        shield: the guards (`Shield.build(...)` or `Shield.from_pipeline(...)`).
        user_id: the policy's user id when the guarded engine call does not name one.
        on_block: `raise` (`GuardBlockedError`, the default; the guarded engines turn it into
            the refusal) or `empty` (no nodes).
        metric: what the node scores are (`cosine`, the default, for `SimpleVectorStore`;
            `l2_squared` for FAISS `IndexFlatL2`; see `ragshield.integrations.store_scores.METRICS`).
        standalone: outside a guarded engine, with a shield that inserts canaries or checks
            output: `raise` (`ConfigError`, the default) or `undecorated` (query guards only,
            nodes without canaries, a `StandaloneRetrievalWarning`).

    Raises (when the engine runs it):
        ConfigError: a node without a score, scores that do not fit `metric`, or a standalone
            call that `standalone="raise"` refuses.
        GuardBlockedError: a query guard or the policy blocked the query (`on_block="raise"`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    shield: Shield
    user_id: str = "anonymous"
    on_block: Literal["raise", "empty"] = "raise"
    metric: Literal["cosine", "cosine_distance", "l2_squared", "l2", "inner_product", "inner_product_distance"] = (
        "cosine"
    )
    standalone: Standalone = "raise"

    @classmethod
    def class_name(cls) -> str:
        return "RagshieldGuardNodePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise GuardBlockedError(
                "the ragshield postprocessor needs the query (call it from a query engine)",
                ShieldResponse(query=Query("(none)"), text="", retrieval=None, finish_reason="refused"),
            )
        if any(item.score is None for item in nodes):
            raise ConfigError("GuardNodePostprocessor needs scored nodes (a vector retriever); a node had no score")
        originals = {item.node.node_id: item for item in nodes}
        similarities = [to_cosine(float(item.score or 0.0), self.metric) for item in originals.values()]
        check_similarities(similarities, self.metric)
        hits = scored_chunks(
            (
                Chunk(
                    id=item.node.node_id, doc_id=item.node.ref_doc_id or item.node.node_id, text=item.node.get_content()
                ),
                similarity,
            )
            for item, similarity in zip(originals.values(), similarities, strict=True)
        )
        decision = guard_retrieval(
            self.shield,
            query_bundle.query_str,
            hits,
            user_id=self.user_id,
            standalone=self.standalone,
            component="GuardNodePostprocessor",
        )
        if decision.blocked or decision.decorated is None:
            if self.on_block == "raise":
                raise GuardBlockedError("the query was blocked by a guard", decision.response)
            return []
        decorated: list[NodeWithScore] = []
        for hit in decision.decorated.hits:
            node = originals[hit.chunk.id].node.model_copy()
            node.set_content(hit.chunk.text)
            decorated.append(NodeWithScore(node=node, score=hit.similarity))
        return decorated


def stream_outcome(final: ShieldResponse) -> dict[str, Any]:
    """The `metadata["ragshield"]` of a streamed answer once its final response is known."""
    blocked = final.finish_reason == "blocked"
    return {"blocked": blocked, "stage": "output" if blocked else None}


def undecorated_nodes(nodes: list[NodeWithScore], run_retrievals: list[RetrievalResult]) -> list[NodeWithScore]:
    """Source nodes with their original text (no canaries), for showing sources to users."""
    texts = {hit.chunk.id: hit.chunk.text for result in run_retrievals for hit in result.hits}
    cleaned: list[NodeWithScore] = []
    for item in nodes:
        node = item.node.model_copy()
        if node.node_id in texts:
            node.set_content(texts[node.node_id])
        cleaned.append(NodeWithScore(node=node, score=item.score))
    return cleaned


class GuardedQueryEngine(BaseQueryEngine):
    """A query engine whose answers pass ragshield's output guards.

    `engine` must run `GuardNodePostprocessor` (so this run's canaries are known). A query
    blocked at retrieval or an answer halted by a guard returns the refusal
    (`on_block="refuse"`, default) or raises `GuardBlockedError` (`on_block="raise"`); the
    response's `metadata["ragshield"]` says whether and where it was blocked.
    """

    def __init__(
        self,
        engine: BaseQueryEngine,
        shield: Shield,
        *,
        user_id: str = "anonymous",
        on_block: OnBlock = "refuse",
    ) -> None:
        super().__init__(callback_manager=engine.callback_manager)
        self.engine = engine
        self.shield = shield
        self.user_id = user_id
        self.on_block = on_block

    def for_user(self, user_id: str) -> GuardedQueryEngine:
        """The same engine answering for another user (the blocking policy counts per user)."""
        return GuardedQueryEngine(self.engine, self.shield, user_id=user_id, on_block=self.on_block)

    def _blocked(self, response: ShieldResponse, stage: str) -> Response:
        if self.on_block == "raise":
            raise GuardBlockedError(f"blocked by a guard at the {stage} stage", response)
        return Response(self.shield.refusal, metadata={"ragshield": {"blocked": True, "stage": stage}})

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        with guarded_run(self.user_id) as run:
            try:
                answer = self.engine.query(query_bundle)
            except GuardBlockedError as blocked:
                return self._blocked(blocked.response, "query")
        require_guarded_retrieval(run, self.shield, "GuardedQueryEngine")
        query = Query(query_bundle.query_str, user_id=self.user_id)
        decorated = run.decorated(query)
        originals = run.originals()
        if isinstance(answer, StreamingResponse):
            # unknown until the stream is consumed; `outcome` fills it in at the end
            status: dict[str, Any] = {"blocked": None, "stage": None}
            return StreamingResponse(
                response_gen=self._monitored(decorated, answer.response_gen, status),
                source_nodes=undecorated_nodes(answer.source_nodes, originals),
                metadata={"ragshield": status},
            )
        checked = self.shield.check_output(decorated, str(getattr(answer, "response", "") or ""))
        if checked.finish_reason in {"blocked", "refused"}:
            return self._blocked(checked, "output")
        return Response(
            checked.text,
            source_nodes=undecorated_nodes(list(answer.source_nodes), originals),
            metadata={"ragshield": {"blocked": False, "stage": None}},
        )

    def _monitored(
        self, decorated: RetrievalResult, deltas: Iterator[str], status: dict[str, Any]
    ) -> Generator[str, None, None]:
        yield from release(
            self.shield.monitor(decorated, deltas),
            refusal=self.shield.refusal,
            on_block=self.on_block,
            on_final=lambda final: status.update(stream_outcome(final)),
        )

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        return await asyncio.to_thread(self._query, query_bundle)

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {"engine": self.engine}


class RagshieldEmbedding(BaseEmbedding):
    """A ragshield `Embedder` (e.g. the bundled MiniLM) as a LlamaIndex embedding model."""

    _embedder: Any = PrivateAttr()

    def __init__(self, embedder: Any, **kwargs: Any) -> None:
        super().__init__(model_name=getattr(embedder, "name", "ragshield"), **kwargs)
        self._embedder = embedder

    @property
    def embedder(self) -> Any:
        """The ragshield `Embedder` inside (`as_embedder` unwraps it, so guards use its query side)."""
        return self._embedder

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._embedder.embed(texts)]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        # indexed text takes the embedder's document side (e5's "passage: "), queries `embed`
        return [[float(x) for x in row] for row in embed_documents(self._embedder, texts)]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


class GeneratorLLM(CustomLLM):
    """A ragshield `Generator` (SmolLM2 through llama.cpp, an OpenAI-compatible endpoint, ...) as a
    LlamaIndex LLM; prompts go to the model as completion requests, or as one user chat message
    with `chat_mode=True`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    generator: Any
    max_tokens: int = 256
    context_window: int = 2048
    chat_mode: bool = False

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.max_tokens,
            model_name=str(getattr(self.generator, "name", "ragshield")),
        )

    def _request(self, prompt: str) -> GenerationRequest:
        return GenerationRequest(
            messages=(ChatMessage("user", prompt),),
            prompt=None if self.chat_mode else prompt,
            max_tokens=self.max_tokens,
        )

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="".join(self.generator.stream(self._request(prompt))))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        def deltas() -> CompletionResponseGen:
            text = ""
            for delta in self.generator.stream(self._request(prompt)):
                if not delta:  # e.g. the empty StreamEnd marker: nothing for the framework
                    continue
                text += delta
                yield CompletionResponse(text=text, delta=delta)

        return deltas()
