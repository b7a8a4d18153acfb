"""`MassaGraphPipeline`: portfolio decisions through the coordinator/agents graph (multi_agent.massa.graph).

Per context: the agents are the pool's members, else the universe's instruments (one graph per
agent set, compiled once); the episode's `PortfolioMemory` (keyed by seed and episode) is stepped
with the portfolio at the close and the public context and every agent's view are computed from
the point-in-time view (`observations.observe`). All graphs of a batch run with LangGraph's
`batch`, each run's config carrying its sampling parameters (seeded by the context's seed) and a
`CallRecorder`, so every node's call is booked with its tokens under the node's name.

The decision: the join's weights w_i' on the agents and cash 1 − Σ w_i'. Its trace holds every
node's prompt and answer (`messages`, in graph order: the coordinator, then the agents), the
LLM calls, the parse failures and in `extra` the signals, the actions, the buy scale λ and how
each answer was read. A graph that raises yields HOLD with `Trace.error`; `Trace.fallback` is
set then and when no answer of the decision could be read.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from comparators.massa.env import weights_decision
from comparators.massa.observations import PortfolioMemory
from core.errors import ConfigError
from llm_backends.engine import ChatEngine
from llm_backends.types import SamplingParams
from market.decision import Action, Decision, DecisionContext, Trace
from multi_agent.accounting import CallRecorder
from multi_agent.massa.graph import COORDINATOR_NODE, MassaState, agent_node, build_graph
from multi_agent.massa.observations import observe
from multi_agent.massa.settings import MassaLLMSettings
from multi_agent.pipeline import configurable_chat_model
from multi_agent.settings import ModelSettings

PARAMS = "massa_params"
"""The run-config key (`config["configurable"]`) of the sampling parameters."""


def agents_of(context: DecisionContext) -> tuple[str, ...]:
    """The assets that get an agent: the pool's members, else the universe."""
    return tuple(context.pool) if context.pool is not None else tuple(context.instruments)


def messages_of(final: MassaState) -> list[dict[str, str]]:
    """Every LLM node's prompt and answer, the coordinator first, then the agents in their order."""
    by_node = {e["node"]: e for e in final.get("exchanges", [])}
    order = [COORDINATOR_NODE, *(agent_node(name) for name in final["private"])]
    said = []
    for node in (n for n in order if n in by_node):
        said += [{"role": "user", "name": node, "content": by_node[node]["prompt"]},
                 {"role": "assistant", "name": node, "content": by_node[node]["answer"]}]
    return said


class MassaGraphPipeline:
    """The coordinator/agents graph over one engine (module docstring)."""

    def __init__(self, settings: MassaLLMSettings, engine: ChatEngine):
        self.settings = settings
        self.chat = configurable_chat_model(engine, ModelSettings(temperature=settings.temperature), PARAMS)
        self.graphs: dict[tuple[str, ...], Any] = {}
        self.memories: dict[tuple[int, str], tuple[tuple[str, ...], PortfolioMemory]] = {}

    def graph(self, agents: tuple[str, ...]):
        if agents not in self.graphs:
            self.graphs[agents] = build_graph(agents, self.chat, self.settings)
        return self.graphs[agents]

    def memory(self, context: DecisionContext) -> PortfolioMemory:
        """The episode's portfolio memory; an agent set that changes within an episode is refused."""
        if context.portfolio is None:
            raise ConfigError("massa_llm: needs the portfolio in each context")
        agents, key = agents_of(context), (context.seed, context.ticker)
        if key not in self.memories:
            self.memories[key] = (agents, PortfolioMemory(agents))
        known, memory = self.memories[key]
        if known != agents:
            raise ConfigError(f"massa_llm: the pool changed within episode {context.ticker} on {context.date.date()} "
                              f"({', '.join(known)} -> {', '.join(agents)}); one agent per asset of a fixed pool")
        return memory

    def state(self, context: DecisionContext) -> MassaState:
        """The graph's input of one context (steps its episode's memory)."""
        public, private, weights = observe(context.view, agents_of(context), self.memory(context), context.portfolio,
                                           self.settings.window, self.settings.trend_bars)
        return MassaState(public=public, private=private, weights=[float(w) for w in weights])

    def recall(self, context: DecisionContext) -> None:
        """Step the episode's memory as `decide` did (a resumed run's journaled decision)."""
        self.memory(context).step(context.portfolio)

    def decide(self, contexts: list[DecisionContext]) -> list[Decision]:
        """One decision per context, in order; the graphs of each agent set run as one batch."""
        states = [self.state(c) for c in contexts]
        decisions: list[Decision | None] = [None] * len(contexts)
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, context in enumerate(contexts):
            groups.setdefault(agents_of(context), []).append(i)
        for agents, members in groups.items():
            recorders = [CallRecorder() for _ in members]
            finals = self.graph(agents).batch([states[i] for i in members],
                                              [self._run_config(contexts[i], r) for i, r in zip(members, recorders)],
                                              return_exceptions=True)
            for i, final, recorder in zip(members, finals, recorders):
                decisions[i] = self._decision(final, recorder)
        return decisions

    def _run_config(self, context: DecisionContext, recorder: CallRecorder) -> RunnableConfig:
        params = SamplingParams(temperature=self.settings.temperature, seed=context.seed)
        return RunnableConfig(configurable={PARAMS: params}, callbacks=[recorder],
                              max_concurrency=self.settings.max_concurrency)

    def _decision(self, final: MassaState | Exception, recorder: CallRecorder) -> Decision:
        trace = Trace(llm_calls=recorder.calls)
        if isinstance(final, Exception):
            trace.error, trace.fallback = f"{type(final).__name__}: {final}", True
            return Decision(action=Action.HOLD, trace=trace)
        agents, orders = tuple(final["private"]), final["orders"]
        read = {e["node"]: e["read"] for e in final.get("exchanges", [])}
        trace.messages = messages_of(final)
        trace.parse_failures = list(final.get("parse_failures", []))
        coordinator = read.get(COORDINATOR_NODE)
        trace.extra = {
            "signal_source": "off" if coordinator is None else "fallback" if coordinator == "failed" else "coordinator",
            "signals": {name: final["signals_read"][name] for name in agents},
            "actions": {name: final["actions"][name] for name in agents},
            "changes": [round(float(w1 - w0), 8) for w1, w0 in zip(orders.weights, final["weights"])],
            "buy_scale": orders.buy_scale, "scaled": orders.scaled,
            "read": read, "answers": len(read), "valid": sum(how != "failed" for how in read.values()),
        }
        trace.fallback = trace.extra["valid"] == 0
        return Decision(weights=weights_decision(agents, orders).weights, trace=trace)
