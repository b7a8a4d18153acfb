"""Streaming (`stream=true`) from `llm_backends.serve` as real clients consume it: the `openai` SDK and
LangChain's ChatOpenAI, against the server on 127.0.0.1 with the tiny model behind it (no mocks)."""

import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import openai
import pytest
from langchain_core.messages import AIMessageChunk
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from llm_test_helpers import conversation

from llm_backends.microbatch import MicroBatchingEngine
from llm_backends.serve import start_server

HI = conversation("hi")
HELLO = conversation("hello")
QUOTE_TOOL = {"type": "function", "function": {
    "name": "get_quote", "description": "The last price of a ticker.",
    "parameters": {"type": "object", "properties": {"ticker": {"enum": ["NVDA", "MSFT"]}}, "required": ["ticker"]},
}}


@tool
def get_quote(ticker: Literal["NVDA", "MSFT"]) -> str:
    """The last price of a ticker."""
    return f"{ticker}: 100"


def collect(stream) -> dict:
    """What a stream carried: per choice index its content, tool calls and finish reason; the usage chunks."""
    content, calls, finish = defaultdict(str), defaultdict(list), {}
    usage, chunks = [], 0
    for chunk in stream:
        chunks += 1
        assert chunk.object == "chat.completion.chunk"
        if not chunk.choices:
            usage.append(chunk.usage)
            continue
        assert chunk.usage is None
        [choice] = chunk.choices
        content[choice.index] += choice.delta.content or ""
        calls[choice.index] += [(c.index, c.function.name, c.function.arguments) for c in choice.delta.tool_calls or []]
        if choice.finish_reason:
            finish[choice.index] = choice.finish_reason
    return {"content": dict(content), "calls": dict(calls), "finish": finish, "usage": usage, "chunks": chunks}


@pytest.mark.slow
def test_streamed_content_adds_up_to_the_answer_and_usage_comes_last(tiny_sdk, tiny):
    for tools in (None, [QUOTE_TOOL]):
        request = {"model": tiny.model, "messages": HI, "max_tokens": 40, "temperature": 0, "tools": tools}
        whole = tiny_sdk.chat.completions.create(**request)
        streamed = collect(tiny_sdk.chat.completions.create(**request, stream=True, stream_options={"include_usage": True}))
        assert streamed["content"][0] == (whole.choices[0].message.content or "")
        assert streamed["finish"] == {0: whole.choices[0].finish_reason}
        assert streamed["usage"] == [whole.usage], "one usage chunk, after every choice chunk"
    plain = collect(tiny_sdk.chat.completions.create(model=tiny.model, messages=HI, max_tokens=3, temperature=0, stream=True))
    assert plain["usage"] == [] and plain["finish"] == {0: "length"}


@pytest.mark.slow
def test_tokens_reach_the_client_while_they_are_sampled(tiny_sdk, tiny):
    """A long greedy answer arrives in about one chunk per token, spread over the generation, not at its end."""
    start = time.monotonic()
    arrivals = []
    for chunk in tiny_sdk.chat.completions.create(model=tiny.model, messages=HELLO, max_tokens=300, temperature=0, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.monotonic())
    total = arrivals[-1] - start
    assert len(arrivals) > 150, "most of the 300 tokens came in chunks of their own"
    assert arrivals[-1] - arrivals[0] > 0.6 * total, "the first text came early, the rest as it was sampled"


def test_a_forced_tool_call_streams_as_a_tool_calls_delta(tiny_sdk, tiny):
    request = {"model": tiny.model, "messages": HI, "max_tokens": 40, "temperature": 0, "tools": [QUOTE_TOOL], "tool_choice": "required"}
    whole = tiny_sdk.chat.completions.create(**request).choices[0]
    streamed = collect(tiny_sdk.chat.completions.create(**request, stream=True))
    [call] = whole.message.tool_calls
    assert streamed["calls"] == {0: [(0, "get_quote", call.function.arguments)]}
    assert streamed["finish"] == {0: "tool_calls"} and whole.finish_reason == "tool_calls"
    assert streamed["content"] == {0: ""} and whole.message.content is None


def test_a_stop_string_and_what_follows_never_reach_the_stream(tiny_sdk, tiny):
    text = tiny_sdk.chat.completions.create(model=tiny.model, messages=HELLO, max_tokens=40, temperature=0).choices[0].message.content
    stop = text[15:18]
    request = {"model": tiny.model, "messages": HELLO, "max_tokens": 40, "temperature": 0, "stop": [stop]}
    whole = tiny_sdk.chat.completions.create(**request).choices[0]
    streamed = collect(tiny_sdk.chat.completions.create(**request, stream=True))
    assert streamed["content"][0] == whole.message.content == text[: text.index(stop)]
    assert streamed["finish"] == {0: "stop"}


def test_n_choices_stream_each_under_its_own_index(tiny_sdk, tiny):
    request = {"model": tiny.model, "messages": HI, "max_tokens": 12, "temperature": 1.0, "seed": 7, "n": 2}
    whole = tiny_sdk.chat.completions.create(**request)
    streamed = collect(tiny_sdk.chat.completions.create(**request, stream=True, stream_options={"include_usage": True}))
    assert streamed["content"] == {c.index: c.message.content or "" for c in whole.choices}
    assert streamed["finish"] == {c.index: c.finish_reason for c in whole.choices}
    assert streamed["usage"] == [whole.usage]


@pytest.mark.slow
def test_langchain_chat_openai_streams_text_and_tool_calls(tiny_server, tiny):
    llm = ChatOpenAI(model=tiny.model, base_url=tiny_server.url, api_key="unused", max_retries=0, max_tokens=30, temperature=0, stream_usage=True)
    chunks = list(llm.stream("hi"))
    assert len(chunks) > 10 and all(isinstance(c, AIMessageChunk) for c in chunks)
    merged = sum(chunks[1:], chunks[0])
    assert merged.content == llm.invoke("hi").content
    assert merged.usage_metadata["output_tokens"] == 30
    forced = llm.bind_tools([get_quote], tool_choice="get_quote")
    call = sum(forced.stream("quote?"), AIMessageChunk(content=""))
    assert [(c["name"], set(c["args"])) for c in call.tool_calls] == [("get_quote", {"ticker"})]
    assert call.tool_calls[0]["args"]["ticker"] in {"NVDA", "MSFT"}


@pytest.mark.slow
def test_concurrent_streams_share_one_batch_on_a_micro_batching_engine(tiny, tiny_sdk):
    prompts = [conversation(text) for text in ("hi", "buy or sell?", "news")]
    expected = [
        tiny_sdk.chat.completions.create(model=tiny.model, messages=p, max_tokens=20, temperature=0).choices[0].message.content
        for p in prompts
    ]
    batching = MicroBatchingEngine(tiny, max_wait_s=1.0)
    try:
        with start_server(batching) as server:
            sdk = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0)
            batches_before = tiny.usage.snapshot().engine_calls

            def stream(messages) -> str:
                return collect(sdk.chat.completions.create(model=tiny.model, messages=messages, max_tokens=20, temperature=0, stream=True))["content"][0]

            with ThreadPoolExecutor(len(prompts)) as pool:
                streamed = list(pool.map(stream, prompts))
            assert streamed == expected
            assert tiny.usage.snapshot().engine_calls - batches_before == 1, "the three streams were decoded as one batch"
    finally:
        batching.close()
