"""MASSA's LLM variant: the graph's structure, what the coordinator and the agents read, the join's
pro-rata orders, failures and fallbacks, and point-in-time inputs, driven by a scripted engine."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from bars import random_bars
from massa_scripted import ScriptedEngine
from langgraph.graph import END, START

from comparators.massa.orders import scale_orders
from core.errors import ConfigError
from harness.decision_checks import CASH
from market.data import MarketData
from market.decision import Action, DecisionContext
from market.portfolio import PortfolioState
from market.view import MarketView
from multi_agent.massa.answers import NOTCHES, read_action, read_signals
from multi_agent.massa.graph import COORDINATOR_NODE, JOIN_NODE, PublicState, agent_node
from multi_agent.massa.pipeline import MassaGraphPipeline
from multi_agent.massa.prompting import AGENT, COORDINATOR
from multi_agent.massa.settings import MassaLLMSettings

UNIVERSE = ("AAA", "BBB", "CCC")
MARKET = MarketData(bars={t: random_bars(120, seed=i) for i, t in enumerate(UNIVERSE)})
DATES = MARKET.bars["AAA"].index
SIGNAL_ACTIONS = {"increase": "buy", "neutral": "hold", "reduce": "sell"}


def context(date, positions: dict[str, float] | None = None, cash: float = 100_000.0, market: MarketData = MARKET,
            pool=None) -> DecisionContext:
    view = MarketView(market, date)
    marks = {t: view.last_close(t) for t in UNIVERSE}
    portfolio = PortfolioState(cash=cash, positions={t: (positions or {}).get(t, 0.0) for t in UNIVERSE}, marks=marks)
    return DecisionContext(ticker="UNIVERSE", date=view.asof, view=view, seed=0, portfolio=portfolio,
                           universe=UNIVERSE, pool=pool)


def follow_the_signal(call) -> str:
    """The coordinator: increase, reduce, neutral in universe order; an agent: the signal's action."""
    if call.role == COORDINATOR:
        return json.dumps(dict(zip(UNIVERSE, ("increase", "reduce", "neutral"))))
    signal = re.search(r"risk signal for you: (\w+)", call.prompt).group(1)
    return json.dumps({"action": SIGNAL_ACTIONS[signal]})


def pipeline(script=follow_the_signal, delay_s: float = 0.0, **settings):
    engine = ScriptedEngine(script, delay_s)
    return MassaGraphPipeline(MassaLLMSettings(**settings), engine), engine


def test_the_graph_fans_out_from_the_coordinator_to_one_node_per_asset_without_edges_between_them():
    for coordinator in (True, False):
        pipe, _ = pipeline(coordinator=coordinator)
        graph = pipe.graph(UNIVERSE)
        agents = {agent_node(name) for name in UNIVERSE}
        edges = {(e.source, e.target) for e in graph.get_graph().edges}
        source = COORDINATOR_NODE if coordinator else START
        assert not [e for e in edges if e[0] in agents and e[1] in agents], "an edge joins two asset agents"
        assert {e for e in edges if e[1] in agents} == {(source, a) for a in agents}
        assert {e for e in edges if e[0] in agents} == {(a, JOIN_NODE) for a in agents}
        assert (JOIN_NODE, END) in edges
        assert (COORDINATOR_NODE in graph.builder.nodes) is coordinator
    pipe, _ = pipeline()
    coordinator = pipe.graph(UNIVERSE).builder.nodes[COORDINATOR_NODE]
    assert coordinator.input_schema is PublicState and set(PublicState.__annotations__) == {"public"}


def test_the_coordinator_reads_the_same_prompt_whichever_asset_the_portfolio_holds():
    """Two portfolios of the same equity and gross exposure, in different assets: the coordinator's
    prompt is identical (it holds no asset's window, weight or P&L) while the agents' differ."""
    date = DATES[80]
    view = MarketView(MARKET, date)
    prompts = []
    for held in ("AAA", "BBB"):
        pipe, engine = pipeline()
        pipe.decide([context(date, {held: 40_000.0 / view.last_close(held)}, cash=60_000.0)])
        prompts.append((engine.prompts(COORDINATOR), sorted(engine.prompts(AGENT))))
    (coordinator_a, agents_a), (coordinator_b, agents_b) = prompts
    assert len(coordinator_a) == 1 and coordinator_a == coordinator_b
    assert agents_a != agents_b
    assert "invested: 40.0 % of equity" in coordinator_a[0]
    for name in UNIVERSE:
        closes = MARKET.bars[name]["close"].loc[:date]
        own = f"{100 * (closes.iloc[-1] / closes.iloc[-2] - 1):+.2f} %"
        assert own not in coordinator_a[0], f"{name}'s own return is in the coordinator's prompt"


