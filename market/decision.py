"""The contract between the benchmark and a framework: what it is given, what it returns.

A framework receives a `DecisionContext` for one (ticker or universe, bar) and returns a `Decision`.
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
    """A framework's output for one decision: of one instrument, or of a universe.

    Exactly one of these is set; which one a task takes is the task's (`harness.tasks`):
    - `action`: BUY/SELL/HOLD (the trading task, the paper's discrete mode);
    - `target`: a target exposure as a fraction of equity (1 = fully long, 0 = flat, -1 = fully
      short; the trading task's target mode, the futures task's leverage, e.g. 5 = 5x long);
    - `weights`: instrument -> target weight of equity (the portfolio task); cash holds
      1 − Σ weights, instruments not named are sold.
    """

    action: Action | None = None
    target: float | None = None
    weights: dict[str, float] | None = None
    confidence: float | None = None
    trace: Trace = Field(default_factory=Trace)

    @model_validator(mode="after")
    def _one_kind(self) -> "Decision":
        if (self.action is not None) + (self.target is not None) + (self.weights is not None) != 1:
            raise ValueError("a Decision sets exactly one of `action`, `target` or `weights`")
        return self


@dataclass(frozen=True)
class DecisionContext:
    """What a framework sees for one decision.

    `ticker` names the episode's instrument (trading, futures) or universe (portfolio);
    `universe` lists the instruments the decision is about (empty: the one `ticker`);
    `date` is the decision bar's stamp and `bar_close` its close (`market.calendar`).
    `view` is the point-in-time market (nothing after the bar's close); `tools` is the shared
    tool set bound to that view (None when no tool set is configured); `portfolio` is given
    only to frameworks that declare `needs_portfolio`; `pool` is the subset of the universe
    that may be held at this bar (None: all of it), for portfolio tasks with a pool mask.
    """

    ticker: str
    date: pd.Timestamp
    view: MarketView
    seed: int
    tools: Any = None
    portfolio: PortfolioState | None = None
    universe: tuple[str, ...] = ()
    pool: tuple[str, ...] | None = None

    @property
    def instruments(self) -> tuple[str, ...]:
        """The instruments of this decision: the universe, or the one ticker."""
        return self.universe or (self.ticker,)

    @property
    def bar_close(self) -> pd.Timestamp:
        """When the decision bar closes: the visibility cutoff of what the view shows."""
        return self.view.cutoff
