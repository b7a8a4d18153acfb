"""The HTTP surface: a FastAPI app with OpenAI's routes, bearer auth and OpenAI-shaped errors.

Routes: `GET /v1/models`, `GET /v1/models/{model}`, `POST /v1/chat/completions`. Every
response, a refusal included, is sent after the request body has been read, so a keep-alive
connection stays usable after a 401 or 404. Unknown routes and methods get OpenAI's error
shape. A completion's `X-TradeDuel-Cache` header is `hit` when the answer was replayed from
the response cache, else `miss`. Generation runs on a worker thread (see `generation`).
"""

from __future__ import annotations

import logging
import secrets
import time

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from llm_backends.engine import ChatEngine
from llm_backends.serve.errors import APIError
from llm_backends.serve.generation import answer
from llm_backends.serve.limits import ContextWindow
from llm_backends.serve.request import read_request
from llm_backends.serve.response import completion_body, model_card

log = logging.getLogger(__name__)

CACHE_HEADER = "X-TradeDuel-Cache"


def error_response(error: APIError) -> JSONResponse:
    """An APIError as OpenAI sends it."""
    return JSONResponse(error.body(), status_code=error.status)


def build_app(engine: ChatEngine, api_key: str | None = None, context_length: int | None = None) -> FastAPI:
    """The app serving `engine`; with `api_key`, every route requires `Authorization: Bearer <api_key>`.

    `context_length` overrides the model's context (tokens of prompt plus completion) and is
    required for engines that do not report it.
    """
    window = ContextWindow.of(engine, context_length)
    created = int(time.time())

    async def admit(request: Request) -> None:
        """Read the body first (so the connection can be reused whatever the answer), then check the key."""
        await request.body()
        if api_key is None:
            return
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(given.encode(), api_key.encode()):
            raise APIError(401, "missing or wrong API key in the Authorization header", code="invalid_api_key")

    app = FastAPI(
        title="TradeDuel OpenAI-compatible server", docs_url=None, redoc_url=None, openapi_url=None,
        dependencies=[Depends(admit)],
    )

    @app.exception_handler(APIError)
    async def refused(request: Request, error: APIError) -> JSONResponse:
        return error_response(error)

    @app.exception_handler(HTTPException)
    async def no_route(request: Request, error: HTTPException) -> JSONResponse:
        await request.body()
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
    async def chat_completions(request: Request) -> JSONResponse:
        job = read_request(await request.body(), engine.model)
        try:
            result = await run_in_threadpool(answer, engine, window, job)
        except APIError:
            raise
        except Exception as err:  # the server must answer, whatever the engine raised
            log.exception("generation failed")
            raise APIError(500, f"{type(err).__name__}: {err}", kind="server_error") from None
        body = completion_body(result, engine.model, tools_shown=bool(job.tools))
        return JSONResponse(body, headers={CACHE_HEADER: "hit" if result.cached else "miss"})

    return app
