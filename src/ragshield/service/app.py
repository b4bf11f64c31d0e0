"""`create_app(settings) -> FastAPI`: the guarded RAG service.

Endpoints:

* `POST /v1/chat/completions` - OpenAI-compatible, streamed (SSE) and not (`service.chat`);
* `POST /v1/guard/query`, `POST /v1/guard/output` - guards for applications with their own
  RAG stack (`service.guard_api`);
* `GET /v1/models` - the one model id this server answers to;
* `GET /healthz` (the process is up), `GET /readyz` (models loaded, policy store reachable,
  not shutting down), `GET /metrics` (Prometheus);
* `GET /openapi.json`, `GET /docs` - the schema and its viewer, behind the API key unless
  `open_docs` is set.

The RAG system is built once by `ragshield.system.build_system`; every answer runs through
`RagPipeline.stream`. A config without `index` starts a guard-only service: the guard endpoints
only (`ragshield.service.guard_only`), and 404 `guard_only_service` for chat and models. With
`rate_limit:` every `/v1` request counts against its API key's limit (429 with `Retry-After`,
`ragshield.service.ratelimit`). Every error, whatever raised it, uses the OpenAI error shape
`{"error": {message, type, param, code}}` and is counted in `/metrics`.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response as HttpResponse

from ragshield.errors import ConfigError, InvalidQueryError, RagShieldError
from ragshield.generators.base import complete
from ragshield.guards.policy import PolicyStoreUnavailable, policy_identity
from ragshield.integrations.shield import Shield
from ragshield.pipeline import RagPipeline
from ragshield.service.access import check_keyless_request
from ragshield.service.audit import AuditLog
from ragshield.service.chat import handle_chat
from ragshield.service.exchange import drain_open_exchanges
from ragshield.service.guard_api import check_marker_caps, handle_guard_output, handle_guard_query
from ragshield.service.health import StoreProbe
from ragshield.service.metrics import CONTENT_TYPE, ServiceMetrics
from ragshield.service.openapi import add_docs
from ragshield.service.ratelimit import RateLimiter, rate_limited_error
from ragshield.service.schemas import ModelCard, ModelList
from ragshield.service.settings import ServeConfig
from ragshield.service.state import ApiError, ServiceState, model_response
from ragshield.service.workers import WorkerPool
from ragshield.system import build_system
from ragshield.types import ChatMessage, Chunk, GenerationRequest, Query, ScoredChunk

log = logging.getLogger(__name__)

ENDPOINTS = {
    "/v1/chat/completions": "chat",
    "/v1/guard/query": "guard-query",
    "/v1/guard/output": "guard-output",
    "/v1/models": "models",
}


def _warm_up(state: ServiceState) -> None:
    """Load every model before the first request (they load lazily): the retriever's embedder and
    the generator, and the guards' scanners and PII analyzer (run once on a warm-up record,
    outside the blocking policy). Then the warmed heap is frozen (`gc.freeze`): without it, each of
    Python's full collections walks the millions of objects the models hold, which put a pause of
    about 250 ms into every ninth request (`benchmarks/gc_pauses.py`)."""
    try:
        pipeline = state.pipeline
        warm_guards(Shield(state.shield.defense if pipeline is None else pipeline.defense))
        if pipeline is not None:
            pipeline.retriever.retrieve(Query("warm-up", user_id="ragshield-warm-up"), pipeline.k)
            complete(pipeline.generator, GenerationRequest(messages=(ChatMessage("user", "Hello"),), max_tokens=1))
        freeze_warmed_heap()
    except Exception as error:  # readiness reports it; requests still try (the backend may come up)
        state.ready_error = f"warm-up failed ({type(error).__name__})"
        log.warning("warm-up failed: %s", type(error).__name__)
    finally:
        state.ready.set()


def warm_guards(shield: Shield) -> None:
    """Run the defense's guards once on a record written by no one: the answer copies the chunk
    (without canaries), so the echo and PII scanners load now; no policy: it counts for no one. The
    intent guards' second opinions, which a benign warm-up query never reaches, load too (`warm_intent`)."""
    warm_intent(shield.defense.query_guards)
    query = Query("warm-up", user_id="ragshield-warm-up")
    text = "A warm-up record written by no one, with a number to scan: 555-0100."
    chunk = Chunk(id="warm-up", doc_id="warm-up", text=text)
    decision = shield.check_query(query, (ScoredChunk(chunk, 1.0, 0),))
    if decision.decorated is not None:
        shield.check_output(decision.decorated, text)


