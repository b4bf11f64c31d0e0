"""Running the app under uvicorn: `run_server` (what `ragshield serve` runs, in the foreground)
and `BackgroundServer` (a thread of this process, for tests, benchmarks and notebooks that
want the service on loopback while sharing already-loaded models).

Both add what plain uvicorn lacks:

* a header read timeout: a connection that has not sent a complete request line and headers
  within `header_timeout_s` (after it opened, or after its previous response) is closed, so
  slow clients cannot hold connections open indefinitely (the body timeout is the app's); it is
  also the idle keep-alive timeout, longer than common client pool expiries (httpx: 5 s);
* a draining shutdown: SIGTERM (or `stop()`) first tells the app (`ServiceState.begin_drain`),
  which gives in-flight requests `shutdown_grace_s` to finish and then ends the rest with an
  error event and an audit line; uvicorn waits a few seconds longer than that before it
  cancels what is left.
"""

from __future__ import annotations

import asyncio
import math
import signal
import socket
import threading
import time
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from ragshield.errors import require_extra

GRACE_MARGIN_S = 5.0  # uvicorn's own shutdown timeout is the app's drain grace plus this


def _settings_of(app: Any) -> Any:
    state = getattr(getattr(app, "state", None), "ragshield", None)
    return getattr(state, "settings", None)


def timed_protocol(header_timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 HTTP protocol class with a header timeout.

    h11 always, not uvicorn's automatic choice: installing httptools (an extra such as `chroma`
    pulls it in through uvicorn[standard]) must not change how the service parses requests.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    base: Any = H11Protocol

    class HeaderTimeoutProtocol(base):
        """Closes a connection whose request headers do not arrive in time."""

        _header_timer: asyncio.TimerHandle | None = None
        _cycle_at_arm: object = None

        def _arm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            self._cycle_at_arm = self.cycle
            self._header_timer = self.loop.call_later(header_timeout_s, self._headers_too_slow)

        def _headers_too_slow(self) -> None:
            # uvicorn starts a new cycle when a request's headers are complete: none since the
            # timer was armed means the client is still sending them (or sent nothing)
            if self.cycle is self._cycle_at_arm and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            super().connection_lost(exc)

    return HeaderTimeoutProtocol


def _server(app: Any, *, host: str, port: int, log_level: str, on_exit: Callable[[], None] | None) -> Any:
    uvicorn: Any = require_extra("uvicorn", extra="guard", needed_for="the ragshield service")
    settings = _settings_of(app)
    header_timeout = float(getattr(settings, "header_timeout_s", 10.0))
    grace = float(getattr(settings, "shutdown_grace_s", 10.0))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        http=timed_protocol(header_timeout),
        loop="asyncio",  # not uvloop when it happens to be installed: one event loop, the tested one
        timeout_graceful_shutdown=int(grace + GRACE_MARGIN_S),
        # an idle keep-alive connection is closed by the header timeout (10 s by default), not by
        # uvicorn's 5 s default: equal to httpx's 5 s pool expiry, that raced, and a client reusing a
        # connection the server had just closed got a connection error (benchmarks/guard_service.py)
        timeout_keep_alive=math.ceil(header_timeout) + 1,
    )

    class DrainingServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if on_exit is not None:
                on_exit()
            super().handle_exit(sig, frame)

    return DrainingServer(config)


def _drain_hook(app: Any) -> Callable[[], None] | None:
    state = getattr(getattr(app, "state", None), "ragshield", None)
    hook = getattr(state, "begin_drain", None)
    return hook if callable(hook) else None


def run_server(app: Any, *, host: str, port: int, log_level: str = "info") -> None:
    """Serve `app` in the foreground until SIGTERM or SIGINT (draining first, see above)."""
    _server(app, host=host, port=port, log_level=log_level, on_exit=_drain_hook(app)).run()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on `host`."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


class BackgroundServer:
    """Runs `app` with uvicorn on `host:port` (default: a free loopback port) until `stop()`.

    Usage: `with BackgroundServer(app) as server: httpx.get(server.url + "/healthz")`.

    Raises:
        RuntimeError: the server did not start within `start_timeout_s` seconds.
    """

    def __init__(
        self, app: Any, *, host: str = "127.0.0.1", port: int | None = None, start_timeout_s: float = 30.0
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.start_timeout_s = start_timeout_s
        self._server = _server(app, host=host, port=self.port, log_level="warning", on_exit=_drain_hook(app))
        self._thread = threading.Thread(target=self._server.run, name="ragshield-uvicorn", daemon=True)

    @property
    def url(self) -> str:
        """The server root, e.g. `http://127.0.0.1:54321`."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout_s
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"the server on {self.url} exited during startup (see its log)")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server on {self.url} did not start within {self.start_timeout_s:g}s")
            time.sleep(0.02)
        return self

    def stop(self, timeout_s: float = 30.0) -> None:
        """Shut down as on SIGTERM (in-flight requests drain) and wait up to `timeout_s` seconds."""
        if self._thread.is_alive():
            self._server.handle_exit(signal.SIGTERM, None)
        self._thread.join(timeout=timeout_s)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
