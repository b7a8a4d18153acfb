"""`DebatePipeline`: many decisions at once through one compiled debate graph.

`decide(contexts)` runs one graph per context with LangGraph's `batch` (at most
`max_concurrency` graphs in flight, each running its parallel analysts on threads), so the
LLM calls of all graphs reach the engine together and a micro-batching engine merges them.
Each run's config carries its decision's `ToolSet`, its sampling parameters (seeded by the
context's seed) and a `CallRecorder`. A forced first tool call (`first_tool_call: required`)
is decoded under `forced_call_grammar` with the quick engine's tokenizer (plain-text tags for
an engine without one). A graph that raises, or whose portfolio manager's
answer does not parse, yields the configured fallback action with `Trace.fallback` set;
the other decisions of the batch are unaffected.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from langchain_core.runnables import ConfigurableField, Runnable, RunnableConfig

from llm_backends.engine import ChatEngine
from llm_backends.langchain_adapter import EngineChatModel
from llm_backends.tool_call_grammar import forced_call_grammar
from llm_backends.types import SamplingParams
from market.decision import Decision, DecisionContext, Trace
from multi_agent.accounting import CallRecorder
from multi_agent.graph import build_graph
from multi_agent.memory import OutcomeMemory
from multi_agent.roles.analysts import TOOLSET
from multi_agent.settings import DebateSettings, ModelSettings
from multi_agent.state import DebateState, ordered_reports

QUICK_PARAMS, DEEP_PARAMS = "quick_params", "deep_params"
"""The run-config keys (`config["configurable"]`) of each tier's sampling parameters."""


def sampling(model: ModelSettings, seed: int) -> SamplingParams:
    """The sampling parameters of one model tier for one decision."""
    return SamplingParams(temperature=model.temperature, max_new_tokens=model.max_new_tokens, seed=seed)


def configurable_chat_model(engine: ChatEngine, model: ModelSettings, params_key: str) -> Runnable:
    """A chat model over `engine` whose sampling parameters each run sets under `params_key`."""
    return EngineChatModel(engine=engine, params=sampling(model, 0)).configurable_fields(
        params=ConfigurableField(id=params_key, name="sampling parameters"))


def transcript(final: DebateState) -> list[dict[str, str]]:
    """What every role said, in graph order, as {"role": node, "content": text} messages."""
    said = [(f"{name}_analyst", text) for name, text in ordered_reports(final)]
    said += [(t["speaker"], t["text"]) for t in final.get("debate", [])]
    said += [("research_manager", final.get("plan_text", "")), ("trader", final.get("proposal_text", ""))]
    said += [(t["speaker"], t["text"]) for t in final.get("risk_debate", [])]
    said += [("portfolio_manager", final.get("decision_text", ""))]
    return [{"role": role, "content": text} for role, text in said]


class DebatePipeline:
    """The debate graph over a quick and a deep engine (one engine may serve both)."""

    def __init__(self, settings: DebateSettings, quick: ChatEngine, deep: ChatEngine | None = None):
        self.settings = settings
        self.graph = build_graph(settings, configurable_chat_model(quick, settings.quick, QUICK_PARAMS),
                                 configurable_chat_model(deep or quick, settings.deep, DEEP_PARAMS),
                                 partial(forced_call_grammar, getattr(quick, "tokenizer", None)))
        self.memory = OutcomeMemory(settings.memory_horizon, settings.memory_lessons) if settings.memory else None

    def decide(self, contexts: list[DecisionContext]) -> list[Decision]:
        """One decision per context, in order; all graphs run concurrently."""
        recorders = [CallRecorder() for _ in contexts]
        finals = self.graph.batch([self._initial_state(c) for c in contexts],
                                  [self._run_config(c, r) for c, r in zip(contexts, recorders)],
                                  return_exceptions=True)
        decisions = [self._decision(c, f, r) for c, f, r in zip(contexts, finals, recorders)]
        if self.memory is not None:
            for context, final in zip(contexts, finals):
                if isinstance(final, dict) and final.get("decision") is not None:
                    self.memory.remember(context.ticker, context.seed, context.date, final["decision"].rating)
        return decisions

    def _initial_state(self, context: DecisionContext) -> DebateState:
        lessons = self.memory.lessons(context.view, context.ticker, context.seed) if self.memory else ""
        return DebateState(ticker=context.ticker, date=f"{context.date:%Y-%m-%d}", lessons=lessons)

    def _run_config(self, context: DecisionContext, recorder: CallRecorder) -> RunnableConfig:
        configurable: dict[str, Any] = {
            TOOLSET: context.tools,
            QUICK_PARAMS: sampling(self.settings.quick, context.seed),
            DEEP_PARAMS: sampling(self.settings.deep, context.seed),
        }
        return RunnableConfig(configurable=configurable, callbacks=[recorder],
                              max_concurrency=self.settings.max_concurrency,
                              recursion_limit=self.settings.graph_steps + 1)

    def _decision(self, context: DecisionContext, final: DebateState | Exception, recorder: CallRecorder) -> Decision:
        """The decision of one run: the mapped rating, or the fallback with the reason."""
        trace = Trace(llm_calls=recorder.calls, tool_calls=list(context.tools.records) if context.tools else [])
        if isinstance(final, Exception):
            trace.error, trace.fallback = f"{type(final).__name__}: {final}", True
            return Decision(action=self.settings.fallback_action, trace=trace)
        decision, plan, proposal = final.get("decision"), final.get("plan"), final.get("proposal")
        trace.messages = transcript(final)
        trace.parse_failures = list(final.get("parse_failures", []))
        trace.extra = {
            "rating": decision.rating.value if decision else None,
            "plan_recommendation": plan.recommendation.value if plan else None,
            "trader_action": proposal.action.value if proposal else None,
            "parsed_as": final.get("parsed_as", {}),
            "analyst_tool_calls": {name: final.get("tool_calls", {}).get(name, 0) for name in self.settings.analysts},
            "raw_answers": final.get("raw_answers", {}),
        }
        trace.fallback = decision is None
        action = self.settings.fallback_action if decision is None else self.settings.rating_actions[decision.rating]
        return Decision(action=action, trace=trace)
