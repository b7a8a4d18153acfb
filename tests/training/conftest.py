"""Shared fixtures of the training tests: a small synthetic market, the compact protocol and reward,
the tiny model built into the session's temporary cache root, and expert episodes on that market."""

from __future__ import annotations

import pandas as pd
import pytest

from llm_backends.paths import CACHE_ENV
from market.synthetic import generate_market
from single_agent.expert import ExpertConfig, ScriptedExpert
from single_agent.protocol import load_protocol
from single_agent.rewards import load_reward_config

TICKERS = ["ALFA", "BRVO"]


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory):
    """A private TRADEDUEL_CACHE for the session (tiny models, file digests)."""
    root = tmp_path_factory.mktemp("tradeduel-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(root))
        yield root


@pytest.fixture(scope="session")
def tickers():
    return TICKERS


@pytest.fixture(scope="session")
def market():
    return generate_market(tickers=TICKERS, start="2018-01-01", days=120, seed=0)


@pytest.fixture(scope="session")
def compact():
    return load_protocol("compact")


@pytest.fixture(scope="session")
def compact_reward():
    return load_reward_config("compact")


@pytest.fixture(scope="session")
def expert_episodes(market, compact):
    """Expert episodes (reading news) on 12 days of ALFA, with their days."""
    from expert_episodes import play

    expert = ScriptedExpert(compact, ExpertConfig())
    days = list(market.frame("ALFA").index[40:52])
    return [play(expert, market, "ALFA", day) for day in days], [pd.Timestamp(d) for d in days]
