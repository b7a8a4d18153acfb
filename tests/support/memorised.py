"""A framework that cheats, to prove that the memorisation probe catches it, and a framework whose
config names the run's tickers (as FinRL's does), to prove that the replay rebuilds it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from frameworks.base import TradingFramework
from market.data import MarketData
from market.decision import Action, Decision, Trace


def write_future_returns(data: MarketData, tickers: list[str], path: Path) -> Path:
    """The table `FutureLookup` reads: per (ticker, date) the return from the next open to the open after it,
    r_t = open_{t+2} / open_{t+1} - 1 (what a decision at the close of t earns under next-open fills)."""
    rows = []
    for ticker in tickers:
        opens = data.frame(ticker)["open"]
        returns = opens.shift(-2) / opens.shift(-1) - 1
        rows.append(pd.DataFrame({"ticker": ticker, "date": returns.index.strftime("%Y-%m-%d"), "future_return": returns})
                    .dropna())
    pd.concat(rows).to_csv(path, index=False)
    return path


class FutureLookup(TradingFramework):
    """A stand-in for a model that memorised history: it looks up the real return that follows each
    decision by (ticker, date) in the table it was given and BUYs before a rise, SELLs before a fall.
    A key it cannot find — an anonymised ticker or date, or a date after its `knowledge_cutoff` — is a HOLD."""

    def __init__(self, table: str, knowledge_cutoff: str | None = None):
        frame = pd.read_csv(table, dtype={"ticker": str, "date": str})
        self.returns = dict(zip(zip(frame["ticker"], frame["date"]), frame["future_return"]))
        self.knowledge_cutoff = knowledge_cutoff
        self.last_known = pd.Period(knowledge_cutoff).end_time if knowledge_cutoff else None

    def run_facts(self) -> dict:
        return {"policy": "future lookup", "knowledge_cutoff": self.knowledge_cutoff}

    def decide(self, batch):
        decisions = []
        for ctx in batch:
            known = self.last_known is None or ctx.date <= self.last_known
            future = self.returns.get((ctx.ticker, f"{ctx.date:%Y-%m-%d}")) if known else None
            if future is None:
                decisions.append(Decision(action=Action.HOLD, trace=Trace(extra={"found": False})))
            else:
                decisions.append(Decision(action=Action.BUY if future > 0 else Action.SELL, trace=Trace(extra={"found": True})))
        return decisions


class ReadsItsTickers(TradingFramework):
    """BUY when every ticker its config names is in the market it is shown; it raises otherwise."""

    def __init__(self, tickers: list[str]):
        self.tickers = list(tickers)

    def decide(self, batch):
        for ctx in batch:
            for ticker in self.tickers:
                ctx.view.bars(ticker, lookback=1)
        return [Decision(action=Action.BUY) for _ in batch]
