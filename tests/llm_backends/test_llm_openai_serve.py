"""The OpenAI-compatible client against our real HTTP server on 127.0.0.1 (no mocks)."""

import logging
import os
import re
import subprocess
import sys

import httpx
import pytest
from llm_test_helpers import PRICE_TOOL, conversation

from configs import CONFIG_DIR
from llm_backends.build import build_engine, engine_config
from llm_backends.openai_engine import OpenAIEngine, openai_engine, parse_response
from llm_backends.paths import CACHE_ENV
from llm_backends.serve import start_server
from llm_backends.serve.response import completion_body
from llm_backends.tool_calls import parse_tool_calls, render_tool_call
from llm_backends.types import ChatResult, SamplingParams

KEY_ENV = "TD_TEST_LLM_KEY"
SECRET = "sk-test-5f1c0ffee-never-log-me"
ROOT = CONFIG_DIR.parent


@pytest.fixture(scope="module")
def server(tiny):
    with start_server(tiny) as srv:
        yield srv


@pytest.fixture(scope="module")
def keyed_server(tiny):
    with start_server(tiny, api_key=SECRET) as srv:
        yield srv


def test_http_answers_match_the_engine_it_serves(server, tiny):
    client = OpenAIEngine(server.url, tiny.model, max_concurrency=4)
    prompts = [conversation(t) for t in ("a", "buy or sell?", "news", "macro", "hello")]
    params = SamplingParams(max_new_tokens=6)
    over_http = client.generate(prompts, [PRICE_TOOL], params)
    direct = tiny.generate(prompts, [PRICE_TOOL], params)
    assert [r.text for r in over_http] == [r.text for r in direct]
    assert [r.prompt_tokens for r in over_http] == [r.prompt_tokens for r in direct]
    assert [r.completion_tokens for r in over_http] == [r.completion_tokens for r in direct]
    assert len({r.text for r in direct}) == 5
    assert client.usage.snapshot().calls == 5
    assert httpx.get(server.url + "/models").json()["data"][0]["id"] == tiny.model


@pytest.mark.slow
def test_a_grammar_reaches_our_server_and_is_honoured(server, tiny):
    grammar = 'start: "BUY" | "SELL" | "HOLD"'
    params = [SamplingParams(temperature=1.0, seed=seed, max_new_tokens=5, grammar=grammar) for seed in range(4)]
    over_http = OpenAIEngine(server.url, tiny.model, max_retries=0).generate([conversation("Decide.")] * 4, params=params)
    assert [r.text for r in over_http] == [r.text for r in tiny.generate([conversation("Decide.")] * 4, params=params)]
    assert {r.text for r in over_http} <= {"BUY", "SELL", "HOLD"}


def test_key_comes_from_env_and_never_shows(keyed_server, tiny, monkeypatch, caplog, tmp_path):
    monkeypatch.setenv(KEY_ENV, SECRET)
    caplog.set_level(logging.DEBUG)
    client = openai_engine(keyed_server.url, tiny.model, api_key_env=KEY_ENV, cache_path=str(tmp_path / "c.sqlite"))
    result = client.generate_one(conversation("hi"), params=SamplingParams(max_new_tokens=3))
    assert result.completion_tokens == 3
    seen = repr(client) + repr(vars(client)) + result.model_dump_json() + caplog.text
    seen += (tmp_path / "c.sqlite").read_bytes().decode("latin-1")
    assert SECRET not in seen
    monkeypatch.setenv(KEY_ENV, "wrong")
    refused = openai_engine(keyed_server.url, tiny.model, api_key_env=KEY_ENV, cache=False).generate_one(conversation("hi"))
    assert "HTTP 401" in refused.error


def test_missing_key_variable_is_a_one_line_error(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ValueError, match=f"api_key_env: environment variable {KEY_ENV} is not set"):
        openai_engine("http://127.0.0.1:9/v1", "m", api_key_env=KEY_ENV, cache=False)


