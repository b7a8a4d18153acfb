"""An OpenAI-compatible HTTP server over any of our engines, on FastAPI and uvicorn.

    python -m llm_backends.serve --engine tiny --port 8000
    python -m llm_backends.serve --engine smollm2 --port 8000 --set cache=false --request-timeout 300

Endpoints: `GET /v1/models`, `GET /v1/models/{model}`, `POST /v1/chat/completions` (messages,
tools, tool_choice, temperature, top_p, max_tokens / max_completion_tokens, stop, seed, n,
stream with stream_options.include_usage, logprobs, response_format, vLLM's
structured_outputs.grammar). Requests are validated as OpenAI does and refused with OpenAI's
error shape (`request`); `max_tokens` is bounded by the model's context (`limits`);
`response_format` and a forced `tool_choice` become grammars for constrained decoding
(`constraints`); tool calls come back in `message.tool_calls` (`response`). Generation runs on
worker threads, so the server keeps answering while the engine works (`generation`); it is
stopped when the client leaves or the request timeout passes (`lifetime`), and streamed
token by token as it is sampled (`streaming`, `detokenizer`, `deltas`). With
`--api-key-env NAME` it requires `Authorization: Bearer $NAME`. In Python, `start_server(engine)`
serves on a background thread and `build_app(engine)` gives the ASGI app.

Modules: `request` (reading and refusing), `limits` (context window), `constraints` (grammars),
`generation` (the engine call), `lifetime` (disconnects and timeouts), `streaming` (server-sent
events), `detokenizer` (ids to text as they come), `deltas` (text to content and tool-call
deltas), `response` (bodies), `errors` (OpenAI's error shape), `app` (routes), `server`
(uvicorn), `__main__` (the command).
"""

from llm_backends.serve.app import build_app
from llm_backends.serve.server import BackgroundServer, start_server

__all__ = ["BackgroundServer", "build_app", "start_server"]
