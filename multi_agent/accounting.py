"""`CallRecorder`: a LangChain callback that books every LLM call of one graph run.

Passed in the run's config, it sees each chat-model call the graph's nodes make, under the
name of the node that made it (LangGraph's `langgraph_node` metadata), and records prompt
and completion tokens, latency and the cache flag as `LLMCallRecord`s. Calls made before a
node raised stay booked, so a failed decision still shows what it cost.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from llm_backends.langchain_adapter import usage_record
from market.decision import LLMCallRecord


class CallRecorder(BaseCallbackHandler):
    """Collects one `LLMCallRecord` per chat-model call, its role being the calling node."""

    def __init__(self) -> None:
        self.calls: list[LLMCallRecord] = []
        self._roles: dict[UUID, str] = {}

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list, *, run_id: UUID,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._roles[run_id] = (metadata or {}).get("langgraph_node", "")

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        role = self._roles.pop(run_id, "")
        for generations in response.generations:
            for generation in generations:
                self.calls.append(LLMCallRecord(**usage_record(generation.message, role)))

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._roles.pop(run_id, None)
