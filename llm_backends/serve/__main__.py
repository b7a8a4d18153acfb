"""Command line: serve the engine of an `llm` config group option until interrupted (see the package docstring)."""

from __future__ import annotations

import argparse
import logging
import os

from llm_backends.build import build_engine, engine_config
from llm_backends.serve.app import DEFAULT_REQUEST_TIMEOUT_S, build_app
from llm_backends.serve.body import DEFAULT_MAX_BODY_BYTES
from llm_backends.serve.server import listening_socket, uvicorn_server

log = logging.getLogger("llm_backends.serve")


def main(argv: list[str] | None = None) -> None:
    """Parse the options, load the engine, serve it in the foreground, close it on the way out."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_backends.serve", description="An OpenAI-compatible server over one of our engines.",
    )
    parser.add_argument("--engine", default="tiny", help="an option of the llm config group (configs/llm/NAME.yaml)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a field of that config (Hydra override grammar), e.g. --set kv_cache_mb=0")
    parser.add_argument("--api-key-env", help="require this environment variable's value as bearer key")
    parser.add_argument(
        "--context-length", type=int, help="the model's context in tokens (required for engines that do not report it)",
    )
    parser.add_argument(
        "--request-timeout", type=float, default=DEFAULT_REQUEST_TIMEOUT_S, metavar="SECONDS",
        help="stop a completion that is not done this long after it was accepted and answer 504 (0: no limit)",
    )
    parser.add_argument(
        "--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES, metavar="BYTES",
        help="refuse a request body larger than this (413) before reading it",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            parser.error(f"--api-key-env: environment variable {args.api_key_env} is not set")
    engine = build_engine(engine_config(args.engine, args.set), f"--engine {args.engine}")
    try:
        try:
            app = build_app(engine, api_key, args.context_length, args.request_timeout or None, args.max_body_bytes)
        except ValueError as err:
            parser.error(str(err))
        try:
            sock = listening_socket(args.host, args.port)
        except OSError as err:
            parser.error(f"--host {args.host} --port {args.port}: {err}")
        log.info("serving %s (%s) on http://%s:%d/v1", engine.model, engine.engine_id, args.host, sock.getsockname()[1])
        uvicorn_server(app, access_log=True).run(sockets=[sock])
    finally:
        engine.close()


if __name__ == "__main__":
    main()
