"""LangChain adapters (`pip install 'ragshield[langchain]'`).

* `GuardedRetriever` - a `BaseRetriever` that retrieves with similarity scores (from a vector
  store, or from another retriever plus an embeddings model), runs ragshield's policy and query
  guards (RAG-CT, intent, ...) and returns the documents with canaries inserted.
* `GuardedChain` - a `Runnable` around a chain that uses a `GuardedRetriever`: it streams the
  chain's answer through the output guards (canary monitor, PII redaction), withholding text
  until it is checked, and stops the stream when a guard blocks.
* `RagshieldEmbeddings`, `GeneratorLLM` - ragshield's local models (MiniLM, SmolLM2 through
  llama.cpp, or any ragshield `Generator`) as LangChain components.

All checks run through `Shield`, that is through `RagPipeline`. Similarities are cosine
(higher = closer); verdict scores are higher = more suspicious.

```python
shield = Shield.build("rag-ct+canary-rag", embedder=embedder)
retriever = GuardedRetriever(shield=shield, vectorstore=store, k=3)
chain = GuardedChain(chain=({"context": retriever | join, "question": RunnablePassthrough()}
                            | prompt | llm | StrOutputParser()), shield=shield)
for text in chain.stream("What helps a stiff neck?", {"configurable": {"user_id": "u-42"}}):
    print(text, end="")
```
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np

from ragshield.errors import ConfigError, missing_extra
from ragshield.integrations.shield import CURRENT_RUN, GuardBlockedError, Shield, guarded_run, scored_chunks
from ragshield.types import ChatMessage, Chunk, GenerationRequest, Query, Response, RetrievalResult, ScoredChunk

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

__all__ = ["GeneratorLLM", "GuardBlockedError", "GuardedChain", "GuardedRetriever", "RagshieldEmbeddings"]

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
        retriever: any other retriever; its documents are scored with `embeddings` (cosine), or
            read from `metadata["similarity" | "score" | "relevance_score"]`.
        embeddings: the embeddings model for `retriever` scoring.
        k: documents per query.
        score_kind: `similarity` (higher = closer, cosine) or `distance` (cosine distance,
            converted as 1 - distance), for stores such as Chroma that return distances.
        user_id: the policy's user id when the run does not name one (`GuardedChain` config
            `{"configurable": {"user_id": ...}}`).
        on_block: `raise` (`GuardBlockedError`, the default) or `empty` (no documents).

    The returned documents carry canaries when a canary defense is configured: pass them to the
    model only, never to the end user. Metadata gains `ragshield_chunk_id` and `ragshield_similarity`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    shield: Shield
    vectorstore: VectorStore | None = None
    retriever: BaseRetriever | None = None
    embeddings: Embeddings | None = None
    k: int = 3
    score_kind: Literal["similarity", "distance"] = "similarity"
    user_id: str = "anonymous"
    on_block: Literal["raise", "empty"] = "raise"

    def _scored(self, query: str) -> list[tuple[Document, float]]:
        if self.vectorstore is not None:
            pairs = self.vectorstore.similarity_search_with_score(query, k=self.k)
        elif self.retriever is not None:
            documents = self.retriever.invoke(query)[: self.k]
            if self.embeddings is not None:
                pairs = list(zip(documents, _cosine(self.embeddings, query, documents), strict=True))
            else:
                pairs = [
                    (d, float(next(d.metadata[k] for k in SCORE_KEYS if k in d.metadata)))
                    for d in documents
                    if any(k in d.metadata for k in SCORE_KEYS)
                ]
                if len(pairs) != len(documents):
                    raise ConfigError(
                        "GuardedRetriever needs similarity scores: pass embeddings=..., or a retriever "
                        f"whose documents carry one of metadata {SCORE_KEYS}"
                    )
        else:
            raise ConfigError("GuardedRetriever needs vectorstore=... or retriever=...")
        if self.score_kind == "distance":
            pairs = [(document, 1.0 - float(score)) for document, score in pairs]
        return [(document, float(score)) for document, score in pairs]

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
        run = CURRENT_RUN.get()
        user = (run.user_id if run is not None else None) or self.user_id
        originals, hits = self._hits(query)
        decision = self.shield.check_query(Query(query, user_id=user), hits)
        if run is not None:
            run.decisions.append(decision)
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
    text released before a halt was checked and is safe to show.

    The policy user id comes from `config={"configurable": {"user_id": ...}}`, else `user_id`.
    """

    def __init__(
        self,
        chain: Runnable[Any, Any],
        shield: Shield,
        *,
        user_id: str = "anonymous",
        on_block: Literal["raise", "refuse"] = "raise",
    ) -> None:
        self.chain = chain
        self.shield = shield
        self.user_id = user_id
        self.on_block = on_block

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> str:
        return "".join(self.stream(input, config, **kwargs))

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[str]:
        user = str(((config or {}).get("configurable") or {}).get("user_id") or self.user_id)
        refused = False
        first: list[str] = []
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
        query = Query(input if isinstance(input, str) else str(input), user_id=user)
        deltas = (text for part in (iter(first), (_text(c) for c in upstream)) for text in part)
        for item in self.shield.monitor(run.decorated(query), deltas):
            if not isinstance(item, Response):
                yield item
            elif item.finish_reason == "blocked":
                if self.on_block == "raise":
                    raise GuardBlockedError("the answer was stopped by a guard", item)
                yield ("\n" if item.text else "") + self.shield.refusal


class RagshieldEmbeddings(Embeddings):
    """A ragshield `Embedder` (e.g. the bundled MiniLM) as LangChain `Embeddings`."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self.embedder.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


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
