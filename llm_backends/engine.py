"""The one interface every engine implements: many conversations in, one `ChatResult` each.

`ChatEngine.generate` validates the conversations, serves what it can from the response cache,
asks the concrete engine (`_generate`) for the rest in one call, stores the new results and
counts every result in `engine.usage`. Concrete engines only implement `_generate`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections import Counter

from llm_backends.cache import ResponseCache, cache_key
from llm_backends.types import ChatResult, Conversation, SamplingParams, ToolSchema
from llm_backends.usage import UsageCounter

ROLES = frozenset({"system", "user", "assistant", "tool"})


def validate_conversations(conversations: list[Conversation]) -> None:
    """Raise ValueError naming the conversation and message index of the first malformed message."""
    if not isinstance(conversations, list):
        raise ValueError(f"conversations must be a list of message lists, got {type(conversations).__name__}")
    for c, conversation in enumerate(conversations):
        if not isinstance(conversation, list) or not conversation:
            raise ValueError(f"conversation {c}: must be a non-empty list of messages")
        for m, message in enumerate(conversation):
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                role = message.get("role") if isinstance(message, dict) else message
                raise ValueError(f"conversation {c}, message {m}: role must be one of {sorted(ROLES)}, got {role!r}")
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                raise ValueError(f"conversation {c}, message {m}: content must be a string, got {type(content).__name__}")


def occurrences(keys: list[str]) -> list[int]:
    """For each position, how many equal items came before it: [a, b, a] -> [0, 0, 1]."""
    seen: Counter[str] = Counter()
    out = []
    for key in keys:
        out.append(seen[key])
        seen[key] += 1
    return out


class ChatEngine(ABC):
    """Chat generation over many conversations at once, cached and counted.

    Subclasses set `engine_id` (which backend, e.g. "transformers" or "openai:<base_url>") and
    `model` (which weights), and implement `_generate`.
    """

    engine_id: str = ""
    model: str = ""

    def __init__(self, cache: ResponseCache | None = None) -> None:
        self.cache = cache
        self.usage = UsageCounter()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(engine_id={self.engine_id!r}, model={self.model!r}, cache={self.cache!r})"

    def generate(
        self,
        conversations: list[Conversation],
        tools: list[ToolSchema] | None = None,
        params: SamplingParams | None = None,
    ) -> list[ChatResult]:
        """One result per conversation, in order; cached results are replayed, the rest generated."""
        validate_conversations(conversations)
        if not conversations:
            return []
        params = params or SamplingParams()
        start = time.perf_counter()
        if self.cache is None:
            results = self._generate(conversations, tools, params)
        else:
            results = self._generate_cached(conversations, tools, params, self.cache)
        self.usage.add(results, time.perf_counter() - start)
        return results

    def generate_one(
        self,
        conversation: Conversation,
        tools: list[ToolSchema] | None = None,
        params: SamplingParams | None = None,
    ) -> ChatResult:
        """`generate` for a single conversation."""
        return self.generate([conversation], tools, params)[0]

    def _generate_cached(
        self,
        conversations: list[Conversation],
        tools: list[ToolSchema] | None,
        params: SamplingParams,
        cache: ResponseCache,
    ) -> list[ChatResult]:
        start = time.perf_counter()
        plain = [cache_key(self.engine_id, self.model, c, tools, params) for c in conversations]
        keys = [
            key if n == 0 else cache_key(self.engine_id, self.model, c, tools, params, n)
            for c, key, n in zip(conversations, plain, occurrences(plain))
        ]
        hits = cache.get_many(keys)
        lookup_s = time.perf_counter() - start
        results: list[ChatResult | None] = [
            hits[k].model_copy(update={"latency_s": lookup_s}) if k in hits else None for k in keys
        ]
        todo = [i for i, r in enumerate(results) if r is None]
        if todo:
            fresh = self._generate([conversations[i] for i in todo], tools, params)
            cache.put_many({keys[i]: (self.engine_id, r) for i, r in zip(todo, fresh)})
            for i, r in zip(todo, fresh):
                results[i] = r
        return [r for r in results if r is not None]

    @abstractmethod
    def _generate(
        self,
        conversations: list[Conversation],
        tools: list[ToolSchema] | None,
        params: SamplingParams,
    ) -> list[ChatResult]:
        """Generate one fresh result per conversation (no cache, no counting)."""

    def close(self) -> None:
        """Release resources (the cache connection, HTTP clients)."""
        if self.cache is not None:
            self.cache.close()
