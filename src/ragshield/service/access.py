"""Who may call a key-less service: its own machine, with JSON, from no web page but its own.

Without `api_keys` every request is the one anonymous user, and the server binds loopback only.
Loopback does not keep out a web page open in a browser on the same machine: a page can POST a
"simple" cross-origin request (`text/plain` body, no preflight), and although it cannot read
the answer, the request still counts towards the anonymous user's policy window, so a page can
get that shared user blocked. A page can also reach the server through a DNS name it controls
that resolves to 127.0.0.1 (DNS rebinding), where its requests look same-origin.

So in key-less mode a request to `/v1/...` or the docs must

* name a loopback host in its `Host` header (a rebound DNS name is not one: 421);
* carry no `Origin` other than the server's own, and no `Sec-Fetch-Site` other than
  `same-origin` or `none` (403 `cross_origin_forbidden`);
* send a POST body as `application/json` (415 `unsupported_media_type`): a browser sends JSON
  across origins only after a CORS preflight, which this server never grants.

With keys a web page cannot authenticate (it does not hold the key), so none of this applies.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request

from ragshield.service.settings import ServeConfig, is_loopback
from ragshield.service.state import ApiError

_SAME_SITE_OK = {"same-origin", "none"}


def _host_name(host_header: str) -> str:
    """The host of a `Host` header value (`[::1]:8000` -> `::1`, `localhost:8000` -> `localhost`)."""
    if host_header.startswith("["):
        return host_header[1:].partition("]")[0]
    return host_header.rpartition(":")[0] if host_header.count(":") == 1 else host_header


def check_keyless_request(request: Request, settings: ServeConfig) -> None:
    """Refuse what a web page could send to a key-less server (see the module docstring).

    Raises:
        ApiError: 421 for a non-loopback `Host`, 403 for a cross-origin request, 415 for a POST
            body that is not `application/json`. Nothing when the server has `api_keys`.
    """
    if settings.api_keys is not None:
        return
    host = request.headers.get("host", "")
    if not host or not is_loopback(_host_name(host)):
        raise ApiError(
            421,
            "this key-less server answers loopback host names only (Host: 127.0.0.1, localhost or [::1])",
            code="misdirected_request",
        )
    origin = request.headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        own = f"{request.url.scheme}://{host}".lower()
        if origin.lower() != own or not parts.hostname or not is_loopback(parts.hostname):
            raise ApiError(
                403,
                "cross-origin requests are refused by a server without api_keys; call it from the same machine "
                "without a browser, or configure api_keys",
                type="permission_error",
                code="cross_origin_forbidden",
            )
    site = request.headers.get("sec-fetch-site")
    if site is not None and site.lower() not in _SAME_SITE_OK:
        raise ApiError(
            403,
            "cross-site requests are refused by a server without api_keys; configure api_keys",
            type="permission_error",
            code="cross_origin_forbidden",
        )
    if request.method == "POST":
        media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            raise ApiError(
                415,
                f"send the body as application/json (got {media_type or 'no content type'!r})",
                code="unsupported_media_type",
            )
