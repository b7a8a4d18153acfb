"""A scripted `ChatEngine` for wiring tests: answers come from a Python function, per role.

The role of a call is read off its system prompt (which starts with the role's template), so
a script can answer each role differently, raise for one, or sleep to show concurrency.
Every call is logged with its role, conversation, tools and start/end times.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from llm_backends.engine import ChatEngine
from llm_backends.tool_calls import parse_tool_calls
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema
from multi_agent.outputs import PortfolioDecision, ResearchPlan, TraderProposal
from multi_agent.prompting import PROMPTS, template

ROLES = sorted(p.name.removesuffix(".md") for p in PROMPTS.iterdir() if p.name.endswith(".md"))

Script = Callable[["Call"], str]


def role_of(conversation: Conversation) -> str:
    """The role whose template opens the system prompt."""
    system = conversation[0]["content"]
    return next(role for role in ROLES if system.startswith(template(role)))


@dataclass
class Call:
    """One engine call as the script and the tests see it."""

    role: str
    conversation: Conversation
    tools: list[str]
    params: SamplingParams
    start: float = 0.0
    end: float = 0.0

    @property
    def prompt(self) -> str:
        """The user message that describes the situation."""
        return self.conversation[1]["content"]


DECIDERS = {"research_manager": ResearchPlan, "trader": TraderProposal, "portfolio_manager": PortfolioDecision}


def json_answer(role: str, tier: str) -> str:
    """A well-formed answer of a deciding role with rating `tier`."""
    schema = DECIDERS[role]
    return json.dumps({schema.tier_field: tier, schema.text_field: "because"})


def default_script(call: Call) -> str:
    """Plain prose for speakers, a Buy everywhere a rating is asked for."""
    if call.role in DECIDERS:
        return json_answer(call.role, "Buy")
    return f"{call.role} says the stock looks fine."


class ScriptedEngine(ChatEngine):
    """Answers each conversation with `script(call)`, after `delay_s` seconds."""

    engine_id = "scripted"
    model = "scripted"

    def __init__(self, script: Script = default_script, delay_s: float = 0.0):
        super().__init__(cache=None)
        self.script = script
        self.delay_s = delay_s
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def _generate(self, conversations: list[Conversation], tools: list[ToolSchema] | None,
                  params: SamplingParams) -> list[ChatResult]:
        return [self._answer(c, tools, params) for c in conversations]

    def _answer(self, conversation: Conversation, tools: list[ToolSchema] | None, params: SamplingParams) -> ChatResult:
        call = Call(role_of(conversation), conversation, [t["function"]["name"] for t in tools or []], params,
                    start=time.perf_counter())
        with self._lock:
            self.calls.append(call)
        time.sleep(self.delay_s)
        text = self.script(call)
        call.end = time.perf_counter()
        calls, failures = parse_tool_calls(text)
        return ChatResult(text=text, tool_calls=calls, parse_failures=failures, model=self.model,
                          prompt_tokens=sum(len(str(m.get("content") or "").split()) for m in conversation),
                          completion_tokens=len(text.split()), latency_s=call.end - call.start)

    def roles(self) -> list[str]:
        """The role of every call, in the order the calls started."""
        return [c.role for c in sorted(self.calls, key=lambda c: c.start)]
