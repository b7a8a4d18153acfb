"""A client for any OpenAI-compatible chat-completions server (vLLM, hosted APIs, `llm_backends.serve`).

Built on httpx (already a dependency; one pooled, thread-safe client, explicit timeouts)
rather than the `openai` package, which would add a dependency for one endpoint. Requests run
on one thread pool per engine, so at most `max_concurrency` are in flight however many threads
call the engine; the rows of one call go out together whatever their tools and parameters.

A grammar (`SamplingParams.grammar`, llguidance's Lark dialect) is sent as vLLM's
`structured_outputs: {"grammar": ...}` (vLLM >= 0.12, started with the `guidance` backend, and
`llm_backends.serve` honour it). A server that does not know the field refuses the request
(OpenAI's API answers 400), which becomes that conversation's `error`: a grammar is never
dropped by this client.

Each conversation is its own request and gets its own result: a failure becomes that result's
`error` (the URL, the HTTP status and the server's message, or the transport error, or what is
wrong with a malformed answer) and never costs the other conversations their answers.
Transport errors, timeouts, 408/409/429 and 5xx answers are retried up to `max_retries` times
with exponential backoff and jitter (tenacity: the n-th retry waits backoff_s·2^(n-1) +
U(0, backoff_s) seconds, at most 30 s); a 429 or 503 with a `Retry-After` header (seconds or an
HTTP date) waits what it asks instead, and fails at once when it asks for more than
`max_retry_after_s`. Other 4xx answers fail at once. The API key is read only from the
environment variable named by `api_key_env`; it never appears in the engine's repr, its
config, its results, its logs or the cache, and is cut out of any server message that echoes it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from llm_backends.cache import ResponseCache, open_cache
from llm_backends.engine import ChatEngine, ChatRow
from llm_backends.messages import for_wire
from llm_backends.tool_calls import parse_tool_calls, render_tool_call
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
RETRY_AFTER_STATUS = frozenset({429, 503})
SCRUBBED = "[api key removed]"


class MalformedResponse(ValueError):
    """An answer whose body is not a usable chat completion."""


def retry_after_s(response: httpx.Response) -> float | None:
    """The wait a 429 or 503 answer asks for in `Retry-After` (seconds or an HTTP date), else None."""
    value = response.headers.get("Retry-After")
    if response.status_code not in RETRY_AFTER_STATUS or value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def server_message(response: httpx.Response) -> str:
    """The server's own words: `error.message` of an OpenAI-shaped body, else the body's first 300 characters."""
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return response.text[:300]
    return str(message)[:300]


def scrub(text: str, secret: str | None) -> str:
    """`text` with every occurrence of `secret` replaced."""
    return text.replace(secret, SCRUBBED) if secret else text


def decode_json(response: httpx.Response) -> Any:
    """The JSON of a successful answer; MalformedResponse when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        raise MalformedResponse(
            f"HTTP {response.status_code} but the body is not JSON: {response.text[:300]!r}"
        ) from None


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
    if params.grammar is not None:
        body["structured_outputs"] = {"grammar": params.grammar}
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


