"""The multi-agent debate (TradingAgents-style) as a `TradingFramework`.

A thin adapter: it validates the config as `DebateSettings`, builds the quick and deep
engines from `configs/llm` (one engine when both tiers name the same LLM config) and hands
every batch to `multi_agent.pipeline.DebatePipeline`. Stateless unless memory is on;
stochastic when a tier samples (temperature > 0). docs/multi_agent.md describes the graph.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from frameworks.base import TradingFramework
from llm_backends.configs import load_engine
from llm_backends.engine import ChatEngine
from market.decision import Decision, DecisionContext
from multi_agent.pipeline import DebatePipeline
from multi_agent.prompting import templates_digest
from multi_agent.settings import DebateSettings, ModelSettings


def build_engine(model: ModelSettings) -> ChatEngine:
    """The engine of one model tier: its `configs/llm` config with the tier's overrides."""
    return load_engine(model.llm, [f"{key}={json.dumps(value)}" for key, value in model.overrides.items()])


class MultiAgentDebate(TradingFramework):
    """Analysts, bull/bear debate, research manager, trader, risk debate, portfolio manager."""

    def __init__(self, **config: Any):
        self.settings = DebateSettings.model_validate(config)
        self.quick_engine = build_engine(self.settings.quick)
        same = (self.settings.deep.llm, self.settings.deep.overrides) == (self.settings.quick.llm, self.settings.quick.overrides)
        self.deep_engine = self.quick_engine if same else build_engine(self.settings.deep)
        self.pipeline = DebatePipeline(self.settings, self.quick_engine, self.deep_engine)
        self.stateful = self.settings.memory
        self.stochastic = self.settings.quick.temperature > 0 or self.settings.deep.temperature > 0

    def fingerprint(self) -> str:
        """SHA-256 over both engines' identities, the prompt templates and the graph settings."""
        facts = {"quick": self.quick_engine.fingerprint(), "deep": self.deep_engine.fingerprint(),
                 "prompts": templates_digest(), "graph": self.settings.model_dump(mode="json")}
        return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        return self.pipeline.decide(batch)
