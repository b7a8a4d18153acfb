"""An OpenAI-compatible HTTP server over any of our engines, on FastAPI and uvicorn.

    python -m llm_backends.serve --engine tiny --port 8000
    python -m llm_backends.serve --engine smollm2 --port 8000 --set cache=false

Endpoints: `GET /v1/models`, `GET /v1/models/{model}`, `POST /v1/chat/completions` (messages,
tools, tool_choice auto/none, temperature, top_p, max_tokens / max_completion_tokens, stop,
seed; one choice, no streaming yet). Requests are validated as OpenAI does and refused with
OpenAI's error shape (`request`); `max_tokens` is bounded by the model's context (`limits`);
tool calls come back in `message.tool_calls` (`response`); generation runs on worker threads,
so the server keeps answering while the engine works (`generation`). With `--api-key-env NAME`
it requires `Authorization: Bearer $NAME`. In Python, `start_server(engine)` serves on a
background thread and `build_app(engine)` gives the ASGI app.

Modules: `request` (reading and refusing), `limits` (context window), `generation` (the engine
call), `response` (bodies), `errors` (OpenAI's error shape), `app` (routes), `server` (uvicorn),
`__main__` (the command).
"""

from llm_backends.serve.app import build_app
from llm_backends.serve.server import BackgroundServer, start_server

__all__ = ["BackgroundServer", "build_app", "start_server"]
