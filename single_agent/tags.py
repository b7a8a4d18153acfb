"""The tags of the single agent's protocol (docs/single_agent.md).

Every assistant turn is `<think>reasoning</think>`, a newline, then exactly one action: a
tool call `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (the Qwen2.5 / Hermes
format of `llm_backends.tool_calls`) or the final `<answer>BUY|SELL|HOLD</answer>`. Tool
results come back to the model inside `<tool_response>…</tool_response>` (the chat template
writes those).
"""

from __future__ import annotations

from llm_backends.tool_calls import CLOSE as CALL_CLOSE
from llm_backends.tool_calls import OPEN as CALL_OPEN

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<tool_response>", "</tool_response>"

MODEL_TAGS: tuple[str, ...] = (THINK_OPEN, THINK_CLOSE, CALL_OPEN, CALL_CLOSE, ANSWER_OPEN, ANSWER_CLOSE)
"""The tags the model writes (the tool-response tags come from the chat template)."""

__all__ = ["ANSWER_CLOSE", "ANSWER_OPEN", "CALL_CLOSE", "CALL_OPEN", "MODEL_TAGS", "RESPONSE_CLOSE",
           "RESPONSE_OPEN", "THINK_CLOSE", "THINK_OPEN"]
