"""Running the app on uvicorn: in the foreground (the command) or on a background thread (tests, notebooks).

The listening socket is opened before uvicorn starts, so its port is known at once (port 0
picks a free one) and connections made right away wait in the backlog instead of being refused.
"""

from __future__ import annotations

import socket
import threading
import time

import uvicorn
from fastapi import FastAPI

from llm_backends.engine import ChatEngine
from llm_backends.serve.app import DEFAULT_REQUEST_TIMEOUT_S, build_app
from llm_backends.serve.body import DEFAULT_MAX_BODY_BYTES

GRACEFUL_SHUTDOWN_S = 5
"""How long stopping waits for requests in flight before cancelling them (which stops their generations)."""


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) and listening."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen()
    return sock


def uvicorn_server(app: FastAPI, access_log: bool) -> uvicorn.Server:
    """A uvicorn server for `app` that leaves the process's logging configuration alone."""
    config = uvicorn.Config(
        app, lifespan="off", log_config=None, access_log=access_log, timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    return uvicorn.Server(config)


class BackgroundServer:
    """The app served on a daemon thread; `url` is its base URL (ending in /v1). Stop it with `close()`."""

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> None:
        self._socket = listening_socket(host, port)
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://{host}:{self.port}/v1"
        self._server = uvicorn_server(app, access_log=False)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="llm-serve", daemon=True,
        )
        self._thread.start()
        while not self._server.started:  # a failed start must not leave clients waiting in the backlog
            if not self._thread.is_alive():
                self._socket.close()
                raise RuntimeError("the server thread stopped before serving; its error is in the log")
            time.sleep(0.01)

    def close(self) -> None:
        """Stop accepting requests, let those in flight finish (up to GRACEFUL_SHUTDOWN_S), join the thread."""
        self._server.should_exit = True
        self._thread.join()
        self._socket.close()

    def __enter__(self) -> BackgroundServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_server(
    engine: ChatEngine,
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str | None = None,
    context_length: int | None = None,
    request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> BackgroundServer:
    """Serve `engine` on a background thread (see `build_app` for the options); the engine stays the caller's to close."""
    return BackgroundServer(build_app(engine, api_key, context_length, request_timeout_s, max_body_bytes), host, port)
