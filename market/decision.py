"""The contract between the benchmark and a framework: what it is given, what it returns.

A framework receives a `DecisionContext` for one (ticker, date) and returns a `Decision`.
The decision carries a `Trace` — messages, tool calls, LLM calls, parse failures — which the
journal stores verbatim so that every number in a report can be traced to what the agent saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field, model_validator

from market.portfolio import PortfolioState
from market.view import MarketView


class Action(str, Enum):
    """A discrete trading action (the AlphaQuanter action space)."""

    BUY = "BUY"
    SELL = "SELL"
    HOLD = "HOLD"


class ToolCallRecord(BaseModel):
    """One call of a data tool: name, arguments, latency (s), result size (characters)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    latency_s: float = 0.0
    result_chars: int = 0
    lookahead: bool = False
    """True when an argument asked for data after the decision date (it was clamped)."""
    error: str | None = None


class LLMCallRecord(BaseModel):
    """One generation call: token counts and wall time (s); `cached` when served from cache."""

    role: str = ""
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reused_prompt_tokens: int = 0
    """Prompt tokens a local engine took from its prefix KV store instead of recomputing them."""
    latency_s: float = 0.0
    cached: bool = False


class Trace(BaseModel):
    """Everything a framework did to reach one decision."""

    messages: list[dict[str, Any]] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    llm_calls: list[LLMCallRecord] = Field(default_factory=list)
    parse_failures: list[str] = Field(default_factory=list)
    error: str | None = None
    """Set when the framework failed on this decision and the fallback action was used."""
    fallback: bool = False
    """True when the action is the configured fallback, not one the model gave (an LLM answer
    that did not parse, a failure): executed, but never scored as the model's choice."""
    extra: dict[str, Any] = Field(default_factory=dict)


class Decision(BaseModel):
    """A framework's output for one (ticker, date).

    Exactly one of `action` (BUY/SELL/HOLD, the paper's discrete mode) or `target`
    (target exposure as a fraction of equity; 1 = fully long, 0 = flat, -1 = fully short,
    for the target-position mode) is set.
    """

    action: Action | None = None
    target: float | None = None
    confidence: float | None = None
    trace: Trace = Field(default_factory=Trace)

    @model_validator(mode="after")
    def _one_kind(self) -> "Decision":
        if (self.action is None) == (self.target is None):
            raise ValueError("a Decision sets exactly one of `action` or `target`")
        return self


@dataclass(frozen=True)
class DecisionContext:
    """What a framework sees for one decision.

    `view` is the point-in-time market (nothing after `date`); `tools` is the shared tool set
    bound to that view (None when no tool set is configured); `portfolio` is given only to
    frameworks that declare `needs_portfolio`.
    """

    ticker: str
    date: pd.Timestamp
    view: MarketView
    seed: int
    tools: Any = None
    portfolio: PortfolioState | None = None
