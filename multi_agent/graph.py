"""The LangGraph debate graph, built from `DebateSettings` and a quick and a deep chat model.

    START ─┬─ market_analyst ───────┐
           ├─ social_analyst ───────┤   (in parallel; the join waits for all)
           ├─ news_analyst ─────────┤
           └─ fundamentals_analyst ─┴─> bull_researcher <─> bear_researcher   (max_debate_rounds)
                                             └─> research_manager (deep) ─> trader
                 ─> aggressive -> conservative -> neutral -> ...   (max_risk_rounds; risk_team)
                 ─> portfolio_manager (deep) ─> END

The deep model serves the research manager and the portfolio manager; the quick model every
other role.
"""

from __future__ import annotations

from functools import partial

from langchain_core.runnables import Runnable
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from multi_agent.roles.analysts import ANALYSTS, ForcedGrammar
from multi_agent.roles.debaters import (create_aggressive_analyst, create_bear_researcher, create_bull_researcher,
                                        create_conservative_analyst, create_neutral_analyst)
from multi_agent.roles.deciders import create_portfolio_manager, create_research_manager, create_trader
from multi_agent.routing import RESEARCHERS, RISK_ANALYSTS, after_research_turn, after_risk_turn
from multi_agent.settings import DebateSettings
from multi_agent.state import DebateState

RISK_FACTORIES = (create_aggressive_analyst, create_conservative_analyst, create_neutral_analyst)


def build_graph(settings: DebateSettings, quick: Runnable, deep: Runnable,
                forced_grammar: ForcedGrammar | None = None) -> CompiledStateGraph:
    """The compiled graph of one decision (the run config carries the decision's tool set);
    `forced_grammar` is required when `settings.first_tool_call` is "required"."""
    if settings.first_tool_call == "required" and forced_grammar is None:
        raise ValueError("first_tool_call 'required' needs a forced_grammar")
    forcing = {"forced_grammar": forced_grammar if settings.first_tool_call == "required" else None,
               "tool_call_tokens": settings.tool_call_tokens}
    graph = StateGraph(DebateState)
    analysts = []
    for name in settings.analysts:
        node = f"{name}_analyst"
        graph.add_node(node, ANALYSTS[name](quick, settings.analyst_tools[name], settings.max_tool_rounds, **forcing))
        graph.add_edge(START, node)
        analysts.append(node)

    bull, bear = RESEARCHERS
    graph.add_node(bull, create_bull_researcher(quick))
    graph.add_node(bear, create_bear_researcher(quick))
    graph.add_edge(analysts, bull)
    debate_route = partial(after_research_turn, rounds=settings.max_debate_rounds)
    graph.add_conditional_edges(bull, debate_route, [bear, "research_manager"])
    graph.add_conditional_edges(bear, debate_route, [bull, "research_manager"])

    graph.add_node("research_manager", create_research_manager(deep, settings.grammar_chars))
    graph.add_node("trader", create_trader(quick, settings.grammar_chars))
    graph.add_node("portfolio_manager", create_portfolio_manager(deep, settings.grammar_chars))
    graph.add_edge("research_manager", "trader")
    if settings.risk_team:
        risk_route = partial(after_risk_turn, rounds=settings.max_risk_rounds)
        for name, factory in zip(RISK_ANALYSTS, RISK_FACTORIES):
            graph.add_node(name, factory(quick))
            graph.add_conditional_edges(name, risk_route, [*RISK_ANALYSTS, "portfolio_manager"])
        graph.add_edge("trader", RISK_ANALYSTS[0])
    else:
        graph.add_edge("trader", "portfolio_manager")
    graph.add_edge("portfolio_manager", END)
    return graph.compile()
