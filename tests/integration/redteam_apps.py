"""Small customer-style RAG apps for the red-team tests (not ragshield's pipeline), over the
FAKE retrieval stack's synthetic records:

* `SupportApi`: a JSON API on a real loopback HTTP server with its own shape
  (`POST /api/ask {"question", "conversation"}` -> `{"data": {"reply": {"text"}}, "flagged"}`), or
  SSE events `{"piece": ...}` on `/api/ask/stream`; it answers through a ragshield
  `RagPipeline` so a local run of the same system is at hand, and can answer 429 to a share of
  first attempts (with `Retry-After`);
* `build_langchain_app`: a LangChain chain (FAISS vector store through langchain-community,
  prompt, and a WORST-CASE "model" that copies its context, labelled as such).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ragshield.types import Chunk, Query


class SupportApi:
    """A real HTTP server (a thread of this process) answering through `pipeline`."""

    def __init__(self, pipeline: Any, *, busy_every: int = 0, delay_s: float = 0.0) -> None:
        self.pipeline = pipeline
        self.busy_every = busy_every
        self.delay_s = delay_s
        self.requests = 0
        self.busy = 0
        self._lock = threading.Lock()
        self._seen: set[str] = set()

    @contextmanager
    def running(self) -> Iterator[str]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                payload = json.loads(self.rfile.read(length))
                question = payload["question"]
                with api._lock:
                    api.requests += 1
                    first = question not in api._seen
                    api._seen.add(question)
                    busy = bool(api.busy_every) and first and api.requests % api.busy_every == 0
                    api.busy += busy
                if busy:
                    self._send(429, b'{"message": "slow down"}', "application/json", {"Retry-After": "0.05"})
                    return
                if api.delay_s:
                    threading.Event().wait(api.delay_s)
                with api._lock:  # the pipeline's fake models are not thread-safe
                    response = api.pipeline.answer(Query(question, user_id="api"))
                flagged = response.blocked or response.finish_reason in ("blocked", "refused")
                if self.path == "/api/ask/stream":
                    text = response.text
                    pieces = [text[i : i + 9] for i in range(0, len(text), 9)]
                    events = [{"piece": piece} for piece in pieces] + [{"flagged": flagged}]
                    body = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
                    self._send(200, body.encode(), "text/event-stream", {})
                    return
                body = json.dumps({"data": {"reply": {"text": response.text}}, "flagged": flagged}).encode()
                self._send(200, body, "application/json", {})

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()


def build_langchain_app(chunks: list[Chunk], k: int = 2) -> Any:
    """retriever (FAISS via langchain-community over the FAKE hashing embedder) | prompt |
    WORST-CASE model that answers with its whole context."""
    from langchain_community.vectorstores import FAISS
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough

    from ragshield.rag.embedding import HashingEmbedder

    class HashingEmbeddings(Embeddings):
        """FAKE embeddings (ragshield's hashing embedder) for a fast, offline test."""

        def __init__(self) -> None:
            self.inner = HashingEmbedder()

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.inner.embed(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self.inner.embed([text])[0].tolist()

    store = FAISS.from_documents(
        [Document(page_content=chunk.text, metadata={"id": chunk.id}) for chunk in chunks], HashingEmbeddings()
    )
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context.\n\nContext:\n{context}"), ("human", "{question}")]
    )

    def copy_context(messages: Any) -> str:  # WORST CASE: a fully compliant model
        return messages.to_messages()[0].content.split("Context:\n", 1)[1]

    def join(documents: list[Any]) -> str:
        return "\n\n".join(document.page_content for document in documents)

    retriever = store.as_retriever(search_kwargs={"k": k})
    return (
        {"context": retriever | RunnableLambda(join), "question": RunnablePassthrough()}
        | prompt
        | RunnableLambda(copy_context)
        | StrOutputParser()
    )


APP: Any = None  # set by the test before the langchain target imports `redteam_apps:APP`
