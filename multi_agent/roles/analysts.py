"""The four analysts: each a bounded tool loop over its own private messages, ending in a report.

An analyst sees only its own tools, taken from the decision's `ToolSet` (passed in the run
config under `TOOLSET`, so every call is recorded there and dates after the decision date
are clamped). It may take up to `max_tool_rounds` tool-calling turns; a turn that calls no
tool is its report. After the last tool round it is asked for the report with no tools bound
(`REPORT_REQUEST`), so a loop that calls a tool in every round still ends in a report. A call
it writes anyway on that turn is not run: it is recorded as a `dropped_call` parse failure. A
call of a tool that is not its own gets an `Error:` answer and is recorded like any failed call.

With `first_tool_call` "required" the first turn is decoded under the grammar of exactly one
call of the analyst's tools (`forced_grammar`, the `tool_choice` "required" constraint), with
`tool_call_tokens` new tokens, so a small model reads its data at least once. The node writes
its report and the number of tool calls it made (`tool_calls[name]`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from llm_backends.types import ToolSchema
from market.decision import ToolCallRecord
from multi_agent.prompting import role_messages
from multi_agent.state import DebateState
from tools import ToolSet

TOOLSET = "toolset"
"""The run-config key (`config["configurable"]`) holding the decision's `ToolSet`."""

ANALYST_INSTRUCTIONS = (
    "Other analysts cover the other kinds of data. Call your tools to collect the data you need, "
    "then write your report for the team: a few plain English sentences citing numbers, no code "
    "and no markup. End it with one line: Outlook: bullish, bearish or neutral."
)
REPORT_REQUEST = (
    "You have no tool calls left. Write your report now from the data above: a few plain English "
    "sentences citing numbers, no code and no markup. End it with one line: Outlook: bullish, bearish or neutral."
)
NO_REPORT = "(no report)"
DROPPED_CALL = "dropped_call"
"""The parse-failure kind of a call written after the last tool round (not run)."""

AnalystNode = Callable[[DebateState, RunnableConfig], dict[str, Any]]
ForcedGrammar = Callable[[list[ToolSchema]], str]
"""Tool schemas -> the grammar of exactly one call of one of them."""


def answer_tool_call(call: dict[str, Any], tools: dict[str, BaseTool], toolset: ToolSet) -> ToolMessage:
    """Run one requested call with the analyst's own tools; any other name gets an error answer."""
    tool = tools.get(call["name"])
    if tool is not None:
        return tool.invoke(call)
    error = f"{call['name']} is not one of your tools; they are {', '.join(tools)}"
    text = f"Error: {error}"
    toolset.records.append(ToolCallRecord(name=call["name"], arguments=call["args"], result_chars=len(text), error=error))
    return ToolMessage(text, tool_call_id=call["id"], status="error")


def create_analyst(llm: Runnable, name: str, tool_names: Sequence[str], max_tool_rounds: int,
                   forced_grammar: ForcedGrammar | None = None, tool_call_tokens: int = 96) -> AnalystNode:
    """The node of analyst `name` ("market", ...): a private tool loop, then `reports[name]`;
    `forced_grammar` set: its first turn must call one of its tools (module docstring)."""
    role = f"{name}_analyst"

    def analyst(state: DebateState, config: RunnableConfig) -> dict[str, Any]:
        toolset: ToolSet | None = config.get("configurable", {}).get(TOOLSET)
        tools = {t.name: t for t in toolset.langchain_tools() if t.name in tool_names} if toolset else {}
        schemas = [convert_to_openai_tool(t) for t in tools.values()]
        with_tools = llm.bind(tools=schemas)
        messages: list[BaseMessage] = role_messages(role, state, [], ANALYST_INSTRUCTIONS)
        failures: list[str] = []
        made = 0
        rounds = max_tool_rounds if tools else 0
        for turn in range(rounds + 1):
            if turn == rounds:
                if turn > 0:
                    messages.append(HumanMessage(REPORT_REQUEST))
                model = llm
            elif turn == 0 and forced_grammar is not None:
                model = llm.bind(tools=schemas, grammar=forced_grammar(schemas), max_new_tokens=tool_call_tokens)
            else:
                model = with_tools
            reply = model.invoke(messages)
            failures += [f"tool_call: {role}: {bad['error']}" for bad in reply.invalid_tool_calls]
            if turn == rounds:
                failures += [f"{DROPPED_CALL}: {role}: {call['name']} written after the last tool round, not run"
                             for call in reply.tool_calls]
                break
            if not reply.tool_calls:
                break
            made += len(reply.tool_calls)
            messages += [reply, *(answer_tool_call(call, tools, toolset) for call in reply.tool_calls)]
        return {"reports": {name: reply.content.strip() or NO_REPORT}, "tool_calls": {name: made},
                "parse_failures": failures}

    analyst.__name__ = role
    return analyst


def create_market_analyst(llm: Runnable, tool_names: Sequence[str], max_tool_rounds: int, **forcing: Any) -> AnalystNode:
    """Prices and technical indicators."""
    return create_analyst(llm, "market", tool_names, max_tool_rounds, **forcing)


def create_social_analyst(llm: Runnable, tool_names: Sequence[str], max_tool_rounds: int, **forcing: Any) -> AnalystNode:
    """Social-media sentiment."""
    return create_analyst(llm, "social", tool_names, max_tool_rounds, **forcing)


def create_news_analyst(llm: Runnable, tool_names: Sequence[str], max_tool_rounds: int, **forcing: Any) -> AnalystNode:
    """Company news and macroeconomic releases."""
    return create_analyst(llm, "news", tool_names, max_tool_rounds, **forcing)


def create_fundamentals_analyst(llm: Runnable, tool_names: Sequence[str], max_tool_rounds: int, **forcing: Any) -> AnalystNode:
    """Financial statements, insider trades, dividends and earnings estimates."""
    return create_analyst(llm, "fundamentals", tool_names, max_tool_rounds, **forcing)


ANALYSTS: dict[str, Callable[..., AnalystNode]] = {
    "market": create_market_analyst,
    "social": create_social_analyst,
    "news": create_news_analyst,
    "fundamentals": create_fundamentals_analyst,
}
