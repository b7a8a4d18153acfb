"""Request bodies within a size limit: refused before they are read into memory, never tokenised.

`read_body` takes a request's body only when it fits `limit` bytes: a `Content-Length` above the
limit is refused at once, unread; a body sent without one (chunked) is counted as it arrives and
refused as soon as it passes the limit, so at most `limit` bytes are ever held. Either way the
answer is a 413 and the connection is closed (the rest of the body is never read). A request
refused for another reason before its body was read (a missing API key) has its body read and
dropped by `discard_body`, up to the limit, so that a keep-alive connection stays usable.
"""

from __future__ import annotations

from starlette.requests import Request

from llm_backends.serve.errors import APIError, bad_request

DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024
"""2 MiB: a 128K-token context, the longest of the models we serve, is about 0.5 MB of English text."""


def too_large(size: str, limit: int) -> APIError:
    return APIError(413, f"the request body is {size}; this server takes at most {limit} bytes (--max-body-bytes)",
                    code="request_too_large")


def declared_length(request: Request) -> int | None:
    """The request's `Content-Length`, None when it has none; a malformed one is a 400."""
    header = request.headers.get("content-length")
    if header is None:
        return None
    if not header.strip().isdigit():
        raise bad_request(None, f"Content-Length: {header!r} is not a number of bytes")
    return int(header)


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body when it is at most `limit` bytes, else a 413 (see the module docstring)."""
    declared = declared_length(request)
    if declared is not None and declared > limit:
        raise too_large(f"{declared} bytes", limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(f"over {limit} bytes", limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def discard_body(request: Request, limit: int) -> None:
    """Read and drop the body, up to `limit` bytes (a larger one is left unread: its connection closes)."""
    declared = declared_length(request)
    if declared is not None and declared > limit:
        return
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return
