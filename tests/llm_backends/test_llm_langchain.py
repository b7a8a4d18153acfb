"""The LangChain adapter over a real tiny engine, alone and inside a LangGraph graph."""

from typing import Annotated

import pytest

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.output_parsers.openai_tools import PydanticToolsParser
from langchain_core.tools import StructuredTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from llm_test_helpers import PRICE_TOOL
from pydantic import BaseModel, Field

from llm_backends.langchain_adapter import EngineChatModel, to_ai_message, usage_record
from llm_backends.tool_calls import parse_tool_calls, render_tool_call
from llm_backends.types import ChatResult, SamplingParams


@tool
def get_news_data(ticker: str, limit: int = 5) -> str:
    """Latest headlines about a ticker."""
    return f"{limit} headlines about {ticker}"


def _dividends(ticker: str) -> str:
    return f"dividends of {ticker}"


DIVIDENDS = StructuredTool.from_function(_dividends, name="get_dividends", description="Dividend history of a ticker.")


class GetCashflow(BaseModel):
    """Cash-flow statements of a ticker."""

    ticker: Annotated[str, Field(description="the ticker symbol")]


def test_invoke_returns_usage_and_metadata(tiny):
    model = EngineChatModel(engine=tiny, params=SamplingParams(max_new_tokens=5))
    message = model.invoke([HumanMessage("Should I buy NVDA?")])
    assert message.usage_metadata["output_tokens"] == 5
    assert message.usage_metadata["input_tokens"] > 10
    assert message.response_metadata["model_name"] == tiny.model
    record = usage_record(message, "analyst")
    assert record["completion_tokens"] == 5 and record["role"] == "analyst" and record["cached"] is False


def test_bind_tools_reaches_the_prompt_in_every_accepted_form(tiny):
    model = EngineChatModel(engine=tiny, params=SamplingParams(max_new_tokens=2))
    bound = model.bind_tools([get_news_data, DIVIDENDS, GetCashflow, PRICE_TOOL])
    names = [t["function"]["name"] for t in bound.kwargs["tools"]]
    assert names == ["get_news_data", "get_dividends", "GetCashflow", "get_market_data"]
    plain = model.invoke("hi").usage_metadata["input_tokens"]
    with_tools = bound.invoke("hi").usage_metadata["input_tokens"]
    prompt = tiny.render([{"role": "user", "content": "hi"}], bound.kwargs["tools"])
    assert with_tools == len(tiny.tokenizer(prompt, add_special_tokens=False)["input_ids"]) > plain


def test_tool_choice_narrows_the_tools_shown(tiny):
    model = EngineChatModel(engine=tiny)
    tools = [get_news_data, DIVIDENDS, PRICE_TOOL]

    def shown(choice):
        return [t["function"]["name"] for t in model.bind_tools(tools, tool_choice=choice).kwargs["tools"]]

    assert shown("any") == shown("auto") == ["get_news_data", "get_dividends", "get_market_data"]
    assert shown("get_dividends") == ["get_dividends"]
    assert shown({"type": "function", "function": {"name": "get_market_data"}}) == ["get_market_data"]
    assert shown("none") == []
    with pytest.raises(ValueError, match="no bound tool has that name"):
        shown("get_reddit_data")


def test_structured_output_runs_on_the_engine(tiny):
    """`with_structured_output` binds the schema as a tool; a call in the answer becomes the object."""
    model = EngineChatModel(engine=tiny, params=SamplingParams(max_new_tokens=3))
    out = model.with_structured_output(GetCashflow, include_raw=True).invoke("cash flow of MSFT?")
    assert out["raw"].usage_metadata["output_tokens"] == 3
    assert out["parsed"] is None, "the random model made no call"
    text = render_tool_call("GetCashflow", {"ticker": "MSFT"})
    answer = to_ai_message(ChatResult(text=text, tool_calls=parse_tool_calls(text)[0]))
    assert PydanticToolsParser(tools=[GetCashflow], first_tool_only=True).invoke(answer) == GetCashflow(ticker="MSFT")


def test_tool_calls_and_failures_map_to_langchain_fields():
    text = render_tool_call("get_news_data", {"ticker": "NVDA"}) + "<tool_call>{broken</tool_call>"
    calls, failures = parse_tool_calls(text)
    message = to_ai_message(ChatResult(text=text, tool_calls=calls, parse_failures=failures, prompt_tokens=3, completion_tokens=4))
    assert message.tool_calls == [{"name": "get_news_data", "args": {"ticker": "NVDA"}, "id": calls[0].id, "type": "tool_call"}]
    assert message.invalid_tool_calls[0]["error"].startswith("tool call 1: invalid JSON")
    assert message.content == ""
    assert message.usage_metadata["total_tokens"] == 7


def test_engine_drives_a_langgraph_graph_with_prebuilt_tool_node(tiny):
    """START -> tools (LangGraph's ToolNode runs the pending call) -> analyst (our model) -> tools_condition.

    The conversation enters with an assistant turn that asked for a tool, as after a model's
    tool call; the random tiny model then answers without calls, so the graph ends.
    """
    model = EngineChatModel(engine=tiny, params=SamplingParams(max_new_tokens=4)).bind_tools([get_news_data])
    call = parse_tool_calls(render_tool_call("get_news_data", {"ticker": "NVDA", "limit": 2}))[0][0]

    def analyst(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([get_news_data]))
    graph.add_node("analyst", analyst)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", "analyst")
    graph.add_conditional_edges("analyst", tools_condition, {"tools": "tools", END: END})
    asked = AIMessage("", tool_calls=[{"name": call.name, "args": call.arguments, "id": call.id}])
    before = tiny.usage.snapshot().calls
    final = graph.compile().invoke({"messages": [HumanMessage("news on NVDA?"), asked]})
    assert [type(m).__name__ for m in final["messages"]] == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert final["messages"][2].content == "2 headlines about NVDA"
    answer = final["messages"][-1]
    assert answer.usage_metadata["output_tokens"] == 4 and tiny.usage.snapshot().calls - before == 1
    history = [
        {"role": "user", "content": "news on NVDA?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "2 headlines about NVDA"},
    ]
    prompt = tiny.render(history, model.kwargs["tools"])
    assert "<tool_response>\n2 headlines about NVDA\n</tool_response>" in prompt
    assert answer.usage_metadata["input_tokens"] == len(tiny.tokenizer(prompt, add_special_tokens=False)["input_ids"])
