"""The service's OpenAPI schema (with the request bodies the handlers read themselves) and the
`/openapi.json` and `/docs` routes, which need the API key unless `open_docs` is set.

The handlers parse their bodies with `read_json` (for OpenAI-shaped errors on every way a body
can be wrong), so FastAPI cannot see the bodies; they are added to the schema here from the
same pydantic models, which is also what schema-driven fuzzing (schemathesis) generates from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse

from ragshield.service.schemas import (
    ChatCompletion,
    ChatCompletionRequest,
    ErrorBody,
    GuardOutputRequest,
    GuardOutputResponse,
    GuardQueryRequest,
    GuardQueryResponse,
    ModelList,
)

REF = "#/components/schemas/{model}"
BODIES: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "/v1/chat/completions": (ChatCompletionRequest, ChatCompletion),
    "/v1/guard/query": (GuardQueryRequest, GuardQueryResponse),
    "/v1/guard/output": (GuardOutputRequest, GuardOutputResponse),
}
ERRORS = {
    "400": "bad input (malformed or too deeply nested JSON, invalid fields, bad query)",
    "401": "missing or unknown API key",
    "403": "the user is blocked (`user_blocked`), or a cross-origin request to a key-less server",
    "404": "unknown model",
    "408": "the body did not arrive within `body_timeout_s`",
    "413": "body over `max_body_bytes`",
    "415": "not application/json (key-less servers)",
    "503": "`policy_store_unavailable` or `server_shutting_down`: retry later",
}


def _schema_of(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template=REF)
    components.update(schema.pop("$defs", {}))
    components[model.__name__] = schema
    return {"$ref": REF.format(model=model.__name__)}


def build_schema(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of `app`, with request and response bodies and bearer auth."""
    schema = get_openapi(title=app.title, version="1", summary=app.summary, routes=app.routes)
    components: dict[str, Any] = schema.setdefault("components", {}).setdefault("schemas", {})
    error = _schema_of(ErrorBody, components)
    state = getattr(app.state, "ragshield", None)
    for path, (request_model, response_model) in BODIES.items():
        operation = schema["paths"][path]["post"]
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _schema_of(request_model, components)}},
        }
        answer = {"application/json": {"schema": _schema_of(response_model, components)}}
        responses: dict[str, Any] = {"200": {"description": "the answer", "content": answer}}
        for status, description in ERRORS.items():
            responses[status] = {"description": description, "content": {"application/json": {"schema": error}}}
        operation["responses"] = responses
    if state is not None:  # the one model id this server answers to (any other is a 404)
        components["ChatCompletionRequest"]["properties"]["model"]["enum"] = [state.settings.model_name]
    models = schema["paths"]["/v1/models"]["get"]
    models["responses"] = {
        "200": {
            "description": "the served model",
            "content": {"application/json": {"schema": _schema_of(ModelList, components)}},
        }
    }
    schema["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    schema["security"] = [{"bearer": []}]
    return schema


def add_docs(app: FastAPI, authorize: Callable[[Request], object]) -> None:
    """Serve `/openapi.json` and `/docs`; `authorize(request)` raises (401) to refuse."""
    cached: dict[str, Any] = {}

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi_json(request: Request) -> JSONResponse:
        authorize(request)
        if not cached:
            cached.update(build_schema(app))
        return JSONResponse(cached)

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        authorize(request)
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} - API")
