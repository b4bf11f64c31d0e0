"""`create_app(settings) -> FastAPI`: the guarded RAG service.

Endpoints:

* `POST /v1/chat/completions` - OpenAI-compatible, streamed (SSE) and not (`service.chat`);
* `POST /v1/guard/query`, `POST /v1/guard/output` - guards for applications with their own
  RAG stack (`service.guard_api`);
* `GET /v1/models` - the one model id this server answers to;
* `GET /healthz` (the process is up), `GET /readyz` (models loaded), `GET /metrics` (Prometheus).

The RAG system is built once by `ragshield.system.build_system`; every answer runs through
`RagPipeline.stream`. Errors use the OpenAI error shape `{"error": {message, type, param, code}}`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response as HttpResponse

from ragshield.errors import InvalidQueryError, RagShieldError
from ragshield.generators.base import complete
from ragshield.integrations.shield import Shield
from ragshield.rag.pipeline import RagPipeline
from ragshield.service.audit import AuditLog
from ragshield.service.chat import handle_chat
from ragshield.service.guard_api import handle_guard_output, handle_guard_query
from ragshield.service.metrics import CONTENT_TYPE, ServiceMetrics
from ragshield.service.schemas import ModelCard, ModelList
from ragshield.service.settings import ServeConfig
from ragshield.service.state import ApiError, ServiceState, model_response
from ragshield.system import build_system
from ragshield.types import ChatMessage, GenerationRequest, Query

log = logging.getLogger(__name__)

ENDPOINTS = {
    "/v1/chat/completions": "chat",
    "/v1/guard/query": "guard-query",
    "/v1/guard/output": "guard-output",
    "/v1/models": "models",
}


def _warm_up(state: ServiceState) -> None:
    """Load the embedder and the model before the first request (models load lazily)."""
    try:
        pipeline = state.pipeline
        pipeline.retriever.retrieve(Query("warm-up", user_id="ragshield-warm-up"), pipeline.k)
        complete(pipeline.generator, GenerationRequest(messages=(ChatMessage("user", "Hello"),), max_tokens=1))
    except Exception as error:  # readiness reports it; requests still try (the backend may come up)
        state.ready_error = f"warm-up failed ({type(error).__name__})"
        log.warning("warm-up failed: %s", type(error).__name__)
    finally:
        state.ready.set()


def _outcome_for(status: int) -> str:
    if status == 401:
        return "unauthorized"
    if status == 403:
        return "refuse"
    return "bad_request" if status < 500 else "error"


def create_app(settings: ServeConfig, *, pipeline: RagPipeline | None = None, warm_up: bool = True) -> FastAPI:
    """The service for `settings`.

    Args:
        settings: the serve config (`load_serve_config`).
        pipeline: an already-built pipeline (tests and benchmarks share loaded models this
            way); default: `build_system(settings)`.
        warm_up: load the models in the background at startup; `/readyz` answers 503 until done.

    Raises:
        ConfigError: the config cannot be turned into a running system (missing index, ...).
    """
    pipeline = pipeline if pipeline is not None else build_system(settings)
    state = ServiceState(
        settings=settings,
        pipeline=pipeline,
        shield=Shield.from_pipeline(pipeline),
        audit=AuditLog(settings.audit_log),
        metrics=ServiceMetrics(),
        slots=asyncio.Semaphore(settings.max_concurrent_requests),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            threading.Thread(target=_warm_up, args=(state,), name="ragshield-warm-up", daemon=True).start()
        else:
            state.ready.set()
        yield
        state.audit.close()

    app = FastAPI(title="ragshield", summary="A guarded RAG service (OpenAI-compatible).", lifespan=lifespan)
    app.state.ragshield = state

    def error_response(request: Request, error: ApiError) -> JSONResponse:
        endpoint = ENDPOINTS.get(request.url.path)
        if endpoint is not None and not error.audited:
            state.metrics.requests.labels(endpoint, _outcome_for(error.status)).inc()
        headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
        return JSONResponse(error.body(), status_code=error.status, headers=headers)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, error: ApiError) -> JSONResponse:
        return error_response(request, error)

    @app.exception_handler(InvalidQueryError)
    async def _invalid_query(request: Request, error: InvalidQueryError) -> JSONResponse:
        return error_response(request, ApiError(400, str(error), code="invalid_query", param="messages"))

    @app.exception_handler(RagShieldError)
    async def _ragshield_error(request: Request, error: RagShieldError) -> JSONResponse:
        log.warning("request failed: %s", type(error).__name__)
        return error_response(
            request,
            ApiError(500, f"internal error ({type(error).__name__})", type="server_error", code="internal_error"),
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        message = "no such endpoint" if error.status_code == 404 else str(error.detail)
        return error_response(request, ApiError(error.status_code, message, code=f"http_{error.status_code}"))

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        """Readiness: 200 once the models are loaded, 503 while loading or when loading failed."""
        if not state.ready.is_set():
            return JSONResponse({"status": "loading"}, status_code=503)
        if state.ready_error is not None:
            return JSONResponse({"status": "failed", "error": state.ready_error}, status_code=503)
        return JSONResponse({"status": "ready", "model": settings.model_name, "defense": pipeline.defense.name})

    @app.get("/metrics")
    async def metrics() -> HttpResponse:
        """Prometheus text exposition (counts and latencies only, nothing secret)."""
        return HttpResponse(state.metrics.render(), media_type=CONTENT_TYPE)

    @app.get("/v1/models")
    async def models(request: Request) -> HttpResponse:
        state.user_for(request.headers.get("authorization"))
        return model_response(ModelList(data=[ModelCard(id=settings.model_name)]))

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> HttpResponse:
        """OpenAI-compatible chat completion over the guarded RAG system (stream: true for SSE)."""
        user = state.user_for(request.headers.get("authorization"))
        return await handle_chat(state, request, user)

    @app.post("/v1/guard/query")
    async def guard_query(request: Request) -> HttpResponse:
        """Verdict on a query plus the chunks (id, text, cosine similarity) an app retrieved for it."""
        user = state.user_for(request.headers.get("authorization"))
        return await handle_guard_query(state, request, user)

    @app.post("/v1/guard/output")
    async def guard_output(request: Request) -> HttpResponse:
        """Verdict on a model's answer given the decorated context /v1/guard/query returned."""
        user = state.user_for(request.headers.get("authorization"))
        return await handle_guard_output(state, request, user)

    return app
