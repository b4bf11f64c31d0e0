"""`BackgroundServer`: a real uvicorn server for an app, in a thread of this process.

For tests, benchmarks and notebooks that want the service on loopback while sharing
already-loaded models; production runs `ragshield serve`.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any

from ragshield.errors import missing_extra


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
        try:
            import uvicorn
        except ImportError as error:  # pragma: no cover - depends on the install
            raise missing_extra("uvicorn", "server") from error
        self.host = host
        self.port = port or free_port(host)
        self.start_timeout_s = start_timeout_s
        config = uvicorn.Config(
            app, host=host, port=self.port, log_level="warning", lifespan="on", timeout_graceful_shutdown=3
        )
        self._server = uvicorn.Server(config)
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

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=15)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