def warm_intent(guards: Sequence[object]) -> int:
    """`ExtractionIntent.warm_up` on every intent guard among `guards` and the guards they wrap (`SignalOnly`'s
    `guard`, `QueryShield`'s `detectors`), so the first flag or near miss does not pay for loading its
    verifier; returns how many intent guards were warmed."""
    from ragshield.guards.intent import ExtractionIntent

    pending, seen, warmed = list(guards), set(), 0
    while pending:
        guard = pending.pop()
        if id(guard) in seen:  # a guard reachable twice is warmed once, and a cycle ends
            continue
        seen.add(id(guard))
        if isinstance(guard, ExtractionIntent):
            guard.warm_up()
            warmed += 1
        pending += [inner for inner in (getattr(guard, "guard", None),) if inner is not None]
        pending += list(getattr(guard, "detectors", ()))
    return warmed


def freeze_warmed_heap() -> None:
    """Move every object alive now (the loaded models) out of the garbage collector's view, so its
    full collections only walk what requests allocate; call once the models are loaded."""
    gc.collect()
    gc.freeze()


def _outcome_for(error: ApiError) -> str:
    if error.status == 401:
        return "unauthorized"
    if error.code == "user_blocked":
        return "refuse"
    if error.status == 429:
        return "rate_limited"
    if error.status in (403, 421):
        return "forbidden"
    if error.code == "policy_store_unavailable":
        return "unavailable"
    if error.code == "server_shutting_down":
        return "shutdown"
    return "bad_request" if error.status < 500 else "error"


def _rate_limiter(settings: ServeConfig) -> RateLimiter | None:
    if settings.rate_limit is None:
        return None
    store = settings.policy.store if settings.policy is not None else None
    return RateLimiter(settings.rate_limit, policy_store=store, fail_closed=settings.fail_closed)


def _open_audit(settings: ServeConfig) -> AuditLog:
    try:
        return AuditLog(settings.audit_log)
    except OSError as error:
        raise ConfigError(
            f"cannot open the audit log {settings.audit_log}: {error.strerror or type(error).__name__}; "
            "check the path and its permissions"
        ) from None


