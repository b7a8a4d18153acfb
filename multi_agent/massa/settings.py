"""`MassaLLMSettings`: every knob of MASSA's LLM variant, validated once (configs/framework/massa_llm*.yaml).

The no-signal ablation is `coordinator: false`: no coordinator node, every agent reads the
neutral signal. An action's weight change is a number of notches times `step / N` (N agents):
sell −2, trim −1, hold 0, add +1, buy +2 notches (`answers.NOTCHES`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from multi_agent.massa.answers import NOTCHES


class MassaLLMSettings(BaseModel):
    """The configuration of the coordinator, the asset agents and the join."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    llm: dict[str, Any] | None = None
    """The engine config, a composed option of the `llm` group (`llm@frameworks.NAME.llm=tiny`);
    the framework needs one, the pipeline alone (handed its engine) does not."""
    coordinator: bool = True
    """False: the no-signal ablation (no coordinator node; every agent reads the neutral signal)."""
    constrained: bool = True
    """Decode the coordinator's and every agent's answer under its JSON schema's grammar."""
    temperature: float = Field(0.0, ge=0.0)
    window: int = Field(5, ge=1)
    """Daily returns of its own asset an agent reads (oldest first)."""
    trend_bars: int = Field(20, ge=2)
    """Bars of the trailing return an agent reads beside its window."""
    step: float = Field(0.5, gt=0.0)
    """One notch of weight change, in equal-weight sleeves: a change of step / N of equity."""
    max_gross: float = Field(1.0, gt=0.0)
    """The gross cap the buy orders are scaled to, pro rata (the task's `task.max_gross`)."""
    actions: tuple[str, ...] = tuple(NOTCHES)
    """The order in which an agent's prompt and answer grammar list the five actions (a position-bias
    check reverses it: `[buy, add, hold, trim, sell]`)."""
    max_concurrency: int = Field(16, ge=1)
    """Graphs (decisions) in flight at once; each runs its asset agents on threads too."""

    @field_validator("actions")
    @classmethod
    def _every_action_once(cls, actions: tuple[str, ...]) -> tuple[str, ...]:
        if sorted(actions) != sorted(NOTCHES):
            raise ValueError(f"must list each of {', '.join(NOTCHES)} once, got {', '.join(actions)}")
        return actions
