"""`DebateSettings`: every knob of the debate pipeline, validated once (the framework config).

The variants of `configs/framework/multi_agent*.yaml` differ only in these fields: which
analysts run and with which tools, how many bull/bear and risk rounds, whether the risk team
sits at all, the quick and deep models and their sampling, constrained decoding of the
structured answers, memory, and how the portfolio
manager's five-tier rating maps to an action.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from market.decision import Action
from multi_agent.outputs import Rating
from multi_agent.state import AnalystName
from tools.toolset import TOOLS

ANALYST_TOOLS: dict[str, list[str]] = {
    "market": ["get_market_data", "get_stock_indicators"],
    "social": ["get_reddit_data"],
    "news": ["get_news_data", "get_macro_indicators"],
    "fundamentals": ["get_balance_sheet", "get_cashflow", "get_income_statements", "get_insider_transactions",
                     "get_dividends", "get_earnings_estimate"],
}
"""Each analyst's tools (TradingAgents' split, on the AlphaQuanter tool set): all 11 tools, each
read by one analyst (dividends and earnings estimates are company filings: the fundamentals analyst's)."""

RATING_ACTIONS: dict[Rating, Action] = {
    Rating.BUY: Action.BUY, Rating.OVERWEIGHT: Action.BUY, Rating.HOLD: Action.HOLD,
    Rating.UNDERWEIGHT: Action.SELL, Rating.SELL: Action.SELL,
}


class ModelSettings(BaseModel):
    """One model tier: its engine (a composed config of the `llm` group) and its sampling."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    llm: dict[str, Any] | None = None
    """The engine config, e.g. `configs/llm/smollm2.yaml` as composed (`llm@frameworks.NAME.quick.llm=tiny`);
    the framework needs one, the pipeline alone (handed its engines) does not."""
    max_new_tokens: int = Field(32, gt=0)
    temperature: float = Field(0.0, ge=0.0)

class DebateSettings(BaseModel):
    """The debate pipeline's configuration (TradingAgents' defaults where it has one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    analysts: tuple[AnalystName, ...] = ("market", "social", "news", "fundamentals")
    analyst_tools: dict[AnalystName, tuple[str, ...]] = Field(
        default_factory=lambda: {name: tuple(tools) for name, tools in ANALYST_TOOLS.items()})
    max_tool_rounds: int = Field(1, ge=0)
    """Tool-calling turns an analyst may take; the turn after them has no tools and asks for the report."""
    first_tool_call: Literal["auto", "required"] = "required"
    """"required": an analyst's first turn is decoded under the grammar of one call of its tools
    (tool_choice "required"), so it reads its data at least once (small models rarely call a tool
    unforced); "auto": the model chooses, as in TradingAgents."""
    tool_call_tokens: int = Field(128, gt=0)
    """New tokens allowed for a grammar-forced call (~30-50 tokens with a few arguments, ~90 with all eleven indicators)."""
    max_debate_rounds: int = Field(1, ge=1)
    """Bull/bear rounds: each round is one bull turn then one bear turn."""
    risk_team: bool = True
    max_risk_rounds: int = Field(1, ge=1)
    """Risk rounds: each round is one aggressive, one conservative and one neutral turn."""
    quick: ModelSettings = ModelSettings()
    """Analysts, researchers, trader and risk analysts."""
    deep: ModelSettings = ModelSettings(max_new_tokens=64)
    """Research manager and portfolio manager."""
    constrained: bool = True
    """Decode the plan, the proposal and the decision under their JSON schemas' grammars."""
    answer_chars: int = Field(80, gt=0)
    """Characters allowed in each text field of a constrained answer (`outputs.answer_schema`)."""
    max_concurrency: int = Field(32, ge=1)
    """Graphs (decisions) in flight at once; each runs its parallel nodes on threads too."""
    memory: bool = False
    """Show the roles the outcomes of the pipeline's own past ratings (makes it stateful)."""
    memory_horizon: int = Field(5, ge=1)
    """Trading days after a decision at which its outcome is resolved."""
    memory_lessons: int = Field(2, ge=1)
    """Resolved outcomes shown per decision, newest first."""
    rating_actions: dict[Rating, Action] = Field(default_factory=lambda: dict(RATING_ACTIONS))
    fallback_action: Action = Action.HOLD
    """The action taken when the portfolio manager's answer does not parse or a node fails."""

    @model_validator(mode="after")
    def _consistent(self) -> "DebateSettings":
        if not self.analysts:
            raise ValueError("analysts: choose at least one of market, social, news, fundamentals")
        if self.first_tool_call == "required" and self.max_tool_rounds < 1:
            raise ValueError("first_tool_call: 'required' needs max_tool_rounds >= 1 (the forced call is a tool round)")
        if len(set(self.analysts)) != len(self.analysts):
            raise ValueError(f"analysts: each analyst at most once, got {list(self.analysts)}")
        missing = [name for name in self.analysts if name not in self.analyst_tools]
        if missing:
            raise ValueError(f"analyst_tools: no tools listed for {', '.join(missing)}")
        unknown = sorted({t for tools in self.analyst_tools.values() for t in tools} - set(TOOLS))
        if unknown:
            raise ValueError(f"analyst_tools: unknown tool(s) {', '.join(unknown)}; tools are {', '.join(TOOLS)}")
        unmapped = [r.value for r in Rating if r not in self.rating_actions]
        if unmapped:
            raise ValueError(f"rating_actions: no action for {', '.join(unmapped)}")
        return self

    @property
    def grammar_chars(self) -> int | None:
        """`answer_chars` when the answers are constrained, else None (free decoding)."""
        return self.answer_chars if self.constrained else None

    @property
    def budgets(self) -> str:
        """The budgets in one line: new tokens per tier, answer length, tool rounds, the first call."""
        answers = f"answer fields <= {self.answer_chars} chars" if self.constrained else "answers free"
        rounds = f"{self.max_tool_rounds} tool round{'s' if self.max_tool_rounds != 1 else ''}"
        return (f"quick {self.quick.max_new_tokens} / deep {self.deep.max_new_tokens} new tokens, {answers}, "
                f"{rounds}, first call {self.first_tool_call}")

    @property
    def graph_steps(self) -> int:
        """Supersteps of one run: analysts, the debate, manager, trader, risk turns, decision."""
        risk_turns = 3 * self.max_risk_rounds if self.risk_team else 0
        return 1 + 2 * self.max_debate_rounds + 2 + risk_turns + 1
