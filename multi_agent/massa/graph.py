"""The LangGraph graph of one decision: a coordinator over public context, one node per asset, a join.

    START ─> coordinator ─┬─ Send ─> agent_<A1> ──┐
                          ├─ Send ─> agent_<A2> ──┤   (in parallel; no edge between agents)
                          └─ Send ─> agent_<AN> ──┴─> join ─> END

- `coordinator` is added with the input schema `PublicState`: LangGraph hands it the public
  context alone, never an asset's window or sleeve. It answers one risk signal per agent
  (`answers.coordinator_schema`); an agent it leaves out, or every agent when its answer is
  unreadable, gets the neutral signal (a parse failure is recorded).
- `dispatch` fans out with one `Send` per agent whose payload is that agent's `AssetView` and its
  own signal: an agent node reads nothing else of the state. Without the coordinator (the
  no-signal ablation) `dispatch` runs from START and every payload carries the neutral signal.
- `agent_<name>` answers one action (`answers.agent_schema`); unreadable is hold, with a failure.
- `join` waits for every agent and turns the actions into weight changes Δ_i = notches_i·step/N,
  scaled pro rata under the gross cap (`comparators.massa.orders.scale_orders`, RL MASSA's rule).

Every LLM node records its prompt, its raw answer and how it was read in `exchanges`.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import numpy as np
from langchain_core.runnables import Runnable
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from comparators.massa.orders import Orders, scale_orders
from llm_backends.grammar import json_schema_grammar
from multi_agent.massa.answers import (AGENT_TOKENS, HOLD, NEUTRAL, NOTCHES, agent_schema, coordinator_schema,
                                       coordinator_tokens, read_action, read_signals)
from multi_agent.massa.observations import AssetView, PublicContext
from multi_agent.massa.prompting import AGENT, COORDINATOR, agent_prompt, coordinator_prompt, messages
from multi_agent.massa.settings import MassaLLMSettings
from multi_agent.state import merge

COORDINATOR_NODE, JOIN_NODE, AGENT_PREFIX = "coordinator", "join", "agent_"


def agent_node(name: str) -> str:
    """The node name of the agent of asset `name`."""
    return f"{AGENT_PREFIX}{name}"


class Exchange(TypedDict):
    """One LLM node's turn: the node, its user message, its raw answer and how it was read."""

    node: str
    prompt: str
    answer: str
    read: str


class PublicState(TypedDict):
    """The coordinator's input: the public context only."""

    public: PublicContext


class MassaState(TypedDict, total=False):
    """Everything of one decision; parallel agents merge their writes into `actions` and `signals_read`."""

    public: PublicContext
    private: dict[str, AssetView]
    """Agent name -> its view; read by `dispatch` only, which sends each agent its own."""
    weights: list[float]
    """w_i at the close, in the agents' order (the join's input)."""
    signals: dict[str, str]
    """The coordinator's signal per agent (absent without a coordinator)."""
    actions: Annotated[dict[str, str], merge]
    signals_read: Annotated[dict[str, str], merge]
    """Agent name -> the signal its payload carried."""
    exchanges: Annotated[list[Exchange], operator.add]
    parse_failures: Annotated[list[str], operator.add]
    orders: Orders


def grammar_of(schema: dict[str, Any], constrained: bool) -> str | None:
    return json_schema_grammar(schema) if constrained else None


def create_coordinator(llm: Runnable, constrained: bool):
    """The coordinator node: public context in, one signal per agent out."""

    def coordinator(state: PublicState) -> dict[str, Any]:
        public = state["public"]
        prompt = coordinator_prompt(public)
        bound = llm.bind(grammar=grammar_of(coordinator_schema(public.agents), constrained),
                         max_new_tokens=coordinator_tokens(public.agents))
        answer = bound.invoke(messages(COORDINATOR, prompt)).content
        read = read_signals(answer, public.agents)
        signals = {name: (read.value or {}).get(name, NEUTRAL) for name in public.agents}
        return {"signals": signals, "parse_failures": [f"{COORDINATOR_NODE}: {read.failure}"] if read.failure else [],
                "exchanges": [Exchange(node=COORDINATOR_NODE, prompt=prompt, answer=answer, read=read.how)]}

    return coordinator


def create_agent(llm: Runnable, step: float, constrained: bool, order: tuple[str, ...]):
    """An asset agent's node: its own view and signal in (the `Send` payload), one action out; the
    actions offered in `order`."""
    bound = llm.bind(grammar=grammar_of(agent_schema(order), constrained), max_new_tokens=AGENT_TOKENS)

    def agent(payload: dict[str, Any]) -> dict[str, Any]:
        view, signal = payload["view"], payload["signal"]
        prompt = agent_prompt(view, signal, step, order)
        answer = bound.invoke(messages(AGENT, prompt)).content
        read = read_action(answer)
        node = agent_node(view.name)
        return {"actions": {view.name: read.value or HOLD}, "signals_read": {view.name: signal},
                "parse_failures": [f"{node}: {read.failure}"] if read.failure else [],
                "exchanges": [Exchange(node=node, prompt=prompt, answer=answer, read=read.how)]}

    return agent


def dispatch(state: MassaState) -> list[Send]:
    """One `Send` per agent: its own view and its own signal (neutral without a coordinator)."""
    signals = state.get("signals") or {}
    return [Send(agent_node(name), {"view": view, "signal": signals.get(name, NEUTRAL)})
            for name, view in state["private"].items()]


def create_join(step: float, max_gross: float):
    """The join: Δ_i = NOTCHES[action_i]·step/N, then pro-rata scaling of the buys under `max_gross`."""

    def join(state: MassaState) -> dict[str, Any]:
        agents = list(state["private"])
        changes = np.array([NOTCHES[state["actions"][name]] * step / len(agents) for name in agents])
        return {"orders": scale_orders(np.asarray(state["weights"], dtype=float), changes, max_gross)}

    return join


def build_graph(agents: tuple[str, ...], llm: Runnable, settings: MassaLLMSettings) -> CompiledStateGraph:
    """The compiled graph of one decision over `agents` (module docstring)."""
    graph = StateGraph(MassaState)
    nodes = [agent_node(name) for name in agents]
    for node in nodes:
        graph.add_node(node, create_agent(llm, settings.step, settings.constrained, settings.actions))
    graph.add_node(JOIN_NODE, create_join(settings.step, settings.max_gross))
    if settings.coordinator:
        graph.add_node(COORDINATOR_NODE, create_coordinator(llm, settings.constrained), input_schema=PublicState)
        graph.add_edge(START, COORDINATOR_NODE)
        graph.add_conditional_edges(COORDINATOR_NODE, dispatch, nodes)
    else:
        graph.add_conditional_edges(START, dispatch, nodes)
    graph.add_edge(nodes, JOIN_NODE)
    graph.add_edge(JOIN_NODE, END)
    return graph.compile()
