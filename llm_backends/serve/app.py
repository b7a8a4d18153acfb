"""The HTTP surface: a FastAPI app with OpenAI's routes, bearer auth and OpenAI-shaped errors.

Routes: `GET /v1/models`, `GET /v1/models/{model}`, `POST /v1/chat/completions`. The API key is
checked before the request body is read, and a body over `max_body_bytes` is refused with a 413
before it is read into memory (`body`). Every other response, a refusal included, is sent after
the request body has been read (a refused one is read and dropped), so a keep-alive connection
stays usable after a 401 or 404. Unknown routes and methods get OpenAI's error shape. A completion's `X-TradeDuel-Cache` header is `hit` when every choice was replayed from
the response cache, else `miss`. Generation runs on worker threads (see `generation`), whole
(`lifetime`: stopped when the client leaves or the request timeout passes) or streamed
(`streaming`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from llm_backends.engine import ChatEngine
from llm_backends.serve.body import DEFAULT_MAX_BODY_BYTES, discard_body, read_body
from llm_backends.serve.errors import APIError
from llm_backends.serve.generation import decode, plan_choices
from llm_backends.serve.lifetime import ClientGone, Deadline, settle
from llm_backends.serve.limits import ContextWindow
from llm_backends.serve.request import read_request
from llm_backends.serve.response import completion_body, logprobs_body, model_card
from llm_backends.serve.streaming import GenerationStream, chunk_events

log = logging.getLogger(__name__)

CACHE_HEADER = "X-TradeDuel-Cache"
CLIENT_CLOSED_REQUEST = 499
"""The status logged for a request whose client left before its answer (nginx's convention); nobody receives it."""
DEFAULT_REQUEST_TIMEOUT_S = 600.0


def error_response(error: APIError) -> JSONResponse:
    """An APIError as OpenAI sends it; a 413 closes the connection (the rest of its body is never read)."""
    return JSONResponse(error.body(), status_code=error.status, headers={"Connection": "close"} if error.status == 413 else None)


def cache_header(cached: bool) -> dict[str, str]:
    """The header saying whether the answer was replayed from the response cache."""
    return {CACHE_HEADER: "hit" if cached else "miss"}


def build_app(
    engine: ChatEngine,
    api_key: str | None = None,
    context_length: int | None = None,
    request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> FastAPI:
    """The app serving `engine`; with `api_key`, every route requires `Authorization: Bearer <api_key>`.

    `context_length` overrides the model's context (tokens of prompt plus completion) and is
    required for engines that do not report it. `request_timeout_s` (None: no limit) bounds
    the time from accepting a completion request to the end of its answer; past it the
    generation is stopped and the client gets a 504 (or, once a stream has begun, an error event).
    `max_body_bytes` bounds a request's body (a larger one is a 413, unread).
    """
    if request_timeout_s is not None and request_timeout_s <= 0:
        raise ValueError(f"request_timeout_s must be positive (or None for no limit), got {request_timeout_s}")
    if max_body_bytes < 1:
        raise ValueError(f"max_body_bytes must be positive, got {max_body_bytes}")
    window = ContextWindow.of(engine, context_length)
    created = int(time.time())

    async def admit(request: Request) -> None:
        """Check the key before the body is read (a refused body is dropped, so the connection can be reused),
        then read the body within the size limit into `request.state.body`."""
        if api_key is not None:
            scheme, _, given = request.headers.get("Authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not secrets.compare_digest(given.encode(), api_key.encode()):
                await discard_body(request, max_body_bytes)
                raise APIError(401, "missing or wrong API key in the Authorization header", code="invalid_api_key")
        request.state.body = await read_body(request, max_body_bytes)

    app = FastAPI(
        title="TradeDuel OpenAI-compatible server", docs_url=None, redoc_url=None, openapi_url=None,
        dependencies=[Depends(admit)],
    )

    @app.exception_handler(APIError)
    async def refused(request: Request, error: APIError) -> JSONResponse:
        return error_response(error)

    @app.exception_handler(ClientGone)
    async def client_left(request: Request, error: ClientGone) -> Response:
        log.info("%s %s: the client left; its generation was stopped", request.method, request.url.path)
        return Response(status_code=CLIENT_CLOSED_REQUEST)

    @app.exception_handler(HTTPException)
    async def no_route(request: Request, error: HTTPException) -> JSONResponse:
        await discard_body(request, max_body_bytes)
        where = f"{request.method} {request.url.path}"
        message = f"Invalid URL ({where})" if error.status_code == 404 else f"{error.detail} ({where})"
        return error_response(APIError(error.status_code, message))

    @app.get("/v1/models")
    async def list_models() -> dict:
        return {"object": "list", "data": [model_card(engine.model, window.length, created)]}

    @app.get("/v1/models/{model:path}")
    async def get_model(model: str) -> dict:
        if model != engine.model:
            raise APIError(404, f"The model `{model}` does not exist", param="model", code="model_not_found")
        return model_card(engine.model, window.length, created)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        job = read_request(request.state.body, engine.model)
        deadline = Deadline(request_timeout_s)
        cancel = threading.Event()
        try:
            plan = await run_in_threadpool(plan_choices, engine, window, job)
            if job.stream:
                return GenerationStream(chunk_events(engine, job, plan, cancel, deadline), cancel, cache_header(plan.cached))
            choices = await settle(asyncio.ensure_future(run_in_threadpool(decode, engine, plan, cancel)), request, cancel, deadline)
        except (APIError, ClientGone):
            raise
        except Exception as err:  # the server must answer, whatever the engine raised
            log.exception("generation failed")
            raise APIError(500, f"{type(err).__name__}: {err}", kind="server_error") from None
        results = [choice.result for choice in choices]
        failed = next((r.error for r in results if r.error is not None), None)
        if failed is not None:
            raise APIError(502, f"the engine behind this server failed: {failed}", kind="server_error")
        logprobs = [logprobs_body(engine.tokenizer, c.sampled) if c.sampled else None for c in choices] if job.logprobs else None
        body = completion_body(results, engine.model, tools_shown=bool(job.tools), logprobs=logprobs)
        return JSONResponse(body, headers=cache_header(body["cached"]))

    return app
