"""How long a generation may run: while its client is connected, and within the request timeout.

A generation runs on a worker thread with a cancel event that the decode loop checks before
every step. When the client closes its connection first, or the request timeout passes, the
event is set (the engine ends those rows at once and is free for other requests) and the
answer is given up: nothing is sent to a client that is gone (the access log shows 499), a
timeout is a 504 in OpenAI's error shape. The timeout counts from the moment the request was
accepted, queueing behind other requests included.

The client's departure is read from the ASGI channel: once the body has been read, the next
message uvicorn delivers is `http.disconnect`, when the connection closes. (A streamed answer
leaves this to Starlette's `StreamingResponse`, which listens on the same channel.)
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from llm_backends.serve.errors import APIError

log = logging.getLogger(__name__)


class ClientGone(Exception):
    """The client closed its connection before its answer was ready."""


@dataclass(frozen=True)
class Deadline:
    """The request timeout of one request (None: no limit), counted from its creation."""

    timeout_s: float | None
    start: float = field(default_factory=time.monotonic)

    def left(self) -> float | None:
        """Seconds left (never negative), None without a limit."""
        if self.timeout_s is None:
            return None
        return max(0.0, self.start + self.timeout_s - time.monotonic())

    def error(self) -> APIError:
        """The answer to a request that ran out of time."""
        return APIError(
            504, f"the answer was not ready within this server's request timeout ({self.timeout_s:g} s); "
            "its generation was stopped", kind="server_error", code="timeout",
        )


async def client_gone(request: Request) -> None:
    """Return once the client has closed its connection (call it after the body has been read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def log_failure(work: asyncio.Future) -> None:
    """Log the exception of a generation whose answer was given up (so that it is not lost)."""
    if not work.cancelled() and work.exception() is not None:
        log.error("an abandoned generation failed", exc_info=work.exception())


async def settle(work: asyncio.Future, request: Request, cancel: threading.Event, deadline: Deadline) -> Any:
    """The result of `work`; when the client leaves or time runs out first, set `cancel` and raise ClientGone or the 504."""
    gone = asyncio.ensure_future(client_gone(request))
    try:
        done, _ = await asyncio.wait({work, gone}, timeout=deadline.left(), return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not work.done():
            cancel.set()
            work.add_done_callback(log_failure)
    if work in done:
        return work.result()
    if gone in done:
        raise ClientGone
    raise deadline.error()
