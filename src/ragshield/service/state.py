"""What every endpoint of one app shares: the pipeline, the shield, the audit log, the metrics,
the worker pool, and the helpers that read a request body and turn a finished request into one
audit line and metric updates."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response as HttpResponse

from ragshield.guards.policy import is_store_outage
from ragshield.integrations.shield import Shield
from ragshield.pipeline import RagPipeline
from ragshield.service.audit import AuditLog, Scrubber, decision_record
from ragshield.service.metrics import ServiceMetrics
from ragshield.service.settings import ServeConfig
from ragshield.service.workers import WorkerPool
from ragshield.types import Action, Response, Verdict

if TYPE_CHECKING:
    from ragshield.service.ratelimit import RateLimiter

ModelT = TypeVar("ModelT", bound=BaseModel)
MAX_JSON_DEPTH = 32  # an OpenAI chat request nests 5 deep; deeper bodies are refused before validation


class ApiError(Exception):
    """An error answered with the OpenAI error shape: `{"error": {message, type, param, code}}`."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        audited: bool = False,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.headers = headers  # sent with the error (Retry-After on a 429)
        self.audited = audited  # the request already has its audit line and metric count
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass
class ServiceState:
    """The parts one app serves with. `pipeline` is None in guard-only mode (no index, no model:
    only the guard endpoints are served, through `shield`)."""

    settings: ServeConfig
    pipeline: RagPipeline | None
    shield: Shield
    audit: AuditLog
    metrics: ServiceMetrics
    pool: WorkerPool
    rate_limiter: RateLimiter | None = None
    ready: threading.Event = field(default_factory=threading.Event)
    ready_error: str | None = None
    draining: threading.Event = field(default_factory=threading.Event)
    drain_deadline: float | None = None  # perf_counter() seconds; in-flight work ends by then
    open_exchanges: set[Any] = field(default_factory=set)  # chat requests not yet audited and closed

    def begin_drain(self) -> None:
        """Shutdown started (SIGTERM): in-flight requests get `shutdown_grace_s` more seconds.
        Safe to call from a signal handler or another thread."""
        if not self.draining.is_set():
            self.drain_deadline = time.perf_counter() + self.settings.shutdown_grace_s
            self.draining.set()

    def drain_remaining(self) -> float:
        """Seconds until in-flight requests must end (infinite while not draining)."""
        if self.drain_deadline is None:
            return float("inf")
        return max(0.0, self.drain_deadline - time.perf_counter())

    def require_pipeline(self) -> RagPipeline:
        """The RAG pipeline, or a 404 in guard-only mode (the config names no index).

        Raises:
            ApiError: 404 `guard_only_service`.
        """
        if self.pipeline is None:
            raise ApiError(
                404,
                "this server is guard-only (its config names no index): it serves /v1/guard/query and "
                "/v1/guard/output only; add 'index:' to the config to serve chat completions",
                code="guard_only_service",
            )
        return self.pipeline

    def user_for(self, authorization: str | None) -> str:
        """The user id of a bearer key (the anonymous user when the server has no keys).

        Raises:
            ApiError: 401 when keys are configured and the header is missing or unknown.
        """
        keys = self.settings.api_keys
        if keys is None:
            return "anonymous"
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(
                401,
                "missing API key; send the header 'Authorization: Bearer KEY'",
                type="authentication_error",
                code="missing_api_key",
            )
        user = _lookup(keys, token.strip())
        if user is None:
            raise ApiError(401, "invalid API key", type="authentication_error", code="invalid_api_key")
        return user


def _lookup(keys: dict[str, str], token: str) -> str | None:
    """The user of `token`, compared in constant time against every key (no early exit)."""
    import hmac

    found: str | None = None
    for key, user in keys.items():
        if hmac.compare_digest(key.encode("utf-8"), token.encode("utf-8", errors="surrogatepass")):
            found = user
    return found


