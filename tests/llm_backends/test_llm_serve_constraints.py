"""Constrained answers from `llm_backends.serve`: `response_format` (json_schema, json_object), a forced
`tool_choice` and vLLM's `structured_outputs` grammar, through the engine's constrained decoding,
with the `openai` SDK and LangChain's ChatOpenAI against the tiny model on 127.0.0.1.

The tiny model's weights are random: whatever it would write, the grammar makes the answer valid.
"""

import json
from typing import Literal

import openai
import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from llm_test_helpers import conversation
from pydantic import BaseModel, ConfigDict

DECIDE = conversation("Decide.")
SEEDS = range(4)


class Decision(BaseModel):
    """A trading decision; extra keys are invalid."""

    model_config = ConfigDict(extra="forbid")
    action: Literal["BUY", "SELL", "HOLD"]
    confident: bool


@tool
def get_quote(ticker: Literal["NVDA", "MSFT"]) -> str:
    """The last price of a ticker."""
    return f"{ticker}: 100"


@tool
def get_news(ticker: Literal["NVDA", "MSFT"], days: Literal[1, 7]) -> str:
    """Headlines about a ticker over the last days."""
    return f"news on {ticker}"


def function_schema(function) -> dict:
    """A LangChain tool as an OpenAI tool schema."""
    return {"type": "function", "function": {"name": function.name, "description": function.description, "parameters": function.tool_call_schema.model_json_schema()}}


TOOLS = [function_schema(get_quote), function_schema(get_news)]


def test_the_sdks_parse_gets_schema_valid_answers_for_every_choice(tiny_sdk, tiny):
    """`chat.completions.parse` sends a strict json_schema and validates every answer with the pydantic model."""
    answer = tiny_sdk.chat.completions.parse(
        model=tiny.model, messages=DECIDE, response_format=Decision, n=4, seed=1, temperature=1.0, max_tokens=40,
    )
    assert [type(c.message.parsed) for c in answer.choices] == [Decision] * 4
    assert {c.finish_reason for c in answer.choices} == {"stop"}


def test_a_streamed_json_schema_answer_parses_too(tiny_sdk, tiny):
    response_format = {"type": "json_schema", "json_schema": {"name": "decision", "schema": Decision.model_json_schema()}}
    text = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in tiny_sdk.chat.completions.create(
            model=tiny.model, messages=DECIDE, response_format=response_format, temperature=0, max_tokens=40, stream=True,
        )
        if chunk.choices
    )
    Decision.model_validate_json(text)


@pytest.mark.slow
def test_json_object_answers_are_objects_where_they_end(tiny_sdk, tiny):
    """Free keys and strings can run past max_tokens on random weights; every answer that ended is an object."""
    answers = [
        tiny_sdk.chat.completions.create(
            model=tiny.model, messages=DECIDE, response_format={"type": "json_object"}, seed=seed, temperature=1.0, max_tokens=60,
        ).choices[0]
        for seed in SEEDS
    ]
    ended = [a.message.content for a in answers if a.finish_reason == "stop"]
    assert ended and all(isinstance(json.loads(text), dict) for text in ended)
    assert all(a.message.content.startswith("{") for a in answers)


@pytest.mark.slow
def test_json_schema_with_tools_the_model_may_call_gives_json_or_valid_calls(tiny_sdk, tiny):
    response_format = {"type": "json_schema", "json_schema": {"name": "decision", "schema": Decision.model_json_schema()}}
    for seed in SEEDS:
        choice = tiny_sdk.chat.completions.create(
            model=tiny.model, messages=DECIDE, tools=TOOLS, response_format=response_format, seed=seed, temperature=1.0, max_tokens=60,
        ).choices[0]
        if choice.message.tool_calls:
            assert {c.function.name for c in choice.message.tool_calls} <= {"get_quote", "get_news"}
        else:
            Decision.model_validate_json(choice.message.content)


@pytest.mark.slow
@pytest.mark.parametrize("tool_choice", ["required", {"type": "function", "function": {"name": "get_news"}}], ids=["required", "named"])
def test_a_forced_tool_choice_always_calls_an_allowed_tool_with_valid_arguments(tiny_sdk, tiny, tool_choice):
    named = isinstance(tool_choice, dict)
    for seed in SEEDS:
        choice = tiny_sdk.chat.completions.create(
            model=tiny.model, messages=DECIDE, tools=TOOLS, tool_choice=tool_choice, seed=seed, temperature=1.0, max_tokens=80,
        ).choices[0]
        assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
        for call in choice.message.tool_calls:
            arguments = json.loads(call.function.arguments)
            assert call.function.name == "get_news" if named else call.function.name in {"get_quote", "get_news"}
            if call.function.name == "get_news":
                assert set(arguments) == {"ticker", "days"} and arguments["days"] in (1, 7)
            else:
                assert set(arguments) == {"ticker"}
            assert arguments["ticker"] in {"NVDA", "MSFT"}


def test_a_structured_outputs_grammar_is_used_as_given(tiny_sdk, tiny):
    grammar = 'start: "BUY" | "SELL" | "HOLD"'
    answers = {
        tiny_sdk.chat.completions.create(
            model=tiny.model, messages=DECIDE, seed=seed, temperature=1.0, max_tokens=10, extra_body={"structured_outputs": {"grammar": grammar}},
        ).choices[0].message.content
        for seed in SEEDS
    }
    assert answers <= {"BUY", "SELL", "HOLD"}


@pytest.mark.parametrize(("fields", "param", "message"), [
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"properties": {"a": {"$ref": "#/nowhere"}}}}}},
     "response_format", "response_format: cannot be enforced: grammar does not compile"),
    ({"extra_body": {"structured_outputs": {"grammar": "start: undefined_rule"}}}, "structured_outputs",
     "structured_outputs: cannot be enforced: grammar does not compile"),
], ids=["schema", "grammar"])
def test_a_constraint_that_cannot_be_enforced_is_a_400_naming_its_field(tiny_sdk, tiny, fields, param, message):
    with pytest.raises(openai.BadRequestError) as refused:
        tiny_sdk.chat.completions.create(model=tiny.model, messages=DECIDE, max_tokens=5, **fields)
    assert refused.value.param == param and message in refused.value.message


def test_langchain_structured_output_and_forced_tool_calls(tiny_server, tiny):
    llm = ChatOpenAI(model=tiny.model, base_url=tiny_server.url, api_key="unused", max_retries=0, max_tokens=60, temperature=0)
    decision = llm.with_structured_output(Decision, method="json_schema").invoke("Decide.")
    assert isinstance(decision, Decision)
    message = llm.bind_tools([get_quote, get_news], tool_choice="required").invoke("Decide.")
    assert message.tool_calls and all(c["name"] in {"get_quote", "get_news"} for c in message.tool_calls)
    assert not message.invalid_tool_calls
