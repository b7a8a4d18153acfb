"""A scripted `ChatEngine` for the MASSA graph's wiring tests: answers from a Python function per call.

A call's role is read off its system prompt (the coordinator's or an asset agent's template);
every call is logged with its role, user message and start/end times.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from llm_backends.engine import ChatEngine
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema
from multi_agent.massa.prompting import AGENT, COORDINATOR, template


@dataclass
class Call:
    role: str
    prompt: str
    params: SamplingParams
    start: float = 0.0
    end: float = 0.0


def role_of(conversation: Conversation) -> str:
    system = conversation[0]["content"]
    return next(role for role in (COORDINATOR, AGENT) if system == template(role))


class ScriptedEngine(ChatEngine):
    """Answers each conversation with `script(call)` after `delay_s` seconds; `script` may raise."""

    engine_id = "scripted"
    model = "scripted"

    def __init__(self, script: Callable[[Call], str], delay_s: float = 0.0):
        super().__init__(cache=None)
        self.script, self.delay_s = script, delay_s
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def _generate(self, conversations: list[Conversation], tools: list[ToolSchema] | None,
                  params: SamplingParams) -> list[ChatResult]:
        return [self._answer(c, params) for c in conversations]

    def _answer(self, conversation: Conversation, params: SamplingParams) -> ChatResult:
        call = Call(role_of(conversation), conversation[1]["content"], params, start=time.perf_counter())
        with self._lock:
            self.calls.append(call)
        time.sleep(self.delay_s)
        text = self.script(call)
        call.end = time.perf_counter()
        return ChatResult(text=text, model=self.model, prompt_tokens=len(call.prompt.split()),
                          completion_tokens=len(text.split()), latency_s=call.end - call.start)

    def prompts(self, role: str) -> list[str]:
        return [c.prompt for c in sorted(self.calls, key=lambda c: c.start) if c.role == role]