def parse_response(data: Any, latency: float) -> ChatResult:
    """A ChatResult from a chat-completions response body; MalformedResponse says what is missing."""
    if not isinstance(data, dict):
        raise MalformedResponse(f"the body is a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedResponse(f"the answer has no choices: {json.dumps(data)[:300]}")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise MalformedResponse(f"choices[0] has no message: {json.dumps(choice)[:300]}")
    text, server_failures = response_text(message)
    calls, failures = parse_tool_calls(text)
    usage = data.get("usage") or {}
    return ChatResult(
        text=text, tool_calls=calls, parse_failures=server_failures + failures,
        prompt_tokens=usage.get("prompt_tokens", 0), completion_tokens=usage.get("completion_tokens", 0),
        latency_s=latency, finish_reason=choice.get("finish_reason") or "stop", model=data.get("model", ""),
    )


class OpenAIEngine(ChatEngine):
    """Chat completions over HTTP: concurrent, retried, one result or error per conversation, the key out of sight."""

    remote = True

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        max_concurrency: int = 8,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_retry_after_s: float = 60.0,
        cache: ResponseCache | None = None,
    ) -> None:
        super().__init__(cache)
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.engine_id = f"openai:{self.base_url}"
        self.model = model
        self.max_retries = max_retries
        self.max_retry_after_s = max_retry_after_s
        self._backoff = wait_exponential_jitter(multiplier=backoff_s, max=30.0, jitter=backoff_s)
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

    def _generate_rows(self, rows: list[ChatRow]) -> list[ChatResult]:
        """One request per row, all submitted at once (each with its own tools and parameters)."""
        return list(self._pool.map(lambda row: self._complete(request_body(self.model, row.conversation, row.tools, row.params)), rows))

    def _complete(self, body: dict[str, Any]) -> ChatResult:
        """POST one request with retries: its answer, or a result whose `error` says why there is none."""
        retrying = Retrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(self._retryable),
            before_sleep=self._log_retry,
            reraise=True,
        )
        start = time.perf_counter()
        try:
            response = retrying(self._post, body)
            return parse_response(decode_json(response), time.perf_counter() - start)
        except (httpx.HTTPError, MalformedResponse) as err:
            attempts = retrying.statistics.get("attempt_number", 1)
            error = self._describe(err) + (f" (after {attempts} attempts)" if attempts > 1 else "")
            return ChatResult(
                text="", error=f"{self.url}: {error}", latency_s=time.perf_counter() - start,
                finish_reason="error", model=self.model,
            )

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        """One attempt; HTTPStatusError for any non-2xx answer."""
        response = self._client.post("/chat/completions", json=body)
        response.raise_for_status()
        return response

    def _retryable(self, error: BaseException) -> bool:
        """Timeouts and connection failures, and HTTP 408/409/429/5xx unless Retry-After asks too much."""
        if isinstance(error, httpx.HTTPStatusError):
            asked = retry_after_s(error.response)
            return error.response.status_code in RETRY_STATUS and (asked is None or asked <= self.max_retry_after_s)
        return isinstance(error, httpx.TransportError)

    def _wait(self, state: RetryCallState) -> float:
        """What Retry-After asks for, else exponential backoff with jitter."""
        error = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(error.response) if isinstance(error, httpx.HTTPStatusError) else None
        return asked if asked is not None else self._backoff(state)

    def _log_retry(self, state: RetryCallState) -> None:
        """A warning per retry: which attempt failed, why, and how long until the next."""
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "%s: attempt %d failed (%s); retrying in %.2f s", self.url, state.attempt_number, self._describe(error), wait,
        )

    def _describe(self, error: BaseException | None) -> str:
        """One line on a failed attempt, with the API key cut out of anything the server echoed."""
        if isinstance(error, httpx.HTTPStatusError):
            text = f"HTTP {error.response.status_code}: {server_message(error.response)}"
            asked = retry_after_s(error.response)
            if asked is not None and asked > self.max_retry_after_s:
                text += f" (Retry-After asks for {asked:.0f} s, more than max_retry_after_s={self.max_retry_after_s:g})"
        elif isinstance(error, MalformedResponse):
            text = str(error)
        else:
            text = f"{type(error).__name__}: {error}"
        return scrub(text, self._api_key())

    def _api_key(self) -> str | None:
        """The key, read back from the client's header (the engine keeps no copy of its own)."""
        header = self._client.headers.get("Authorization", "")
        return header.removeprefix("Bearer ") or None

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
    max_retry_after_s: float = 60.0,
    cache: bool = True,
    cache_path: str | None = None,
    knowledge_cutoff: str | None = None,
) -> OpenAIEngine:
    """Hydra factory: an OpenAI-compatible client (the config names the key's variable, never the key)."""
    engine = OpenAIEngine(
        base_url, model, api_key_env=api_key_env, max_concurrency=max_concurrency, timeout_s=timeout_s,
        max_retries=max_retries, backoff_s=backoff_s, max_retry_after_s=max_retry_after_s,
        cache=open_cache(cache, cache_path),
    )
    engine.knowledge_cutoff = knowledge_cutoff
    return engine
