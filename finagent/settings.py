"""`FinAgentSettings`: every knob of the FinAgent framework, validated (configs/framework/finagent*.yaml).

The module switches give the paper's ablations: intelligence only (all three off), + low-level
reflection, + high-level reflection, + tools (all on, the default).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from market.decision import Action


class EmbeddingsEndpoint(BaseModel):
    """An OpenAI-compatible `/v1/embeddings` endpoint (`retrieval: embeddings`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    model: str
    api_key_env: str | None = None


class FinAgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    llm: dict[str, Any]
    """The engine config, a composed option of the `llm` group (`llm@frameworks.NAME.llm=tiny`)."""
    constrained: bool = True
    """Decode every answer under its JSON schema's grammar (`finagent.outputs.answer_schema`)."""
    temperature: float = Field(0.0, ge=0.0)
    answer_chars: int = Field(80, ge=8)
    """Longest text field of a constrained answer, characters."""
    low_level_reflection: bool = True
    high_level_reflection: bool = True
    tools: bool = True
    """Show the rule tools' signals and track records (`finagent.rule_tools`) to the decision."""
    persona: Literal["aggressive", "conservative"] = "aggressive"
    news_items: int = Field(5, ge=1)
    """Most news items of a day read by step 1 (the latest ones)."""
    retrieval: Literal["bm25", "embeddings"] = "bm25"
    embeddings: EmbeddingsEndpoint | None = None
    top_k: int = Field(3, ge=1)
    """Entries retrieved per query (per horizon)."""
    resolve_bars: int = Field(1, ge=1)
    """Bars after which a memory entry's outcome is known and it may be retrieved (`finagent.memory`)."""
    past_decisions: int = Field(5, ge=1)
    """Most recent resolved decisions the high-level reflection judges."""
    hold_band: float = Field(0.005, ge=0.0)
    """A HOLD was right when the price moved less than this fraction; BUY when it rose, SELL when it fell."""
    record_bars: int = Field(60, ge=1)
    """Daily returns of the rule tools' track records."""
    chart_bars: int = Field(20, ge=2)
    fallback_action: Action = Action.HOLD
