"""Serve a written viewer folder on 127.0.0.1 with the standard library's HTTP server.

The pages need no server (they open from disk); serving them helps where a browser runs on
another machine than the run directory, e.g. through an SSH tunnel to the port.
"""

from __future__ import annotations

from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"


def make_server(folder: Path, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server of `folder` on 127.0.0.1:`port` (0: a free port), not yet serving."""
    handler = partial(SimpleHTTPRequestHandler, directory=str(folder))
    return ThreadingHTTPServer((HOST, port), handler)


def serve(folder: Path, port: int) -> None:
    """Serve `folder` until interrupted (Ctrl-C), printing its address."""
    with make_server(folder, port) as server:
        print(f"serving {folder} at http://{HOST}:{server.server_address[1]}/index.html (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