def test_bad_request_is_reported_with_the_servers_message(server, tiny):
    client = OpenAIEngine(server.url, tiny.model, max_retries=0)
    params = SamplingParams(max_new_tokens=2, temperature=0.0).model_copy(update={"temperature": -1.0})
    error = client.generate_one(conversation("x"), params=params).error
    assert error == f"{server.url}/chat/completions: HTTP 400: temperature: Input should be greater than or equal to 0"


def test_tool_calls_survive_the_wire_format():
    text = "let me look\n" + render_tool_call("get_market_data", {"ticker": "NVDA"})
    calls, _ = parse_tool_calls(text)
    sent = ChatResult(text=text, tool_calls=calls, prompt_tokens=5, completion_tokens=9, finish_reason="tool_calls")
    body = completion_body([sent], "m", tools_shown=True)
    assert body["choices"][0]["message"]["content"] == "let me look"
    back = parse_response(body, 0.1)
    assert [(c.name, c.arguments) for c in back.tool_calls] == [("get_market_data", {"ticker": "NVDA"})]
    assert back.text == text and back.finish_reason == "tool_calls"
    broken = {"choices": [{"message": {"content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}}]}
    assert parse_response(broken, 0.0).parse_failures[0].startswith("tool call 0: server returned unusable call")


def test_a_block_that_fails_to_parse_is_reported_and_kept_across_the_wire():
    good, bad = render_tool_call("get_news_data", {"ticker": "NVDA"}), "<tool_call>{not json</tool_call>"
    calls, failures = parse_tool_calls(f"{good}\n{bad}")
    sent = ChatResult(text=f"{good}\n{bad}", tool_calls=calls, parse_failures=failures, finish_reason="tool_calls")
    message = completion_body([sent], "m", tools_shown=True)["choices"][0]["message"]
    assert message["content"] == bad, "the broken block stays where the client can see it"
    assert message["tool_call_parse_failures"] == failures and failures[0].startswith("tool call 1: invalid JSON")
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_news_data"]
    back = parse_response(completion_body([sent], "m", tools_shown=True), 0.0)
    assert [c.name for c in back.tool_calls] == ["get_news_data"]
    assert back.parse_failures[0].startswith("tool call 0: invalid JSON"), "the client re-parses the kept block"


def test_without_tools_the_whole_text_is_content():
    text = "maybe " + render_tool_call("get_news_data", {"ticker": "NVDA"})
    sent = ChatResult(text=text, tool_calls=parse_tool_calls(text)[0], finish_reason="tool_calls")
    choice = completion_body([sent], "m", tools_shown=False)["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": text}
    assert choice["finish_reason"] == "stop"


def test_serve_command_loads_engines_by_config_name(tiny_root):
    engine = build_engine(engine_config("tiny", ["num_hidden_layers=1"]))
    assert engine.hf_model.config.num_hidden_layers == 1
    with pytest.raises(ValueError, match="llm: no option 'nope' .*; known: .*tiny"):
        engine_config("nope")


@pytest.mark.slow
def test_serve_command_answers_over_http(tiny_root):
    """`python -m llm_backends.serve` as a user runs it, on a free port chosen by the OS."""
    env = {**os.environ, CACHE_ENV: str(tiny_root)}
    command = [sys.executable, "-m", "llm_backends.serve", "--engine", "tiny", "--port", "0", "--request-timeout", "30"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:
            found = re.search(r"on (http://127\.0\.0\.1:\d+/v1)", line)
            if found:
                break
        else:
            pytest.fail(f"server exited with code {proc.wait()}")
        model = httpx.get(found.group(1) + "/models").json()["data"][0]["id"]
        assert model.startswith("tiny-qwen2-")
        client = OpenAIEngine(found.group(1), model)
        assert client.generate_one(conversation("hi"), params=SamplingParams(max_new_tokens=3)).completion_tokens == 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)
