"""A client for any OpenAI-compatible chat-completions server (vLLM, hosted APIs, `llm_backends.serve`).

Built on httpx (already a dependency; one pooled, thread-safe client, explicit timeouts)
rather than the `openai` package, which would add a dependency for one endpoint. Requests run
on one thread pool per engine, so at most `max_concurrency` are in flight however many threads
call the engine. Transport errors, timeouts, 408/409/429 and 5xx answers
are retried up to `max_retries` times with exponential backoff and jitter (tenacity: the n-th
retry waits backoff_s·2^(n-1) + U(0, backoff_s) seconds, at most 30 s); other 4xx answers fail
at once with the server's message. The API key is read only from the environment variable
named by `api_key_env`; it never appears in the engine's repr, its config, its results, its
logs or the cache.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from llm_backends.cache import ResponseCache, open_cache
from llm_backends.engine import ChatEngine
from llm_backends.messages import for_wire
from llm_backends.tool_calls import parse_tool_calls, render_tool_call
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def is_retryable(error: BaseException) -> bool:
    """Timeouts and connection failures, and HTTP 408/409/429/5xx answers."""
    if isinstance(error, httpx.HTTPStatusError):
        return error.response.status_code in RETRY_STATUS
    return isinstance(error, httpx.TransportError)


def request_body(model: str, conversation: Conversation, tools: list[ToolSchema] | None, params: SamplingParams) -> dict[str, Any]:
    """The JSON body of one chat-completions request."""
    body: dict[str, Any] = {
        "model": model,
        "messages": for_wire(conversation),
        "max_tokens": params.max_new_tokens,
        "temperature": params.temperature,
        "top_p": params.top_p,
    }
    if params.stop:
        body["stop"] = list(params.stop)
    if params.seed is not None:
        body["seed"] = params.seed
    if tools:
        body["tools"] = tools
    return body


def response_text(message: dict[str, Any]) -> tuple[str, list[str]]:
    """The assistant text in the Qwen format: content followed by the server-parsed tool calls.

    Servers with a tool parser return calls in `tool_calls` with JSON-string arguments; a call
    whose arguments do not parse becomes a failure line instead of a block.
    """
    parts = [message.get("content") or ""]
    failures = []
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function", {})
        try:
            raw = function.get("arguments") or "{}"
            arguments = json.loads(raw) if isinstance(raw, str) else raw
            parts.append(render_tool_call(function["name"], arguments))
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            failures.append(f"tool call {index}: server returned unusable call ({err}): {json.dumps(call)[:200]}")
    return "\n".join(p for p in parts if p), failures


def parse_response(data: dict[str, Any], latency: float) -> ChatResult:
    """A ChatResult from a chat-completions response body."""
    choice = data["choices"][0]
    text, server_failures = response_text(choice["message"])
    calls, failures = parse_tool_calls(text)
    usage = data.get("usage") or {}
    return ChatResult(
        text=text, tool_calls=calls, parse_failures=server_failures + failures,
        prompt_tokens=usage.get("prompt_tokens", 0), completion_tokens=usage.get("completion_tokens", 0),
        latency_s=latency, finish_reason=choice.get("finish_reason") or "stop", model=data.get("model", ""),
    )


class OpenAIEngine(ChatEngine):
    """Chat completions over HTTP, concurrent, retried, with the key kept out of sight."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        max_concurrency: int = 8,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        cache: ResponseCache | None = None,
    ) -> None:
        super().__init__(cache)
        self.base_url = base_url.rstrip("/")
        self.engine_id = f"openai:{self.base_url}"
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        headers = {}
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(f"api_key_env: environment variable {api_key_env} is not set")
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(max_connections=max_concurrency),
        )
        self._pool = ThreadPoolExecutor(max_workers=max(1, max_concurrency), thread_name_prefix="llm-http")

    def _generate(
        self,
        conversations: list[Conversation],
        tools: list[ToolSchema] | None,
        params: SamplingParams,
    ) -> list[ChatResult]:
        return list(self._pool.map(lambda c: self._complete(request_body(self.model, c, tools, params)), conversations))

    def _complete(self, body: dict[str, Any]) -> ChatResult:
        """POST one request with retries; a final failure raises one line naming the URL and the cause."""
        retrying = Retrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential_jitter(multiplier=self.backoff_s, max=30.0, jitter=self.backoff_s),
            retry=retry_if_exception(is_retryable),
            reraise=True,
        )
        start = time.perf_counter()
        try:
            for attempt in retrying:
                with attempt:
                    response = self._client.post("/chat/completions", json=body)
                    response.raise_for_status()
        except httpx.HTTPStatusError as err:
            raise RuntimeError(
                f"{self.base_url}/chat/completions: HTTP {err.response.status_code}: {err.response.text[:300]}"
            ) from None
        except httpx.TransportError as err:
            raise RuntimeError(f"{self.base_url}/chat/completions: {type(err).__name__}: {err}") from None
        return parse_response(response.json(), time.perf_counter() - start)

    def close(self) -> None:
        """Stop the request threads, close the HTTP client and the cache."""
        self._pool.shutdown()
        self._client.close()
        super().close()


def openai_engine(
    base_url: str,
    model: str,
    api_key_env: str | None = None,
    max_concurrency: int = 8,
    timeout_s: float = 120.0,
    max_retries: int = 4,
    backoff_s: float = 0.5,
    cache: bool = True,
    cache_path: str | None = None,
) -> OpenAIEngine:
    """Hydra factory: an OpenAI-compatible client (the config names the key's variable, never the key)."""
    return OpenAIEngine(
        base_url, model, api_key_env=api_key_env, max_concurrency=max_concurrency,
        timeout_s=timeout_s, max_retries=max_retries, backoff_s=backoff_s, cache=open_cache(cache, cache_path),
    )
