"""LLM backends: one chat interface over local transformers, SmolLM2, a tiny test model,
OpenAI-compatible servers and vLLM, with a response cache and token accounting.

The light names are exported here; engines live in their modules (`llm_backends.smollm2`,
`llm_backends.tiny`, `llm_backends.transformers_engine`, `llm_backends.openai_engine`,
`llm_backends.vllm_engine`) so that importing this package does not load torch.
"""

from llm_backends.cache import ResponseCache
from llm_backends.build import build_engine, engine_config
from llm_backends.engine import ChatEngine
from llm_backends.messages import assistant_message
from llm_backends.tool_calls import ToolCall, parse_tool_calls
from llm_backends.types import ChatResult, Conversation, SamplingParams, TokenRequest, TokenResult, ToolSchema
from llm_backends.usage import UsageCounter, UsageTotals

__all__ = [
    "ChatEngine",
    "ChatResult",
    "Conversation",
    "ResponseCache",
    "SamplingParams",
    "TokenRequest",
    "TokenResult",
    "ToolCall",
    "ToolSchema",
    "UsageCounter",
    "UsageTotals",
    "assistant_message",
    "build_engine",
    "engine_config",
    "parse_tool_calls",
]
