"""Fixtures of the multi-agent tests: an embedded market, decision contexts, a scripted pipeline."""

from __future__ import annotations

import pandas as pd
import pytest
from scripted import ScriptedEngine

from market.sources.embedded import load_embedded
from market.decision import DecisionContext
from market.view import MarketView
from multi_agent.pipeline import DebatePipeline
from multi_agent.settings import DebateSettings
from tools import ToolSet


@pytest.fixture(scope="session")
def market():
    return load_embedded(["MSFT", "NVDA"])


@pytest.fixture
def contexts(market):
    """Decision contexts with real tool sets: (ticker, date) -> context."""

    def make(*keys: tuple[str, str], seed: int = 0) -> list[DecisionContext]:
        views = [MarketView(market, pd.Timestamp(date)) for _, date in keys]
        return [DecisionContext(ticker=t, date=v.asof, view=v, seed=seed, tools=ToolSet(v))
                for (t, _), v in zip(keys, views)]

    return make


@pytest.fixture
def run():
    """Decide `contexts` with a scripted engine; returns (decisions, engine)."""

    def decide(contexts, script=None, delay_s: float = 0.0, **settings):
        engine = ScriptedEngine(script, delay_s) if script else ScriptedEngine(delay_s=delay_s)
        decisions = DebatePipeline(DebateSettings(**settings), engine).decide(contexts)
        return decisions, engine

    return decide