def create_app(settings: ServeConfig, *, pipeline: RagPipeline | None = None, warm_up: bool = True) -> FastAPI:
    """The service for `settings`.

    Args:
        settings: the serve config (`load_serve_config`). A config without `index` starts a
            guard-only service (`ragshield.service.guard_only`): no index, no model, only the
            guard endpoints.
        pipeline: an already-built pipeline (tests and benchmarks share loaded models this
            way); default: `build_system(settings)` (None in guard-only mode).
        warm_up: load the models in the background at startup; `/readyz` answers 503 until done.

    Raises:
        ConfigError: the config cannot be turned into a running system (missing index, ...).
        BackendUnavailable: a configured part needs an extra that is not installed.
    """
    try:
        if pipeline is None and settings.guard_only:
            from ragshield.service.guard_only import build_guard_shield

            shield = build_guard_shield(settings)
        else:
            pipeline = pipeline or build_system(settings)
            shield = Shield.from_pipeline(pipeline)
    except OSError as error:  # a file the config names (calibration, model, ...) cannot be read
        where = f" {error.filename}" if error.filename else ""
        raise ConfigError(
            f"cannot start the service: {error.strerror or type(error).__name__}{where}; check the config"
        ) from None
    check_marker_caps(shield.defense)
    state = ServiceState(
        settings=settings,
        pipeline=pipeline,
        shield=shield,
        audit=_open_audit(settings),
        metrics=ServiceMetrics(),
        pool=WorkerPool(settings.max_concurrent_requests),
        rate_limiter=_rate_limiter(settings),
    )
    probe = StoreProbe(shield.policy)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        warning = await probe.persistence_warning()
        if warning is not None:
            log.warning("%s", warning)
        if warm_up:
            threading.Thread(target=_warm_up, args=(state,), name="ragshield-warm-up", daemon=True).start()
        else:
            state.ready.set()
        yield
        state.begin_drain()
        await drain_open_exchanges(state)
        state.pool.shutdown()
        probe.close()
        state.audit.close()

    app = FastAPI(
        title="ragshield",
        summary="A guarded RAG service (OpenAI-compatible).",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.ragshield = state

    def error_response(request: Request, error: ApiError) -> JSONResponse:
        if not error.audited:
            endpoint = ENDPOINTS.get(request.url.path, "other")
            state.metrics.requests.labels(endpoint, _outcome_for(error)).inc()
        headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else error.headers
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

    @app.exception_handler(PolicyStoreUnavailable)
    async def _store_down(request: Request, error: PolicyStoreUnavailable) -> JSONResponse:
        return error_response(
            request,
            ApiError(
                503,
                "the blocking-policy store is unavailable; retry later",
                type="server_error",
                code="policy_store_unavailable",
            ),
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, error: Exception) -> JSONResponse:
        # the last resort: still the OpenAI shape and a metric; the type only (messages can hold text)
        log.error("unexpected %s on %s", type(error).__name__, request.url.path)
        return error_response(
            request,
            ApiError(500, f"internal error ({type(error).__name__})", type="server_error", code="internal_error"),
        )

    def authenticate(request: Request) -> str:
        """The policy identity of the caller (after the key-less checks, or the key)."""
        check_keyless_request(request, settings)
        return state.user_for(request.headers.get("authorization"))

    async def caller(request: Request) -> str:
        """`authenticate`, then one request counted against the caller's rate limit.

        Raises:
            ApiError: 401 / 403 / 415 / 421 (access), 429 past the rate limit (`Retry-After`).
        """
        user = authenticate(request)
        limiter = state.rate_limiter
        if limiter is not None:
            # a Redis round trip blocks: off the event loop; the in-memory check is microseconds
            admission = await asyncio.to_thread(limiter.admit, user) if limiter.shared else limiter.admit(user)
            if not admission.admitted:
                raise rate_limited_error(limiter.config, admission)
        return user

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        """Readiness: 200 when the models are loaded, the policy store answers and the server is not
        shutting down; else 503 with `status` loading | failed | draining | degraded."""
        if state.draining.is_set():
            return JSONResponse({"status": "draining"}, status_code=503)
        if not state.ready.is_set():
            return JSONResponse({"status": "loading"}, status_code=503)
        if state.ready_error is not None:
            return JSONResponse({"status": "failed", "error": state.ready_error}, status_code=503)
        store_error = await probe.check()
        if store_error is not None:
            return JSONResponse({"status": "degraded", "error": store_error}, status_code=503)
        if state.pipeline is None:
            return JSONResponse({"status": "ready", "mode": "guard-only", "defense": shield.defense.name})
        return JSONResponse({"status": "ready", "model": settings.model_name, "defense": shield.defense.name})

    @app.get("/metrics")
    async def metrics() -> HttpResponse:
        """Prometheus text exposition (counts and latencies only, nothing secret)."""
        state.metrics.workers.labels("alive").set(state.pool.threads)
        state.metrics.workers.labels("busy").set(state.pool.busy)
        return HttpResponse(state.metrics.render(), media_type=CONTENT_TYPE)

    @app.get("/v1/models")
    async def models(request: Request) -> HttpResponse:
        await caller(request)
        state.require_pipeline()
        return model_response(ModelList(data=[ModelCard(id=settings.model_name)]))

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> HttpResponse:
        """OpenAI-compatible chat completion over the guarded RAG system (stream: true for SSE)."""
        return await handle_chat(state, request, policy_identity(await caller(request)))

    @app.post("/v1/guard/query")
    async def guard_query(request: Request) -> HttpResponse:
        """Verdict on a query plus the chunks (id, text, cosine similarity) an app retrieved for it."""
        return await handle_guard_query(state, request, await caller(request))

    @app.post("/v1/guard/output")
    async def guard_output(request: Request) -> HttpResponse:
        """Verdict on a model's answer given the decorated context /v1/guard/query returned."""
        return await handle_guard_output(state, request, await caller(request))

    add_docs(app, lambda request: None if settings.open_docs else authenticate(request))
    return app
