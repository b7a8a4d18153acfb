"""What the FinAgent tests share: the synthetic market (it has news), the agent on the tiny real model, a run."""

from __future__ import annotations

import pandas as pd

from frameworks.finagent import FinAgent
from harness.journal import Journal
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from market.data import MarketData
from market.synthetic import generate_market
from llm_backends.build import engine_config

TICKERS = ["ALFA", "BRVO"]
START, END = pd.Timestamp("2020-06-01"), pd.Timestamp("2020-06-04")


def synthetic_market() -> MarketData:
    return generate_market(tickers=TICKERS, start="2018-01-01", days=660, seed=0,
                           channels={"news": {"snr": 1.0, "per_day": 2.0}})


def make_agent(**settings) -> FinAgent:
    return FinAgent(**{"llm": engine_config("tiny"), **settings})


def run(data: MarketData, framework: FinAgent, journal_path, end: pd.Timestamp = END, tickers=TICKERS):
    """A run of `framework` over START .. `end` journaled at `journal_path`."""
    spec = RunSpec(tickers=list(tickers), seeds=[0], start=START, end=end)
    with Journal(journal_path) as journal:
        return EpisodeRunner(data, spec, journal, progress=False, warn=lambda line: None).run(
            [FrameworkEntry("finagent", framework, "h", framework.fingerprint())])
