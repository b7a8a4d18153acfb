"""Finding 5: the server read and tokenised a 50 MB body before refusing it (103 s, +1.9 GB), read the
body before checking the API key, answered `seed: 2**64` with a 500 and gave `2**63` and `-2**63` the
same sample, and took a tool whose `parameters` is not a JSON schema unless `tool_choice` was
`required`. Against the real server on 127.0.0.1 with the tiny model behind it."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from llm_backends.sampling import DISTINCT_SEEDS
from llm_backends.serve import start_server
from llm_backends.serve.body import DEFAULT_MAX_BODY_BYTES

pytestmark = pytest.mark.timeout(120)

SECRET = "sk-limits-test"
LIMIT = 64 * 1024
HI = [{"role": "user", "content": "hi"}]
FIFTY_MB = 50 * 1024 * 1024


@pytest.fixture(scope="module")
def limited(tiny):
    """The tiny engine served with a 64 KiB body limit and an API key."""
    with start_server(tiny, api_key=SECRET, max_body_bytes=LIMIT) as server:
        yield server


def head_only(server, content_length: int, key: str = SECRET) -> str:
    """Send the headers of a POST declaring `content_length` body bytes and none of the body; the status line."""
    host, port = "127.0.0.1", server.port
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall((f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {content_length}\r\n\r\n").encode())
        return sock.recv(4096).decode().splitlines()[0]


def test_a_body_over_the_limit_is_refused_before_it_is_sent_at_all(limited):
    """The server answers the headers of a 50 MB request without waiting for a byte of its body."""
    assert head_only(limited, FIFTY_MB) == "HTTP/1.1 413 Request Entity Too Large"


def test_a_wrong_key_is_refused_before_the_body_is_read(limited):
    assert head_only(limited, FIFTY_MB, key="wrong") == "HTTP/1.1 401 Unauthorized"


def test_an_oversized_body_with_or_without_a_length_is_a_413_naming_the_limit(limited):
    big = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * (2 * LIMIT)}]}).encode()
    headers = {"Authorization": f"Bearer {SECRET}", "Content-Type": "application/json"}
    declared = httpx.post(f"{limited.url}/chat/completions", content=big, headers=headers, timeout=30)
    chunked = httpx.post(f"{limited.url}/chat/completions", content=iter([big[i:i + 8192] for i in range(0, len(big), 8192)]),
                         headers=headers, timeout=30)
    for answer, size in ((declared, f"{len(big)} bytes"), (chunked, f"over {LIMIT} bytes")):
        assert answer.status_code == 413 and answer.headers["connection"] == "close"
        assert answer.json()["error"] == {"message": f"the request body is {size}; this server takes at most {LIMIT} "
                                                     "bytes (--max-body-bytes)", "type": "invalid_request_error",
                                          "param": None, "code": "request_too_large"}
    small = httpx.post(f"{limited.url}/chat/completions", headers=headers, timeout=60,
                       json={"model": "wrong-model", "messages": HI})
    assert small.status_code == 404, "a body within the limit is read as before"
    assert DEFAULT_MAX_BODY_BYTES == 2 * 1024 * 1024


@pytest.mark.parametrize(("seed", "n", "message"), [
    (2**64, 1, "seed: Input should be less than 4294967296"),
    (2**63, 1, "seed: Input should be less than 4294967296"),
    (-2**63, 1, "seed: Input should be greater than or equal to 0"),
    (DISTINCT_SEEDS - 2, 3, "seed: choice i samples with seed + i, so with n=3 the seed may be at most 4294967293, "
                            "got 4294967294"),
])
def test_a_seed_outside_the_engines_range_is_a_400(tiny_server, tiny, seed, n, message):
    answer = httpx.post(f"{tiny_server.url}/chat/completions", timeout=60,
                        json={"model": tiny.model, "messages": HI, "seed": seed, "n": n, "max_tokens": 2})
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "seed"
    assert answer.json()["error"]["message"] == message


def test_distinct_seeds_at_the_ends_of_the_range_give_distinct_samples(tiny_server, tiny):
    def sample(seed):
        body = {"model": tiny.model, "messages": HI, "seed": seed, "max_tokens": 12, "temperature": 1.0}
        return httpx.post(f"{tiny_server.url}/chat/completions", json=body, timeout=60).json()["choices"][0]["message"]["content"]

    low, high = sample(0), sample(DISTINCT_SEEDS - 1)
    assert low != high and sample(0) == low, "each seed samples its own text, the same every time"


NOT_A_SCHEMA = [
    ({"type": "object", "properties": {"ticker": {"type": "text"}}}, "tools[0].function.parameters.properties.ticker.type"),
    ({"type": "object", "required": "ticker"}, "tools[0].function.parameters.required"),
    ({"type": "string"}, "tools[0].function.parameters.type: the arguments of a call are an object"),
    ("ticker: str", "tools[0].function.parameters: must be a JSON schema object, got str"),
]


@pytest.mark.parametrize("tool_choice", ["auto", "none", "required", None])
@pytest.mark.parametrize(("parameters", "message"), NOT_A_SCHEMA)
def test_tool_parameters_that_are_not_a_json_schema_are_refused_for_every_tool_choice(tiny_server, tiny, tool_choice,
                                                                                       parameters, message):
    tool = {"type": "function", "function": {"name": "get_news", "parameters": parameters}}
    answer = httpx.post(f"{tiny_server.url}/chat/completions", timeout=60, json={
        "model": tiny.model, "messages": HI, "tools": [tool], "tool_choice": tool_choice, "max_tokens": 2})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"].startswith(message)