def test_each_agent_reads_its_own_asset_and_its_own_signal_and_the_join_scales_the_buys_pro_rata():
    date = DATES[80]
    pipe, engine = pipeline(step=1.0)
    held = {"BBB": 30_000.0 / MarketView(MARKET, date).last_close("BBB")}
    (decision,), = [pipe.decide([context(date, held, cash=70_000.0)])]
    prompts = engine.prompts(AGENT)
    assert len(prompts) == 3
    for name, signal in zip(UNIVERSE, ("increase", "reduce", "neutral")):
        (own,) = [p for p in prompts if p.startswith(f"Stock: {name}.")]
        assert f"risk signal for you: {signal}." in own
        assert not any(other in own for other in UNIVERSE if other != name)
    assert decision.trace.extra["signals"] == dict(zip(UNIVERSE, ("increase", "reduce", "neutral")))
    assert decision.trace.extra["actions"] == {"AAA": "buy", "BBB": "sell", "CCC": "hold"}
    weights = np.array([0.0, 0.3, 0.0])
    expected = scale_orders(weights, np.array([2, -2, 0]) * 1.0 / 3, max_gross=1.0)
    assert expected.weights == pytest.approx([2 / 3, 0.0, 0.0])   # BBB's sale frees cash; AAA's buy fits
    assert [decision.weights[n] for n in UNIVERSE] == pytest.approx(list(expected.weights))
    assert decision.weights[CASH] == pytest.approx(1 / 3)


def test_buys_beyond_the_cash_are_cut_by_one_factor():
    pipe, _ = pipeline(lambda call: '{"AAA": "increase", "BBB": "increase", "CCC": "increase"}'
                       if call.role == COORDINATOR else '{"action": "buy"}', step=1.0)
    (decision,) = pipe.decide([context(DATES[80])])
    assert decision.trace.extra["scaled"] and decision.trace.extra["buy_scale"] == pytest.approx(0.5)
    assert [decision.weights[n] for n in UNIVERSE] == pytest.approx([1 / 3] * 3)


def test_the_agents_run_in_parallel_after_the_coordinator():
    pipe, engine = pipeline(delay_s=0.3)
    pipe.decide([context(DATES[80])])
    coordinator = next(c for c in engine.calls if c.role == COORDINATOR)
    agents = [c for c in engine.calls if c.role == AGENT]
    assert min(c.start for c in agents) >= coordinator.end
    assert max(c.start for c in agents) < min(c.end for c in agents), "the agents' calls did not overlap"


def test_every_node_is_traced_with_its_prompt_answer_and_tokens():
    pipe, engine = pipeline()
    (decision,) = pipe.decide([context(DATES[80])])
    trace = decision.trace
    nodes = [COORDINATOR_NODE, *(agent_node(n) for n in UNIVERSE)]
    assert sorted(c.role for c in trace.llm_calls) == sorted(nodes)
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in trace.llm_calls)
    assert [m["name"] for m in trace.messages] == [n for n in nodes for _ in range(2)]
    assert [m["role"] for m in trace.messages] == ["user", "assistant"] * len(nodes)
    assert trace.messages[0]["content"] == engine.prompts(COORDINATOR)[0]
    assert trace.extra["read"] == dict.fromkeys(nodes, "json") and trace.extra["valid"] == 4
    assert not trace.fallback and not trace.parse_failures


def test_without_the_coordinator_every_agent_reads_the_neutral_signal():
    pipe, engine = pipeline(coordinator=False)
    (decision,) = pipe.decide([context(DATES[80])])
    assert not engine.prompts(COORDINATOR)
    assert all("risk signal for you: neutral." in p for p in engine.prompts(AGENT))
    assert decision.trace.extra["signal_source"] == "off"
    assert decision.trace.extra["actions"] == dict.fromkeys(UNIVERSE, "hold")
    assert decision.weights == {**dict.fromkeys(UNIVERSE, 0.0), CASH: 1.0}


def test_unreadable_answers_fall_back_to_neutral_and_hold_with_their_failures_recorded():
    def script(call):
        if call.role == COORDINATOR:
            return "the market looks fine"
        return "maybe" if "Stock: AAA." in call.prompt else '{"action": "buy"}'

    pipe, _ = pipeline(script)
    (decision,) = pipe.decide([context(DATES[80])])
    extra = decision.trace.extra
    assert extra["signal_source"] == "fallback" and extra["signals"] == dict.fromkeys(UNIVERSE, "neutral")
    assert extra["actions"] == {"AAA": "hold", "BBB": "buy", "CCC": "buy"}
    assert extra["valid"] == 2 and extra["answers"] == 4 and not decision.trace.fallback
    assert [f.split(":")[0] for f in decision.trace.parse_failures] == [COORDINATOR_NODE, "agent_AAA"]
    assert decision.weights["AAA"] == 0.0 and decision.weights["BBB"] > 0


