"""`llm_backends.serve` as real clients meet it: the `openai` SDK, LangChain's ChatOpenAI and plain
HTTP, against the server on 127.0.0.1 with the tiny model behind it (no mocks)."""

import json
import threading
import time

import httpx
import httpx2
import openai
import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from llm_test_helpers import conversation

from llm_backends.openai_engine import OpenAIEngine
from llm_backends.paths import CACHE_ENV
from llm_backends.serve import build_app, start_server
from llm_backends.serve.app import CACHE_HEADER
from llm_backends.tiny import tiny_engine
from llm_backends.types import SamplingParams

SECRET = "sk-serve-test-key"
HI = [{"role": "user", "content": "hi"}]
LONG_S = 3.0


@tool
def get_news_data(ticker: str) -> str:
    """Latest headlines about a ticker."""
    return f"headlines about {ticker}"


@pytest.fixture(scope="module")
def engine(tiny_dir, tmp_path_factory):
    """The tiny model with a response cache of its own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV, str(tiny_dir))
        built = tiny_engine(cache=True, cache_path=str(tmp_path_factory.mktemp("serve") / "responses.sqlite"))
    yield built
    built.close()


@pytest.fixture(scope="module")
def server(engine):
    with start_server(engine) as srv:
        yield srv


@pytest.fixture(scope="module")
def sdk(server):
    return openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0)


def prompt_tokens(engine, messages, tools=None) -> int:
    """The prompt length as the engine counts it."""
    return len(engine.tokenizer(engine.render(messages, tools), add_special_tokens=False)["input_ids"])


def test_sdk_chat_matches_the_engine_and_lists_the_model(sdk, engine, tiny):
    answer = sdk.chat.completions.create(model=engine.model, messages=HI, max_tokens=4, temperature=0)
    direct = tiny.generate_one(HI, params=SamplingParams(max_new_tokens=4, temperature=0))
    assert tiny.model == engine.model and tiny.cache is None, "the same weights, answering afresh"
    assert answer.choices[0].message.content == (direct.text or None)
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (direct.prompt_tokens, direct.completion_tokens)
    assert answer.usage.total_tokens == direct.prompt_tokens + direct.completion_tokens
    assert [m.id for m in sdk.models.list()] == [engine.model]
    assert sdk.models.retrieve(engine.model).max_model_len == 4096
    with pytest.raises(openai.NotFoundError):
        sdk.models.retrieve("gpt-4o")


def client_ports(log: list) -> httpx2.Client:
    """An HTTP client for the SDK that records the local address each response came in on."""
    def record(response):
        log.append(response.extensions["network_stream"].get_extra_info("client_addr"))

    return httpx2.Client(event_hooks={"response": [record]})


def test_keep_alive_survives_a_404_then_chat(server, engine):
    seen = []
    sdk = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, http_client=client_ports(seen))
    with pytest.raises(openai.NotFoundError) as refused:
        sdk.embeddings.create(model=engine.model, input="a long input " * 20_000)
    assert refused.value.body == {"message": "Invalid URL (POST /v1/embeddings)", "type": "invalid_request_error", "param": None, "code": None}
    answer = sdk.chat.completions.create(model=engine.model, messages=HI, max_tokens=2, temperature=0)
    assert answer.usage.completion_tokens <= 2
    assert len(seen) == 2 and seen[0] == seen[1], "both answers came over one connection"


def test_keep_alive_survives_a_401_then_chat(engine):
    seen = []
    with start_server(engine, api_key=SECRET) as keyed:
        sdk = openai.OpenAI(base_url=keyed.url, api_key=SECRET, max_retries=0, http_client=client_ports(seen))
        with pytest.raises(openai.AuthenticationError) as refused:
            sdk.chat.completions.create(model=engine.model, messages=HI, max_tokens=2, extra_headers={"Authorization": "Bearer wrong"})
        assert refused.value.code == "invalid_api_key" and SECRET not in str(refused.value.body)
        assert sdk.chat.completions.create(model=engine.model, messages=HI, max_tokens=2).usage.completion_tokens <= 2
    assert len(seen) == 2 and seen[0] == seen[1]


REFUSED = [
    ({"max_tokens": 0}, "max_tokens", "max_tokens: Input should be greater than or equal to 1"),
    ({"max_completion_tokens": 0}, "max_completion_tokens", "greater than or equal to 1"),
    ({"max_tokens": 5, "max_completion_tokens": 6}, "max_tokens", "disagree; send one"),
    ({"stop": 5}, "stop", "stop: must be a string, a list of up to 4 strings, or null; got 5"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop", "up to 4 strings"),
    ({"temperature": 2.5}, "temperature", "temperature: Input should be less than or equal to 2"),
    ({"temperature": "hot"}, "temperature", "temperature: Input should be a valid number"),
    ({"seed": 1.5}, "seed", "seed: Input should be a valid integer"),
    ({"extra_body": {"best_of": 3}}, "best_of", "Unrecognized request argument supplied: best_of"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "messages", "messages[0].role: must be one of"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}, "messages",
     "messages[0].content[0]: only {'type': 'text', 'text': ...} parts are supported, got 'image_url'"),
    ({"messages": [{"role": "user", "content": None}]}, "messages", "messages[0].content: required for role 'user'"),
    ({"messages": []}, "messages", "messages: List should have at least 1 item"),
    ({"messages": HI + [{"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"arguments": "{}"}}]}]},
     None, "tool call 0 of an assistant message: missing 'name'"),
    ({"tools": [{"type": "retrieval"}]}, "tools", "tools[0]: must be {'type': 'function'"),
    ({"tool_choice": "required"}, "tool_choice", "tool_choice: 'required' needs tools"),
    ({"tool_choice": {"type": "function", "function": {"name": "get_news_data"}}}, "tool_choice",
     "names 'get_news_data', which is not among the tools"),
    ({"tool_choice": "sometimes"}, "tool_choice", "must be one of"),
    ({"tool_choice": {"type": "function"}}, "tool_choice", "must be one of"),
    ({"response_format": {"type": "xml"}}, "response_format", "response_format.type: must be 'text', 'json_object' or 'json_schema'"),
    ({"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}}, "response_format",
     "response_format.json_schema.name: required"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "d", "schema": "object"}}}, "response_format",
     "response_format.json_schema.schema: must be a JSON schema"),
    ({"response_format": {"type": "json_object"}, "extra_body": {"structured_outputs": {"grammar": 'start: "a"'}}}, "structured_outputs",
     "cannot be combined with response_format"),
    ({"extra_body": {"structured_outputs": {"json": {"type": "object"}}}}, "structured_outputs", "only 'grammar'"),
    ({"extra_body": {"structured_outputs": {"grammar": ""}}}, "structured_outputs", "must be a non-empty string"),
    ({"logprobs": True, "top_logprobs": 2}, "top_logprobs", "the sampled token only"),
    ({"top_logprobs": 2}, "top_logprobs", "only allowed with logprobs=true"),
    ({"n": 129}, "n", "n: Input should be less than or equal to 128"),
    ({"stream_options": {"include_usage": True}}, "stream_options", "only allowed with stream=true"),
    ({"stream": True, "stream_options": {"continuous_usage_stats": True}}, "stream_options", "only ['include_usage'] is supported"),
    ({"parallel_tool_calls": False}, "parallel_tool_calls", "false cannot be enforced"),
    ({"presence_penalty": 0.5}, "presence_penalty", "penalties are not supported"),
    ({"logit_bias": {"42": 5}}, "logit_bias", "not supported"),
]


@pytest.mark.parametrize(("fields", "param", "message"), REFUSED, ids=[str(f)[:60] for f, _, _ in REFUSED])
def test_what_it_cannot_take_is_a_400_naming_the_field(sdk, engine, fields, param, message):
    request = {"model": engine.model, "messages": HI, "max_tokens": 2, **fields}
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.chat.completions.create(**request)
    assert refused.value.status_code == 400
    assert refused.value.param == param
    assert message in refused.value.message


@pytest.mark.parametrize("body", [b"[1, 2]", b'"hi"', b"{not json", b""])
def test_a_body_that_is_not_a_json_object_is_a_400(server, body):
    response = httpx.post(server.url + "/chat/completions", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith(("the body must be a JSON object", "the body is not valid JSON", "the body is empty"))


def test_an_unknown_model_is_openais_404(sdk):
    with pytest.raises(openai.NotFoundError) as refused:
        sdk.chat.completions.create(model="gpt-4o", messages=HI, max_tokens=2)
    assert refused.value.code == "model_not_found" and refused.value.param == "model"


def test_null_optional_fields_text_parts_and_top_p_zero_are_accepted(sdk, engine):
    greedy = sdk.chat.completions.create(model=engine.model, messages=HI, max_tokens=4, temperature=0)
    nulls = {name: None for name in ("tools", "tool_choice", "stop", "seed", "n", "stream", "logprobs", "response_format", "user")}
    same = sdk.chat.completions.create(
        model=engine.model, messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        max_tokens=4, temperature=1.5, top_p=0, extra_body=nulls,
    )
    assert same.choices[0].message.content == greedy.choices[0].message.content, "top_p=0 keeps the top token: greedy"
    assert same.usage.prompt_tokens == greedy.usage.prompt_tokens, "one text part reads as the plain string"


def test_null_max_tokens_gets_the_room_the_prompt_leaves(engine):
    room = 5
    context = prompt_tokens(engine, HI) + room
    with start_server(engine, context_length=context) as small:
        sdk = openai.OpenAI(base_url=small.url, api_key="unused", max_retries=0)
        answer = sdk.chat.completions.create(model=engine.model, messages=HI, max_tokens=None, temperature=0)
        with pytest.raises(openai.BadRequestError) as refused:
            sdk.chat.completions.create(model=engine.model, messages=HI, max_tokens=room + 1)
    assert (answer.usage.completion_tokens, answer.choices[0].finish_reason) == (room, "length"), "greedy 'hi' runs long"
    assert refused.value.code == "context_length_exceeded"
    assert f"max_tokens is too large: {room + 1}. This model's context is {context} tokens" in refused.value.message


def test_a_prompt_that_fills_the_context_is_refused_and_the_limits_must_be_positive(engine):
    with start_server(engine, context_length=prompt_tokens(engine, HI)) as full:
        sdk = openai.OpenAI(base_url=full.url, api_key="unused", max_retries=0)
        with pytest.raises(openai.BadRequestError) as refused:
            sdk.chat.completions.create(model=engine.model, messages=HI)
    assert refused.value.param == "messages" and "which leaves no room for a completion" in refused.value.message
    with pytest.raises(ValueError, match="context_length must be positive, got 0"):
        build_app(engine, context_length=0)
    with pytest.raises(ValueError, match="request_timeout_s must be positive"):
        build_app(engine, request_timeout_s=0)


@pytest.mark.slow
def test_a_huge_max_tokens_is_refused_while_a_long_generation_runs(sdk, server, engine):
    """A long greedy generation holds the engine; meanwhile a huge request is refused, the model
    list is answered and a cached answer is replayed, all while the long one still runs.

    The long one is sized from a short run to last about LONG_S seconds on this machine (the
    greedy answer to "hello" runs past 1,500 tokens without an end-of-turn token).
    """
    hello = [{"role": "user", "content": "hello"}]
    start = time.monotonic()
    sdk.chat.completions.create(model=engine.model, messages=hello, max_tokens=20, temperature=0)
    long_tokens = min(1500, max(100, int(LONG_S * 20 / (time.monotonic() - start))))
    cached = {"model": engine.model, "messages": [{"role": "user", "content": "warm"}], "max_tokens": 2, "temperature": 0}
    sdk.chat.completions.create(**cached)
    finished = {}

    def long_generation():
        answer = sdk.chat.completions.create(model=engine.model, messages=hello, max_tokens=long_tokens, temperature=0)
        finished["tokens"] = answer.usage.completion_tokens

    worker = threading.Thread(target=long_generation)
    worker.start()
    time.sleep(0.2)
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.chat.completions.create(model=engine.model, messages=hello, max_tokens=10**9)
    room = 4096 - prompt_tokens(engine, hello)
    assert refused.value.param == "max_tokens" and f"at most {room} completion tokens fit" in refused.value.message
    assert [m.id for m in sdk.models.list()] == [engine.model]
    assert sdk.chat.completions.with_raw_response.create(**cached).headers[CACHE_HEADER] == "hit"
    assert worker.is_alive(), "all three were answered while the long generation ran"
    worker.join()
    assert finished["tokens"] == long_tokens


def test_a_cached_answer_is_marked(sdk, engine):
    request = {"model": engine.model, "messages": [{"role": "user", "content": "cache me"}], "max_tokens": 3, "temperature": 0}
    first = sdk.chat.completions.with_raw_response.create(**request)
    second = sdk.chat.completions.with_raw_response.create(**request)
    assert (first.headers[CACHE_HEADER], second.headers[CACHE_HEADER]) == ("miss", "hit")
    fresh, replayed = first.parse(), second.parse()
    assert (fresh.cached, replayed.cached) == (False, True)
    assert replayed.choices[0].message.content == fresh.choices[0].message.content
    assert replayed.usage.completion_tokens == fresh.usage.completion_tokens
    streamed = sdk.chat.completions.with_raw_response.create(**request, stream=True)
    assert streamed.headers[CACHE_HEADER] == "hit"
    chunks = [chunk for chunk in streamed.parse() if chunk.choices]
    assert all(chunk.cached for chunk in chunks), "a replayed answer streams whole, marked as such"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == fresh.choices[0].message.content


def test_langchain_chat_openai_bind_tools_invoke(server, engine):
    llm = ChatOpenAI(model=engine.model, base_url=server.url, api_key="unused", max_retries=0, max_tokens=4, temperature=0)
    message = llm.bind_tools([get_news_data]).invoke("news on NVDA?")
    asked = [{"role": "user", "content": "news on NVDA?"}]
    schema = {"type": "function", "function": {
        "name": "get_news_data", "description": "Latest headlines about a ticker.",
        "parameters": {"properties": {"ticker": {"type": "string"}}, "required": ["ticker"], "type": "object"},
    }}
    assert message.usage_metadata["input_tokens"] == prompt_tokens(engine, asked, [schema]), "the tools reached the prompt"
    assert message.usage_metadata["output_tokens"] <= 4
    assert message.response_metadata["model_name"] == engine.model
    unbound = llm.bind_tools([get_news_data], tool_choice="none").invoke("news on NVDA?")
    assert unbound.usage_metadata["input_tokens"] == prompt_tokens(engine, asked), "tool_choice='none' shows no tools"


def test_an_engine_that_does_not_know_its_context_needs_one_and_its_failures_are_502(server, engine):
    """Our server in front of another: the HTTP engine reports no context, and its errors are passed on as 502."""
    proxied = OpenAIEngine(server.url, "gpt-4o", max_retries=0)
    with pytest.raises(ValueError, match="context_length: engine 'openai:.*' does not report its model's context"):
        build_app(proxied)
    with start_server(proxied, context_length=1000) as front:
        response = httpx.post(front.url + "/chat/completions", json={"model": "gpt-4o", "messages": HI, "max_tokens": 2})
    assert response.status_code == 502
    assert response.json()["error"]["message"] == (
        f"the engine behind this server failed: {server.url}/chat/completions: HTTP 404: "
        f"The model `gpt-4o` does not exist; this server has `{engine.model}`"
    )
    assert OpenAIEngine(server.url, engine.model).generate_one(conversation("hi"), params=SamplingParams(max_new_tokens=2)).error is None


def test_in_front_of_an_http_engine_choices_and_json_pass_through_and_the_rest_is_refused(server, engine):
    """The front server cannot stream, report log-probabilities or force calls through an HTTP engine: it says so.

    `n` becomes n requests and a JSON schema becomes a grammar that the server behind honours.
    """
    schema = {"type": "object", "properties": {"action": {"enum": ["BUY", "SELL"]}}, "required": ["action"], "additionalProperties": False}
    with start_server(OpenAIEngine(server.url, engine.model, max_retries=0), context_length=1000) as front:
        sdk = openai.OpenAI(base_url=front.url, api_key="unused", max_retries=0)
        request = {"model": engine.model, "messages": HI, "max_tokens": 20}
        answer = sdk.chat.completions.create(
            **request, n=2, seed=3, temperature=1.0,
            response_format={"type": "json_schema", "json_schema": {"name": "decision", "schema": schema}},
        )
        assert [json.loads(c.message.content)["action"] in {"BUY", "SELL"} for c in answer.choices] == [True, True]
        refusals = [
            ({"stream": True}, "stream"), ({"logprobs": True}, "logprobs"),
            ({"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"}, "tool_choice"),
        ]
        for fields, param in refusals:
            with pytest.raises(openai.BadRequestError) as refused:
                sdk.chat.completions.create(**request, **fields)
            assert refused.value.param == param and refused.value.code == "unsupported_parameter"
