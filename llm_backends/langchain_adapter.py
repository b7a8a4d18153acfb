"""Any engine as a LangChain chat model, so LangGraph nodes use our engines, cache and counts.

`EngineChatModel(engine=...)` converts LangChain messages to OpenAI-style dicts, calls
`engine.generate_one`, and returns an `AIMessage` whose `tool_calls` hold the parsed calls,
`invalid_tool_calls` the blocks that did not parse, `usage_metadata` the token counts and
`response_metadata` the model, finish reason, latency, cache flag and reused prompt tokens.
`llm.bind(grammar=...)` constrains the answers of that binding (llguidance Lark text, e.g.
`llm_backends.grammar.json_schema_grammar(schema)`), and `llm.bind(max_new_tokens=...)` sets
its budget, whatever other sampling parameters a run sets on the model. `bind_tools` accepts LangChain tools (`@tool`, `StructuredTool`), pydantic
classes, functions and JSON schemas, so `with_structured_output` works too. A call whose result carries an `error` (an HTTP engine's
failed request) raises `LLMCallFailed` with that error, as `ChatOpenAI` raises the `openai`
SDK's errors, so LangChain's `with_retry`/`with_fallbacks` and LangGraph see a failure, not an
empty answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration
from langchain_core.outputs import ChatResult as LCChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from llm_backends.engine import ChatEngine
from llm_backends.messages import tool_names
from llm_backends.types import ChatResult, SamplingParams


BOUND_PARAMS = ("grammar", "max_new_tokens")
"""Sampling parameters a binding may set (`llm.bind(grammar=..., max_new_tokens=...)`) over the run's own."""


class LLMCallFailed(RuntimeError):
    """The engine answered this call with an error result; the message is the result's `error`."""


def to_ai_message(result: ChatResult) -> AIMessage:
    """The LangChain message for one result (parsed and unparsed tool calls, usage, metadata)."""
    return AIMessage(
        content=result.content,
        tool_calls=[{"name": c.name, "args": c.arguments, "id": c.id, "type": "tool_call"} for c in result.tool_calls],
        invalid_tool_calls=[
            {"name": None, "args": None, "id": None, "error": failure, "type": "invalid_tool_call"}
            for failure in result.parse_failures
        ],
        usage_metadata={
            "input_tokens": result.prompt_tokens,
            "output_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
        },
        response_metadata={
            "model_name": result.model,
            "finish_reason": result.finish_reason,
            "latency_s": result.latency_s,
            "cached": result.cached,
            "reused_prompt_tokens": result.reused_prompt_tokens,
            "raw_text": result.text,
        },
    )


def usage_record(message: AIMessage, role: str = "") -> dict[str, Any]:
    """The fields of `market.decision.LLMCallRecord` for a message this adapter produced."""
    usage = message.usage_metadata or {}
    meta = message.response_metadata
    return {
        "role": role,
        "model": meta.get("model_name", ""),
        "prompt_tokens": usage.get("input_tokens", 0),
        "completion_tokens": usage.get("output_tokens", 0),
        "reused_prompt_tokens": meta.get("reused_prompt_tokens", 0),
        "latency_s": meta.get("latency_s", 0.0),
        "cached": meta.get("cached", False),
    }


class EngineChatModel(BaseChatModel):
    """A LangChain `BaseChatModel` over a `ChatEngine`, with default sampling `params`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: ChatEngine
    params: SamplingParams = Field(default_factory=SamplingParams)

    @property
    def _llm_type(self) -> str:
        return f"tradeduel-{self.engine.engine_id}"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"engine": self.engine.engine_id, "model": self.engine.model, **self.params.model_dump()}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> LCChatResult:
        update = {"stop": tuple(stop)} if stop else {}
        for bound in BOUND_PARAMS:
            if kwargs.get(bound) is not None:
                update[bound] = kwargs[bound]
        params = self.params.model_copy(update=update) if update else self.params
        conversation = convert_to_openai_messages(messages)
        result = self.engine.generate_one(conversation, kwargs.get("tools"), params)
        if result.error is not None:
            raise LLMCallFailed(result.error)
        message = to_ai_message(result)
        return LCChatResult(generations=[ChatGeneration(message=message)], llm_output={"model_name": result.model})

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools; the chat template lists them to the model.

        Decoding is not constrained, so `tool_choice` only narrows what the model is shown:
        a tool name (or `{"function": {"name": ...}}`) keeps that tool alone, "none" binds
        none, and "auto", "any" or "required" keep them all. `with_structured_output` works
        on top of this; a model that answers without the call makes its parser fail.
        """
        schemas = select_tools([convert_to_openai_tool(t) for t in tools], tool_choice)
        return self.bind(tools=schemas, **kwargs)


def select_tools(schemas: list[dict[str, Any]], tool_choice: str | dict[str, Any] | None) -> list[dict[str, Any]]:
    """The OpenAI tool schemas left after a LangChain/OpenAI `tool_choice` (see `bind_tools`)."""
    if tool_choice in (None, "auto", "any", "required", True):
        return schemas
    if tool_choice == "none":
        return []
    name = tool_choice if isinstance(tool_choice, str) else tool_choice.get("function", tool_choice).get("name")
    chosen = [s for s in schemas if s["function"]["name"] == name]
    if not chosen:
        raise ValueError(f"tool_choice={tool_choice!r}: no bound tool has that name; bound: {tool_names(schemas)}")
    return chosen