def test_a_decision_with_no_readable_answer_is_a_fallback_and_a_raising_node_holds():
    pipe, _ = pipeline(lambda call: "no idea")
    (decision,) = pipe.decide([context(DATES[80])])
    assert decision.trace.fallback and decision.trace.extra["valid"] == 0
    assert decision.weights == {**dict.fromkeys(UNIVERSE, 0.0), CASH: 1.0}

    def broken(call):
        if call.role == COORDINATOR:
            raise RuntimeError("engine down")
        return '{"action": "buy"}'

    pipe, _ = pipeline(broken)
    first, second = pipe.decide([context(DATES[80]), context(DATES[81])])
    for decision in (first, second):
        assert decision.action == Action.HOLD and decision.trace.fallback
        assert decision.trace.error == "RuntimeError: engine down"


def test_the_reader_takes_json_then_one_named_action():
    assert read_action('{"action": "Trim"}').value == "trim"
    assert read_action("I would buy.").how == "text"
    assert read_action("buy or sell").value is None
    read = read_signals('{"AAA": "reduce", "BBB": "up"}', UNIVERSE)
    assert read.value == {"AAA": "reduce"} and "BBB, CCC" in read.failure
    assert set(NOTCHES) == {"sell", "trim", "hold", "add", "buy"}


def momentum(call) -> str:
    """An engine whose answers depend on the prompt: agents buy after a rising last day, else trim."""
    if call.role == COORDINATOR:
        return '{"AAA": "increase", "BBB": "neutral", "CCC": "reduce"}'
    last = call.prompt.split("(oldest first): ")[1].split(".\n")[0].split(", ")[-1]
    return json.dumps({"action": "trim" if last.startswith("-") else "buy"})


def test_decisions_before_a_day_do_not_change_when_later_data_does():
    """Every bar after day X perturbed: the prompts and decisions of the bars up to X are the same, and
    those after X differ (the perturbation is visible once it is in the past)."""
    cut = DATES[90]
    factor = np.where(DATES > cut, np.random.default_rng(7).uniform(0.5, 1.5, len(DATES)), 1.0)
    perturbed = MarketData(bars={t: frame.mul(factor, axis=0) for t, frame in MARKET.bars.items()})
    runs = []
    for market in (MARKET, perturbed):
        pipe, engine = pipeline(momentum)
        decisions = [pipe.decide([context(date, {"AAA": 100.0}, cash=90_000.0, market=market)])[0]
                     for date in DATES[84:94]]
        runs.append(([d.weights for d in decisions], [d.trace.messages for d in decisions]))
    (weights, messages), (weights_perturbed, messages_perturbed) = runs
    upto = list(DATES[84:94]).index(cut) + 1
    assert weights[:upto] == weights_perturbed[:upto] and messages[:upto] == messages_perturbed[:upto]
    assert all(a != b for a, b in zip(messages[upto:], messages_perturbed[upto:]))


def test_a_pool_gives_agents_to_its_members_only_and_may_not_change_within_an_episode():
    pipe, engine = pipeline()
    (decision,) = pipe.decide([context(DATES[80], pool=("AAA", "CCC"))])
    assert set(decision.weights) == {"AAA", "CCC", CASH}
    assert sorted(p.split(".")[0] for p in engine.prompts(AGENT)) == ["Stock: AAA", "Stock: CCC"]
    with pytest.raises(ConfigError, match="the pool changed within episode"):
        pipe.decide([context(DATES[81], pool=("AAA", "BBB"))])


REVERSED = ("buy", "add", "hold", "trim", "sell")


def test_the_agents_are_offered_the_actions_in_the_settings_order_with_the_same_changes():
    date = DATES[80]
    default, reversed_ = pipeline(step=1.0)[1], pipeline(step=1.0, actions=REVERSED)[1]
    for engine, settings in ((default, {}), (reversed_, {"actions": REVERSED})):
        MassaGraphPipeline(MassaLLMSettings(step=1.0, **settings), engine).decide([context(date)])
    first, second = default.prompts(AGENT)[0], reversed_.prompts(AGENT)[0]
    offered = lambda prompt: re.search(r"one of (.*)\}", prompt).group(1).split(", ")  # noqa: E731
    assert offered(first) == list(NOTCHES) and offered(second) == list(REVERSED)
    changes = lambda prompt: sorted(re.search(r"Actions: (.*)\.\n", prompt).group(1).split(", "))  # noqa: E731
    assert changes(first) == changes(second)   # each action keeps its weight change


def test_the_action_order_must_list_every_action_once():
    with pytest.raises(ValueError, match="must list each of sell, trim, hold, add, buy once"):
        MassaLLMSettings(actions=("buy", "buy", "hold", "trim", "sell"))
    with pytest.raises(ValueError, match="must list each"):
        MassaLLMSettings(actions=("buy", "hold"))
