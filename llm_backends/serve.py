"""A small OpenAI-compatible HTTP server over any of our engines.

    python -m llm_backends.serve --engine tiny --port 8000
    python -m llm_backends.serve --engine smollm2 --port 8000 --set cache=false

Endpoints: `GET /v1/models`, `POST /v1/chat/completions` (messages, tools, temperature,
top_p, max_tokens / max_completion_tokens, stop, seed; n = 1, no streaming). Tool calls come
back in `message.tool_calls` with JSON-string arguments, like vLLM's tool parser. Requests are
handled on threads; the engine serialises generation. With `--api-key-env NAME` the server
requires `Authorization: Bearer $NAME`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import ValidationError

from llm_backends.configs import load_engine
from llm_backends.engine import ChatEngine
from llm_backends.messages import wire_tool_call
from llm_backends.types import ChatResult, SamplingParams

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 256


class RequestError(ValueError):
    """A client error: answered with HTTP 400 and the message."""


def sampling_from_request(body: dict[str, Any]) -> SamplingParams:
    """SamplingParams from a chat-completions body (OpenAI defaults: temperature 1, top_p 1)."""
    if body.get("n", 1) != 1 or body.get("stream"):
        raise RequestError("only n=1 without streaming is supported")
    try:
        return SamplingParams(
            temperature=body.get("temperature", 1.0),
            top_p=body.get("top_p", 1.0),
            max_new_tokens=body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS,
            stop=body.get("stop"),
            seed=body.get("seed"),
        )
    except ValidationError as err:
        raise RequestError("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())) from None


def completion_body(result: ChatResult, model: str) -> dict[str, Any]:
    """The chat-completions response for one result (text untouched unless tool blocks are cut out)."""
    content = result.content if result.tool_calls else result.text
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if result.tool_calls:
        message["tool_calls"] = [wire_tool_call(c) for c in result.tool_calls]
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": result.finish_reason}],
        "usage": {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
        },
    }


def make_handler(engine: ChatEngine, api_key: str | None = None) -> type[BaseHTTPRequestHandler]:
    """A request-handler class bound to `engine` (and to a required bearer key, if given)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
            log.debug("%s " + format, self.address_string(), *args)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str) -> None:
            self._send(status, {"error": {"message": message, "type": kind}})

        def _authorised(self) -> bool:
            if api_key is None or self.headers.get("Authorization") == f"Bearer {api_key}":
                return True
            self._error(401, "missing or wrong API key", "authentication_error")
            return False

        def do_GET(self) -> None:  # noqa: N802 (stdlib name)
            if not self._authorised():
                return
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": engine.model, "object": "model", "owned_by": "tradeduel"}]})
            else:
                self._error(404, f"no route {self.path}", "not_found")

        def do_POST(self) -> None:  # noqa: N802 (stdlib name)
            if not self._authorised():
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._error(404, f"no route {self.path}", "not_found")
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                params = sampling_from_request(body)
                result = engine.generate_one(body.get("messages"), body.get("tools"), params)
            except (RequestError, ValueError) as err:
                self._error(400, str(err), "invalid_request_error")
                return
            except Exception as err:  # the server must answer, whatever the engine raised
                log.exception("generation failed")
                self._error(500, f"{type(err).__name__}: {err}", "server_error")
                return
            self._send(200, completion_body(result, engine.model))

    return Handler


def start_server(engine: ChatEngine, host: str = "127.0.0.1", port: int = 0, api_key: str | None = None) -> ThreadingHTTPServer:
    """Serve `engine` on a background thread; port 0 picks a free port (see `server.server_port`).

    Stop it with `server.shutdown(); server.server_close()`.
    """
    server = ThreadingHTTPServer((host, port), make_handler(engine, api_key))
    threading.Thread(target=server.serve_forever, name="llm-serve", daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> None:
    """Command line: serve the engine of a `configs/llm` config until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="tiny", help="config name in configs/llm (or a yaml path)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    parser.add_argument("--api-key-env", help="require this environment variable's value as bearer key")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            parser.error(f"--api-key-env: environment variable {args.api_key_env} is not set")
    engine = load_engine(args.engine, args.set)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(engine, api_key))
    log.info("serving %s (%s) on http://%s:%d/v1", engine.model, engine.engine_id, args.host, server.server_port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        engine.close()


if __name__ == "__main__":
    main()
