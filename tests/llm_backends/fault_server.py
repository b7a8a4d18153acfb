"""A real HTTP server on 127.0.0.1 whose every answer a test scripts, to put HTTP clients through failures.

`FaultServer(script)` calls `script(number, body, headers)` for the n-th POST (numbered from 0,
in arrival order) and sends back the `Reply` it returns: a status, a body (a dict is sent as
JSON, a string as it is), headers, or a hang until the server closes. It records when each
request arrived and what it carried.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    body: dict[str, Any] | str = ""
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    """Answer nothing until the server closes (a request that outlives the client's timeout)."""


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    at: float
    body: dict[str, Any]
    headers: dict[str, str]


Script = Callable[[int, dict[str, Any], dict[str, str]], Reply]


def completion(text: str, prompt_tokens: int = 3, completion_tokens: int = 1) -> dict[str, Any]:
    """A well-formed chat-completions body answering `text`."""
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "model": "fault-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def in_order(*replies: Reply) -> Script:
    """A script that answers the n-th request with the n-th reply, and the last reply from then on."""
    return lambda number, body, headers: replies[min(number, len(replies) - 1)]


def last_user_text(body: dict[str, Any]) -> str:
    """The content of the request's last message."""
    return body["messages"][-1]["content"]


class FaultServer:
    """A ThreadingHTTPServer on a free port of 127.0.0.1 answering POSTs by `script`; use as a context manager."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_port}/v1"
        threading.Thread(target=self._http.serve_forever, name="fault-server", daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
                pass

            def do_POST(self) -> None:  # noqa: N802 (stdlib name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = server._record(body, dict(self.headers))
                if reply.hang:
                    server._closing.wait()
                    return
                data = (json.dumps(reply.body) if isinstance(reply.body, dict) else reply.body).encode()
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            number = len(self.received)
            self.received.append(Received(time.monotonic(), body, headers))
        return self.script(number, body, headers)

    def gaps(self) -> list[float]:
        """Seconds between consecutive requests' arrivals."""
        times = [r.at for r in self.received]
        return [b - a for a, b in zip(times, times[1:])]

    def close(self) -> None:
        """Release hanging requests and stop serving."""
        self._closing.set()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> FaultServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
