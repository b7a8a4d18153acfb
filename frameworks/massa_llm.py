"""MASSA's LLM variant (docs/massa.md, "LLM variant") as a portfolio `TradingFramework`.

A thin adapter: it validates the config as `MassaLLMSettings`, builds the engine from its
composed `llm` config and hands every batch to `multi_agent.massa.pipeline.MassaGraphPipeline`
(a coordinator node over public context, one agent node per asset without edges between them,
a join that scales the orders pro rata). Stateful (the sleeves' P&L memory and the drawdown's
peak carry over bars) and shown the portfolio; stochastic only when it samples. A resumed run
hands its journaled decisions to `recall`, which steps the memory with the same portfolio.

Its fingerprint covers the engine (weights, tokenizer, chat template), the prompt files, both
answer grammars (the coordinator's for a two-agent universe: its shape; the agent names are the
data's, which the journal key covers) and the settings. `run_facts` names the model and, over
this run's decisions, the share of answers read, the signals' and actions' counts, the share of
bars with scaled-down orders and the mean pairwise correlation of the agents' actions (in notches).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

import numpy as np

from configs import require_composed
from frameworks.base import TradingFramework
from frameworks.llm_fingerprint import llm_fingerprint
from frameworks.massa import mean_pairwise_correlation
from llm_backends.build import LLM_GROUP, build_engine
from market.decision import Decision, DecisionContext
from multi_agent.massa.answers import NOTCHES, agent_schema, coordinator_schema
from multi_agent.massa.graph import grammar_of
from multi_agent.massa.pipeline import MassaGraphPipeline
from multi_agent.massa.prompting import templates_digest
from multi_agent.massa.settings import MassaLLMSettings

REMOTE_DECISION_TIMEOUT_S = 900.0
"""A decision's time limit when the engine is remote: two rounds of calls (the coordinator, then
the agents in parallel), each bounded by the engine's own request timeout and retries."""

GRAMMAR_AGENTS = ("A1", "A2")
"""The universe the fingerprinted coordinator grammar is written for (its shape, module docstring)."""


class MassaLLM(TradingFramework):
    """A coordinator over public context, per-asset LLM agents, pro-rata join (module docstring)."""

    stateful: ClassVar[bool] = True
    needs_portfolio: ClassVar[bool] = True
    tasks: ClassVar[tuple[str, ...]] = ("portfolio",)

    def __init__(self, **config: Any):
        require_composed("llm", config.get("llm"), LLM_GROUP)
        self.settings = MassaLLMSettings.model_validate(config)
        self.engine = build_engine(self.settings.llm)
        self.pipeline = MassaGraphPipeline(self.settings, self.engine)
        self.stochastic = self.settings.temperature > 0
        self._decided: list[Decision] = []

    def grammars(self) -> dict[str, str | None]:
        """The coordinator's grammar (for `GRAMMAR_AGENTS`) and an agent's; None each when decoding is free."""
        constrained = self.settings.constrained
        return {"coordinator": grammar_of(coordinator_schema(GRAMMAR_AGENTS), constrained),
                "agent": grammar_of(agent_schema(self.settings.actions), constrained)}

    def fingerprint(self) -> str:
        """SHA-256 over the engine's fingerprint, the prompt templates, the answer grammars and the settings."""
        return llm_fingerprint(self.engine, templates_digest(), self.grammars(), self.settings)

    def decision_timeout_s(self) -> float | None:
        return REMOTE_DECISION_TIMEOUT_S if self.engine.remote else None

    def release_memory(self) -> None:
        self.engine.release_memory()

    def run_facts(self) -> dict[str, Any]:
        facts: dict[str, Any] = {"policy": self.engine.model, "knowledge_cutoff": self.engine.knowledge_cutoff,
                                 "constrained_decoding": self.settings.constrained,
                                 "coordinator": self.settings.coordinator, "temperature": self.settings.temperature}
        extras = [d.trace.extra for d in self._decided if "actions" in d.trace.extra]
        if extras:
            answers = sum(e["answers"] for e in extras)
            notches = np.array([[NOTCHES[a] for a in e["actions"].values()] for e in extras], dtype=float)
            facts.update(decisions=len(extras), valid_share=sum(e["valid"] for e in extras) / answers if answers else None,
                         signals=dict(Counter(s for e in extras for s in e["signals"].values())),
                         actions=dict(Counter(a for e in extras for a in e["actions"].values())),
                         scaled_share=float(np.mean([e["scaled"] for e in extras])),
                         action_correlation=mean_pairwise_correlation(notches))
        return facts

    def recall(self, context: DecisionContext, decision: Decision) -> None:
        self.pipeline.recall(context)
        self._decided.append(decision)

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        decisions = self.pipeline.decide(batch)
        self._decided += decisions
        return decisions