async def read_json(request: Request, model: type[ModelT], limit: int, timeout_s: float = 30.0) -> ModelT:
    """The request body parsed as `model`, with a clear 4xx for every way it can be wrong.

    Raises:
        ApiError: 408 when the body takes over `timeout_s` seconds to arrive; 413 over `limit`
            bytes; 400 for invalid UTF-8, malformed JSON, JSON nested deeper than
            `MAX_JSON_DEPTH`, a non-object body or missing / invalid fields (the message names
            each field).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(
            413,
            f"request body of {declared} bytes is over the {limit}-byte limit; send a shorter query",
            code="body_too_large",
        )
    body = bytearray()
    try:
        async with asyncio.timeout(timeout_s):
            async for piece in request.stream():
                body.extend(piece)
                if len(body) > limit:
                    raise ApiError(
                        413, f"request body is over the {limit}-byte limit; send a shorter query", code="body_too_large"
                    )
    except TimeoutError:
        raise ApiError(
            408, f"the request body did not arrive within {timeout_s:g}s; send it at once", code="body_timeout"
        ) from None
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiError(
            400,
            f"request body is not valid UTF-8 (bad byte at offset {error.start}); send UTF-8 JSON",
            code="invalid_utf8",
        ) from None
    if not text.strip():
        raise ApiError(400, "request body is empty; send a JSON object", code="invalid_json")
    too_deep = False
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ApiError(
            400, f"malformed JSON: {error.msg} at line {error.lineno} column {error.colno}", code="invalid_json"
        ) from None
    except RecursionError:  # the decoder's own depth limit (about 1000 levels)
        data, too_deep = None, True
    if too_deep or json_depth(data) > MAX_JSON_DEPTH:
        raise ApiError(
            400, f"JSON nested deeper than {MAX_JSON_DEPTH} levels; send a flat object", code="json_too_deep"
        )
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object", code="invalid_json")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or '(body)'}: {item['msg']}" for item in error.errors()
        )
        first = error.errors()[0]["loc"] if error.errors() else ()
        raise ApiError(
            400,
            f"invalid request: {problems}",
            code="invalid_request",
            param=".".join(str(part) for part in first) or None,
        ) from None


def json_depth(value: object) -> int:
    """How deep objects and arrays nest in a parsed JSON value (a scalar is 0); stops counting
    past `MAX_JSON_DEPTH` (iterative: no recursion limit to hit)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if not isinstance(item, dict | list):
            continue
        deepest = max(deepest, level)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def store_outage(response: Response) -> bool:
    """True when the policy store was unreachable and that blocked the request (failing closed):
    a fault of the service, answered 503 `policy_store_unavailable`, not a verdict on the user."""
    return any(v.blocked and is_store_outage(v) for v in response.verdicts)


def store_unavailable_error(request_id: str) -> ApiError:
    """The 503 a client gets while the policy store is down (retry later; nothing is wrong with it)."""
    return ApiError(
        503,
        f"the blocking-policy store is unavailable, so the request was not answered; retry later; "
        f"request id {request_id}",
        type="server_error",
        code="policy_store_unavailable",
        audited=True,
    )


def model_response(model: BaseModel, status_code: int = 200) -> HttpResponse:
    """`model` as a JSON response; infinite scores (a fail-closed verdict) become the string "Infinity"
    (`json.dumps` refuses them, and NaN or Infinity literals are not JSON)."""
    return HttpResponse(model.model_dump_json(), status_code=status_code, media_type="application/json")


def check_text(text: str, field_name: str) -> str:
    """`text`, or a 400 when it holds lone surrogates (JSON `\\ud800` escapes are not valid Unicode text)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(
            400,
            f"{field_name} holds invalid Unicode (a lone surrogate escape); send valid text",
            code="invalid_unicode",
            param=field_name,
        ) from None
    return text


def outcome_of(response: Response) -> str:
    """The final action of a finished pipeline response: allow | block | refuse | error |
    unavailable (the policy store was down)."""
    if store_outage(response):
        return "unavailable"
    if response.finish_reason == "refused":
        return "refuse"
    if response.finish_reason == "blocked" or response.blocked:
        return "block"
    if response.finish_reason == "error":
        return "error"
    return "allow"


def stage_of(response: Response) -> str | None:
    """Where a response was blocked: policy | query | output, or None when it was not."""
    action = outcome_of(response)
    if action == "refuse":
        return "policy"
    if action != "block":
        return None
    return "output" if "generate" in response.timings_ms else "query"


def timeout_verdict(elapsed_s: float, timeout_s: float, *, fail_closed: bool) -> Verdict:
    """The verdict of a request stopped at the service timeout (BLOCK when failing closed).

    Score: elapsed seconds; threshold: the timeout (higher = more suspicious, as everywhere).
    """
    mode = "failing closed (blocked)" if fail_closed else "failing open (not blocked)"
    return Verdict(
        guard="request-timeout",
        action=Action.BLOCK if fail_closed else Action.ALLOW,
        score=round(elapsed_s, 3),
        threshold=timeout_s,
        reason=f"the request exceeded the {timeout_s:g}s timeout (a guard, the oracle or the model was too slow); "
        f"{mode}",
        evidence={"timeout_s": timeout_s, "fail_closed": fail_closed},
    )


def finish_request(
    state: ServiceState,
    *,
    endpoint: str,
    request_id: str,
    user_id: str,
    action: str,
    started: float,
    response: Response | None,
    scrubber: Scrubber,
    query_text: str,
    extra_verdicts: Sequence[Verdict] = (),
    detail: dict[str, Any] | None = None,
) -> None:
    """Write the request's audit line and update the metrics (call exactly once per request)."""
    state.audit.write(
        decision_record(
            request_id=request_id,
            endpoint=endpoint,
            user_id=user_id,
            action=action,
            response=response,
            scrubber=scrubber,
            query_text=query_text,
            extra_verdicts=extra_verdicts,
            detail=detail,
        )
    )
    state.metrics.observe(endpoint, action, time.perf_counter() - started, response)
    for verdict in extra_verdicts:
        if verdict.blocked:
            state.metrics.blocks.labels(verdict.guard, "service").inc()
