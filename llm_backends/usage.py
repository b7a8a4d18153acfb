"""Token and time accounting across every call an engine serves."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field

from llm_backends.types import ChatResult, TokenResult


@dataclass
class UsageTotals:
    """Sums over calls. `wall_s` is engine wall time (a batch counts once); `latency_s` sums per call."""

    calls: int = 0
    """Conversations (or token requests) answered."""
    engine_calls: int = 0
    """`generate` invocations; calls / engine_calls is the mean batch size."""
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    generated_prompt_tokens: int = 0
    """Prompt tokens of calls that were actually generated (not replayed from cache)."""
    generated_completion_tokens: int = 0
    reused_prompt_tokens: int = 0
    """Generated calls' prompt tokens whose keys and values came from a prefix KV store."""
    latency_s: float = 0.0
    wall_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        """prompt_tokens + completion_tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass
class UsageCounter:
    """Thread-safe running totals; engines add every result and every call's wall time."""

    totals: UsageTotals = field(default_factory=UsageTotals)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, results: list[ChatResult] | list[TokenResult], wall_s: float) -> None:
        """Count the results of one engine call (chat or token results) that took `wall_s` seconds."""
        with self._lock:
            t = self.totals
            t.wall_s += wall_s
            t.engine_calls += 1
            for r in results:
                t.calls += 1
                t.prompt_tokens += r.prompt_tokens
                t.completion_tokens += r.completion_tokens
                t.latency_s += r.latency_s
                if getattr(r, "cached", False):
                    t.cached_calls += 1
                else:
                    t.generated_prompt_tokens += r.prompt_tokens
                    t.generated_completion_tokens += r.completion_tokens
                    t.reused_prompt_tokens += r.reused_prompt_tokens

    def snapshot(self) -> UsageTotals:
        """A copy of the totals so far."""
        with self._lock:
            return UsageTotals(**asdict(self.totals))

    def reset(self) -> UsageTotals:
        """Return the totals so far and start again from zero."""
        with self._lock:
            done, self.totals = self.totals, UsageTotals()
            return done
