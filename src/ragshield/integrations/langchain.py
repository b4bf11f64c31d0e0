"""LangChain adapters (`pip install 'ragshield[langchain]'`).

* `GuardedRetriever` - a `BaseRetriever` that retrieves with scores (from a vector store, or
  from another retriever plus an embeddings model), converts them to cosine similarities for
  the store's metric, runs ragshield's policy and query guards (RAG-CT, intent, ...) and, inside
  a `GuardedChain` run, returns the documents with canaries inserted.
* `GuardedChain` - a `Runnable` around a chain that uses a `GuardedRetriever`: it streams the
  chain's answer through the output guards (canary monitor, PII redaction), withholding text
  until it is checked, and stops the stream (and the model) when a guard blocks. `stream`,
  `invoke`, `batch` and their async forms `astream`, `ainvoke`, `abatch` all stream and guard.
* `RagshieldEmbeddings`, `GeneratorLLM` - ragshield's local models (MiniLM, SmolLM2 through
  llama.cpp, or any ragshield `Generator`) as LangChain components. The other way round,
  `Shield.build(embedder=your_langchain_embeddings)` lets the guards use your own model.

Failing closed. Canaries only work when the answer built on them is checked, so the retriever
hands out decorated documents only inside a `GuardedChain` run (the run links the retriever to
the chain's output monitor). Used on its own with a shield that inserts canaries or checks
output, it raises `ConfigError` (`standalone="raise"`, the default), or with
`standalone="undecorated"` returns the undecorated documents after the query guards and warns
(`StandaloneRetrievalWarning`): nothing checks that answer.

Scores. The guards read cosine similarities (higher = closer). `metric="auto"` (the default)
reads the store's metric (`InMemoryVectorStore`: cosine; FAISS: its distance strategy; Chroma:
its `hnsw:space`) and raises for a store that does not say; name it otherwise (`cosine`,
`cosine_distance`, `l2_squared`, `l2`, `inner_product`, `inner_product_distance`; see
`ragshield.integrations.store_scores`). Distances convert exactly for unit-length embeddings.

All checks run through `Shield`, that is through `RagPipeline`. Verdict scores are higher =
more suspicious. Copy-paste examples: docs/adapters.md.

```python
shield = Shield.build("intent+canary-rag", embedder=embeddings)      # your LangChain Embeddings
retriever = GuardedRetriever(shield=shield, vectorstore=store, k=3)
chain = GuardedChain(({"context": retriever | join, "question": RunnablePassthrough()}
                      | prompt | llm | StrOutputParser()), shield)
async for text in chain.astream("What helps a stiff neck?", {"configurable": {"user_id": "u-42"}}):
    print(text, end="")
```
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal

import numpy as np

from ragshield.errors import ConfigError, missing_extra
from ragshield.integrations.runs import (
    CURRENT_RUN,
    GuardedRun,
    Standalone,
    StandaloneRetrievalWarning,
    guard_retrieval,
    guarded_run,
    require_guarded_retrieval,
)
from ragshield.integrations.shield import GuardBlockedError, Shield, scored_chunks
from ragshield.integrations.store_scores import check_similarities, resolve_metric, to_cosine
from ragshield.integrations.streaming import OnBlock, amonitor, arelease, release
from ragshield.rag.embedding import embed_documents
from ragshield.types import ChatMessage, Chunk, GenerationRequest, Query, RetrievalResult, ScoredChunk

try:
    from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models.llms import LLM
    from langchain_core.outputs import GenerationChunk
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable, RunnableConfig
    from langchain_core.vectorstores import VectorStore
    from pydantic import ConfigDict
except ImportError as error:  # pragma: no cover - depends on the install
    raise missing_extra("langchain-core", "langchain") from error

__all__ = [
    "GeneratorLLM",
    "GuardBlockedError",
    "GuardedChain",
    "GuardedRetriever",
    "RagshieldEmbeddings",
    "StandaloneRetrievalWarning",
]

SCORE_KEYS = ("similarity", "score", "relevance_score")


def _chunk_id(document: Document) -> str:
    if document.id:
        return str(document.id)
    for key in ("id", "chunk_id", "doc_id"):
        if document.metadata.get(key) is not None:
            return str(document.metadata[key])
    return "sha256:" + hashlib.sha256(document.page_content.encode("utf-8")).hexdigest()[:16]


def _cosine(embeddings: Embeddings, query: str, documents: Sequence[Document]) -> list[float]:
    vectors = np.asarray(embeddings.embed_documents([d.page_content for d in documents]), dtype=np.float64)
    target = np.asarray(embeddings.embed_query(query), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(target) or 1.0)
    norms[norms == 0] = 1.0
    return [float(v) for v in (vectors @ target) / norms]


class GuardedRetriever(BaseRetriever):
    """Retrieves top-k documents WITH cosine similarities and puts them through ragshield's guards.

    Args:
        shield: the guards (`Shield.build("rag-ct+canary-rag", ...)` or `Shield.from_pipeline`).
        vectorstore: searched with `similarity_search_with_score` (preferred: exact scores).
        retriever: any other retriever; its documents are scored with `embeddings` (exact
            cosine), or read from `metadata["similarity" | "score" | "relevance_score"]`.
        embeddings: the embeddings model for `retriever` scoring.
        k: documents per query.
        metric: what the store's scores are: `auto` (read from the store; `similarity` metadata
            counts as cosine), or one of `ragshield.integrations.store_scores.METRICS` (`cosine`,
            `cosine_distance`, `l2_squared`, `l2`, `inner_product`, `inner_product_distance`).
        user_id: the policy's user id when the run does not name one (`GuardedChain` config
            `{"configurable": {"user_id": ...}}`).
        on_block: `raise` (`GuardBlockedError`, the default) or `empty` (no documents).
        standalone: outside a `GuardedChain` run, with a shield that inserts canaries or checks
            output: `raise` (`ConfigError`, the default) or `undecorated` (query guards only,
            documents without canaries, a `StandaloneRetrievalWarning`).

    Inside a `GuardedChain` run the returned documents carry canaries: they go to the model
    only, and the chain checks the answer. Metadata gains `ragshield_chunk_id` and
    `ragshield_similarity` (cosine, higher = closer).

    Raises (on `invoke`):
        ConfigError: no scores, a metric that cannot be read or does not fit the scores, or a
            standalone call that `standalone="raise"` refuses.
        GuardBlockedError: a query guard or the policy blocked the query (`on_block="raise"`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    shield: Shield
    vectorstore: VectorStore | None = None
    retriever: BaseRetriever | None = None
    embeddings: Embeddings | None = None
    k: int = 3
    metric: Literal[
        "auto", "cosine", "cosine_distance", "l2_squared", "l2", "inner_product", "inner_product_distance"
    ] = "auto"
    user_id: str = "anonymous"
    on_block: Literal["raise", "empty"] = "raise"
    standalone: Standalone = "raise"

    def _scored(self, query: str) -> list[tuple[Document, float]]:
        """(document, cosine similarity) in the store's rank order."""
        if self.vectorstore is not None:
            metric = resolve_metric(self.metric, self.vectorstore)
            pairs = [
                (document, to_cosine(score, metric))
                for document, score in self.vectorstore.similarity_search_with_score(query, k=self.k)
            ]
        elif self.retriever is not None:
            documents = self.retriever.invoke(query)[: self.k]
            if self.embeddings is not None:
                metric = "cosine"
                pairs = list(zip(documents, _cosine(self.embeddings, query, documents), strict=True))
            else:
                metric, pairs = self._metadata_scores(documents)
        else:
            raise ConfigError("GuardedRetriever needs vectorstore=... or retriever=...")
        check_similarities([score for _, score in pairs], metric)
        return pairs

    def _metadata_scores(self, documents: list[Document]) -> tuple[str, list[tuple[Document, float]]]:
        keys = [next((key for key in SCORE_KEYS if key in d.metadata), None) for d in documents]
        if None in keys:
            raise ConfigError(
                "GuardedRetriever needs similarity scores: pass embeddings=..., or a retriever "
                f"whose documents carry one of metadata {SCORE_KEYS}"
            )
        metric: str = self.metric
        if metric == "auto":
            if set(keys) != {"similarity"}:
                raise ConfigError(
                    f"the retriever's metadata scores ({', '.join(sorted({str(k) for k in keys}))}) do not say "
                    "which metric they use; pass metric=..."
                )
            metric = "cosine"
        return metric, [
            (d, to_cosine(float(d.metadata[key]), metric)) for d, key in zip(documents, keys, strict=True) if key
        ]

    def retrieval(self, query: str | Query) -> RetrievalResult:
        """The scored retrieval of `query` with no guard applied (to calibrate guards on benign
        queries with this very retriever: `Shield.build(..., calibration=[...])`)."""
        query = Query(query) if isinstance(query, str) else query
        return RetrievalResult(query=query, hits=self._hits(query.text)[1])

    def _hits(self, query: str) -> tuple[dict[str, Document], tuple[ScoredChunk, ...]]:
        originals: dict[str, Document] = {}
        scored: list[tuple[Chunk, float]] = []
        for document, score in self._scored(query):
            chunk_id = _chunk_id(document)
            if chunk_id in originals:  # the same document twice: keep its best score only
                continue
            originals[chunk_id] = document
            doc_id = str(document.metadata.get("doc_id", chunk_id))
            scored.append((Chunk(id=chunk_id, doc_id=doc_id, text=document.page_content), score))
        return originals, scored_chunks(scored)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        originals, hits = self._hits(query)
        decision = guard_retrieval(
            self.shield, query, hits, user_id=self.user_id, standalone=self.standalone, component="GuardedRetriever"
        )
        if decision.blocked or decision.decorated is None:
            if self.on_block == "raise":
                raise GuardBlockedError("the query was blocked by a guard", decision.response)
            return []
        return [
            Document(
                page_content=hit.chunk.text,
                id=originals[hit.chunk.id].id,
                metadata={
                    **originals[hit.chunk.id].metadata,
                    "ragshield_chunk_id": hit.chunk.id,
                    "ragshield_similarity": hit.similarity,
                },
            )
            for hit in decision.decorated.hits
        ]


def _text(chunk: Any) -> str:
    """The text of a streamed chain output (a string, or a message chunk's content)."""
    if isinstance(chunk, str):
        return chunk
    content = getattr(chunk, "content", None)
    if isinstance(content, str):
        return content
    raise ConfigError(
        f"GuardedChain needs a chain that streams text, got {type(chunk).__name__}; "
        "end the chain with StrOutputParser()"
    )


class GuardedChain(Runnable[Any, str]):
    """Streams `chain`'s answer through the output guards of `shield`.

    `chain` retrieves through a `GuardedRetriever` (so the monitor knows this run's canaries)
    and streams text. A query blocked at retrieval and an answer halted by a guard raise
    `GuardBlockedError` (`on_block="raise"`, default) or yield the refusal (`on_block="refuse"`);
    text released before a halt was checked and is safe to show. A halt stops the model.

    `stream` / `astream` yield each piece as soon as the guards release it (text is withheld
    only for the monitors' holdback, as in `RagPipeline.stream`); `invoke` / `ainvoke` join
    them; `batch` / `abatch` run one guarded run per input (separate canaries and policy
    counts). The policy user id comes from `config={"configurable": {"user_id": ...}}`, else
    `user_id`. The monitor sees the documents retrieved before the chain's first output chunk.
    """

    def __init__(
        self,
        chain: Runnable[Any, Any],
        shield: Shield,
        *,
        user_id: str = "anonymous",
        on_block: OnBlock = "raise",
    ) -> None:
        self.chain = chain
        self.shield = shield
        self.user_id = user_id
        self.on_block = on_block

    def _user(self, config: RunnableConfig | None) -> str:
        return str(((config or {}).get("configurable") or {}).get("user_id") or self.user_id)

    def _query(self, input: Any, user: str) -> Query:
        return Query(input if isinstance(input, str) else str(input), user_id=user)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> str:
        return "".join(self.stream(input, config, **kwargs))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> str:
        return "".join([text async for text in self.astream(input, config, **kwargs)])

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[str]:
        user = self._user(config)
        first: list[str] = []
        refused = False
        with guarded_run(user) as run:  # never yield inside: the context variable must not leak out
            upstream = iter(self.chain.stream(input, config, **kwargs))
            try:
                first = [_text(next(upstream))]  # retrieval happens before the first token
            except StopIteration:
                pass
            except GuardBlockedError:
                if self.on_block == "raise":
                    raise
                refused = True
        if refused:
            yield self.shield.refusal
            return
        require_guarded_retrieval(run, self.shield, "GuardedChain")
        deltas = (text for part in (iter(first), (_text(c) for c in upstream)) for text in part)
        monitored = self.shield.monitor(run.decorated(self._query(input, user)), deltas)
        yield from release(monitored, refusal=self.shield.refusal, on_block=self.on_block)

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[str]:
        user = self._user(config)
        run: GuardedRun | None = GuardedRun(user_id=user)
        token = CURRENT_RUN.set(run)  # set and reset within one step: nothing is yielded in between
        try:
            upstream = aiter(self.chain.astream(input, config, **kwargs))
            first: list[str] = []
            try:
                first = [_text(await anext(upstream))]  # retrieval happens before the first token
            except StopAsyncIteration:
                pass
            except GuardBlockedError:
                if self.on_block == "raise":
                    raise
                run = None
        finally:
            CURRENT_RUN.reset(token)
        if run is None:
            yield self.shield.refusal
            return
        require_guarded_retrieval(run, self.shield, "GuardedChain")

        async def deltas() -> AsyncIterator[str]:
            for text in first:
                yield text
            async for chunk in upstream:
                yield _text(chunk)

        monitored = amonitor(self.shield, run.decorated(self._query(input, user)), deltas())
        async for text in arelease(monitored, refusal=self.shield.refusal, on_block=self.on_block):
            yield text


class RagshieldEmbeddings(Embeddings):
    """A ragshield `Embedder` (e.g. the bundled MiniLM) as LangChain `Embeddings`."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in embed_documents(self.embedder, texts)]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self.embedder.embed([text])[0]]


class GeneratorLLM(LLM):
    """A ragshield `Generator` (SmolLM2 through llama.cpp, an OpenAI-compatible endpoint, ...) as a
    LangChain LLM. The prompt goes to the model as a completion request, or as one user chat
    message with `chat_mode=True`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    generator: Any
    max_tokens: int = 256
    chat_mode: bool = False

    @property
    def _llm_type(self) -> str:
        return f"ragshield:{getattr(self.generator, 'name', 'generator')}"

    def _request(self, prompt: str, stop: list[str] | None) -> GenerationRequest:
        return GenerationRequest(
            messages=(ChatMessage("user", prompt),),
            prompt=None if self.chat_mode else prompt,
            max_tokens=self.max_tokens,
            stop=tuple(stop or ()),
        )

    def _call(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        return "".join(self.generator.stream(self._request(prompt, stop)))

    def _stream(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[GenerationChunk]:
        for delta in self.generator.stream(self._request(prompt, stop)):
            if not delta:  # e.g. the empty StreamEnd marker: nothing for the framework
                continue
            if run_manager is not None:
                run_manager.on_llm_new_token(delta)
            yield GenerationChunk(text=delta)
