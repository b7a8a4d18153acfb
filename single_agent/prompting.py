"""The prompt of an episode: the protocol's system and user templates, rendered with jinja2.

Templates live in `single_agent/prompts/` and see the protocol's tags and limits
(`prompt_variables`); the user template also sees the ticker and the date, and comes last, so
the prompt ends with them. The tool schemas are not part of the templates: the chat template
adds them to the system message (`offered_tools.offered_schemas`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2
import pandas as pd

from llm_backends.types import Conversation
from single_agent import tags
from single_agent.protocol import PROMPT_DIR, Protocol


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(PROMPT_DIR), undefined=jinja2.StrictUndefined,
                              autoescape=False)


def prompt_variables(protocol: Protocol) -> dict[str, Any]:
    """What every template sees: the tags (`think_open`, …), `max_tool_calls` (the hard limit),
    `advised_tool_calls` (the budget the prompt states), `required_tools`, `tool_names`."""
    return {
        "think_open": tags.THINK_OPEN, "think_close": tags.THINK_CLOSE,
        "call_open": tags.CALL_OPEN, "call_close": tags.CALL_CLOSE,
        "answer_open": tags.ANSWER_OPEN, "answer_close": tags.ANSWER_CLOSE,
        "response_open": tags.RESPONSE_OPEN, "response_close": tags.RESPONSE_CLOSE,
        "max_tool_calls": protocol.max_tool_calls,
        "advised_tool_calls": protocol.advised_tool_calls or protocol.max_tool_calls,
        "required_tools": list(protocol.required_tools),
        "tool_names": list(protocol.tools),
    }


def system_prompt(protocol: Protocol) -> str:
    """The rendered system template."""
    return _environment().get_template(protocol.system_template).render(prompt_variables(protocol))


def user_prompt(protocol: Protocol, ticker: str, date: pd.Timestamp | str) -> str:
    """The rendered user template for one decision (`date` as YYYY-MM-DD)."""
    day = f"{pd.Timestamp(date):%Y-%m-%d}"
    return _environment().get_template(protocol.user_template).render(
        prompt_variables(protocol), ticker=ticker, date=day)


def initial_conversation(protocol: Protocol, ticker: str, date: pd.Timestamp | str) -> Conversation:
    """The system and user messages an episode starts from."""
    return [{"role": "system", "content": system_prompt(protocol)},
            {"role": "user", "content": user_prompt(protocol, ticker, date)}]
