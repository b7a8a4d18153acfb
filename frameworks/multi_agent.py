"""The multi-agent debate (TradingAgents-style) as a `TradingFramework`.

A thin adapter: it validates the config as `DebateSettings`, builds the quick and deep
engines from `configs/llm` (one engine when both tiers name the same LLM config) and hands
every batch to `multi_agent.pipeline.DebatePipeline`. Stateless unless memory is on;
stochastic when a tier samples (temperature > 0). Its fingerprint covers both engines, the
prompt files, the answer grammars and the settings; its run facts name the models, their
knowledge cutoff and whether the answers were constrained. docs/multi_agent.md describes it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from configs import require_composed
from core.errors import ConfigError
from frameworks.base import TradingFramework
from llm_backends.build import LLM_GROUP, build_engine
from llm_backends.engine import ChatEngine
from market.decision import Decision, DecisionContext
from multi_agent.outputs import OUTPUTS
from multi_agent.pipeline import DebatePipeline
from multi_agent.roles.deciders import answer_grammar
from multi_agent.prompting import templates_digest
from multi_agent.settings import DebateSettings, ModelSettings


REMOTE_DECISION_TIMEOUT_S = 1800.0
"""A decision's time limit when a tier's engine is remote (an HTTP server): a debate makes some
twenty LLM calls, each bounded by the engine's own request timeout and retries; half an hour
without a decision means the server hangs."""


def tier_engine(model: ModelSettings, tier: str) -> ChatEngine:
    """The engine of one model tier, built from its composed `llm` config."""
    if model.llm is None:
        raise ConfigError(f"{tier}.llm: not set; select an engine with llm@frameworks.<row>.{tier}.llm=NAME")
    return build_engine(model.llm, f"{tier}.llm")


class MultiAgentDebate(TradingFramework):
    """Analysts, bull/bear debate, research manager, trader, risk debate, portfolio manager."""

    def __init__(self, **config: Any):
        for tier in ("quick", "deep"):
            require_composed(f"{tier}.llm", (config.get(tier) or {}).get("llm"), LLM_GROUP)
        self.settings = DebateSettings.model_validate(config)
        self.quick_engine = tier_engine(self.settings.quick, "quick")
        same = self.settings.deep.llm == self.settings.quick.llm
        self.deep_engine = self.quick_engine if same else tier_engine(self.settings.deep, "deep")
        if self.settings.first_tool_call == "required" and getattr(self.quick_engine, "tokenizer", None) is None:
            raise ConfigError(f"first_tool_call: 'required' decodes the analysts' first turn under a tool-call grammar, "
                              f"which needs a local engine's tokenizer; quick.llm "
                              f"({self.quick_engine.engine_id}) has none: set first_tool_call: auto")
        self.pipeline = DebatePipeline(self.settings, self.quick_engine, self.deep_engine)
        self.stateful = self.settings.memory
        self.stochastic = self.settings.quick.temperature > 0 or self.settings.deep.temperature > 0

    def grammars(self) -> dict[str, str | None]:
        """Each structured output's grammar (None each when decoding is free)."""
        return {kind: answer_grammar(schema, self.settings.grammar_chars) for kind, schema in OUTPUTS.items()}

    def fingerprint(self) -> str:
        """SHA-256 over both engines' fingerprints, the prompt templates, the answer grammars and the settings."""
        facts = {"quick": self.quick_engine.fingerprint(), "deep": self.deep_engine.fingerprint(),
                 "prompts": templates_digest(), "grammars": self.grammars(),
                 "graph": self.settings.model_dump(mode="json")}
        return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()

    def decision_timeout_s(self) -> float | None:
        """`REMOTE_DECISION_TIMEOUT_S` when a tier's engine is remote, else no limit."""
        return REMOTE_DECISION_TIMEOUT_S if self.quick_engine.remote or self.deep_engine.remote else None

    def run_facts(self) -> dict[str, Any]:
        """The models of both tiers, the later of their knowledge cutoffs, constrained decoding, sampling, budgets."""
        cutoffs = [c for c in (self.quick_engine.knowledge_cutoff, self.deep_engine.knowledge_cutoff) if c]
        models = dict.fromkeys([self.quick_engine.model, self.deep_engine.model])
        return {"policy": " + ".join(models), "quick_model": self.quick_engine.model,
                "deep_model": self.deep_engine.model, "knowledge_cutoff": max(cutoffs, default=None),
                "constrained_decoding": self.settings.constrained,
                "temperature": {"quick": self.settings.quick.temperature, "deep": self.settings.deep.temperature},
                "budgets": self.settings.budgets}

    def release_memory(self) -> None:
        """Both tiers' engines' prefix stores."""
        for engine in dict.fromkeys([self.quick_engine, self.deep_engine]):
            engine.release_memory()

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        return self.pipeline.decide(batch)
