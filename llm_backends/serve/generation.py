"""One accepted chat job on the engine: the completion budget, the engine call, its failures as APIErrors.

`answer` is synchronous and runs on a worker thread, so the event loop keeps answering other
requests while the engine generates.
"""

from __future__ import annotations

from llm_backends.engine import ChatEngine
from llm_backends.serve.errors import APIError, bad_request
from llm_backends.serve.limits import ContextWindow
from llm_backends.serve.request import ChatJob
from llm_backends.types import ChatResult


def answer(engine: ChatEngine, window: ContextWindow, job: ChatJob) -> ChatResult:
    """The engine's result for `job`; a 400 for what the engine finds wrong with it, a 502 when it failed."""
    try:
        budget = window.completion_budget(job.max_tokens, job.max_tokens_param, job.conversation, job.tools)
        result = engine.generate_one(job.conversation, job.tools, job.params(budget))
    except ValueError as err:  # the engine's word on malformed messages or tools
        raise bad_request(None, str(err)) from None
    if result.error is not None:
        raise APIError(502, f"the engine behind this server failed: {result.error}", kind="server_error")
    return result
