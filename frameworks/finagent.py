"""FinAgent (Zhang et al., KDD 2024, arXiv 2402.18485) as a stateful `TradingFramework`.

A thin adapter (docs/finagent.md): it validates the config as `FinAgentSettings`, builds the
engine from its composed `llm` group config and the retriever (BM25, or an `/v1/embeddings` endpoint), and hands
every batch to `finagent.agent.FinAgentPipeline`. Stateful (its memory carries over days) and
shown the portfolio; stochastic only when it samples. A resumed run hands the journaled
decisions back through `recall`, which rebuilds the memory they wrote. Its fingerprint covers
the engine (weights, tokenizer, chat template), the prompt files, every step's answer grammar
and the settings.
"""

from __future__ import annotations

from typing import Any

from configs import require_composed
from finagent.agent import FinAgentPipeline
from finagent.outputs import STEPS, answer_schema
from finagent.prompting import templates_digest
from finagent.retrieval import BM25Retriever, EmbeddingRetriever, Retriever
from finagent.settings import FinAgentSettings
from frameworks.base import TradingFramework
from frameworks.llm_fingerprint import llm_fingerprint
from llm_backends.build import LLM_GROUP, build_engine
from llm_backends.grammar import json_schema_grammar
from market.decision import Decision, DecisionContext

REMOTE_DECISION_TIMEOUT_S = 900.0
"""A decision's time limit when the engine is remote: five calls, each bounded by the engine's own
request timeout and retries."""


def build_retriever(settings: FinAgentSettings) -> Retriever:
    if settings.retrieval == "bm25":
        return BM25Retriever()
    if settings.embeddings is None:
        raise ValueError("retrieval: embeddings needs embeddings.base_url and embeddings.model")
    return EmbeddingRetriever(**settings.embeddings.model_dump())


class FinAgent(TradingFramework):
    """Market intelligence, diversified retrieval, low- and high-level reflection, rule tools, decision."""

    stateful = True
    needs_portfolio = True

    def __init__(self, **config: Any):
        require_composed("llm", config.get("llm"), LLM_GROUP)
        self.settings = FinAgentSettings.model_validate(config)
        self.engine = build_engine(self.settings.llm)
        self.pipeline = FinAgentPipeline(self.settings, self.engine, build_retriever(self.settings))
        self.stochastic = self.settings.temperature > 0

    def grammars(self) -> dict[str, str | None]:
        """Each step's grammar (one news item for step 1's; None each when decoding is free)."""
        if not self.settings.constrained:
            return dict.fromkeys(STEPS)
        return {step: json_schema_grammar(answer_schema(model, self.settings.answer_chars, 1)) for step, model in STEPS.items()}

    def fingerprint(self) -> str:
        """SHA-256 over the engine's fingerprint, the prompt templates, the answer grammars and the settings."""
        return llm_fingerprint(self.engine, templates_digest(), self.grammars(), self.settings)

    def decision_timeout_s(self) -> float | None:
        return REMOTE_DECISION_TIMEOUT_S if self.engine.remote else None

    def release_memory(self) -> None:
        self.engine.release_memory()

    def run_facts(self) -> dict[str, Any]:
        s = self.settings
        return {"policy": self.engine.model, "knowledge_cutoff": self.engine.knowledge_cutoff,
                "constrained_decoding": s.constrained, "temperature": s.temperature, "retrieval": s.retrieval,
                "modules": {"low_level_reflection": s.low_level_reflection, "high_level_reflection": s.high_level_reflection,
                            "tools": s.tools}}

    def recall(self, context: DecisionContext, decision: Decision) -> None:
        self.pipeline.recall(context, decision)

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        return self.pipeline.decide(batch)
