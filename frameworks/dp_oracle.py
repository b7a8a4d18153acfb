"""ORACLE row: the dynamic-programming teacher trading the futures task with the whole future known.

Not a strategy: it reads every bar of the market, past and future, from the data itself (never
through the point-in-time view), and holds the positions of the optimal path of
`comparators.dp_teacher` over the instrument's whole series (grid `positions`, fee `fee_bps`, no
discount), from flat at the first bar. It shows the ceiling that MacroHFT's and FineFT's teacher
distils from — what a perfect forecaster with these fees would earn — and belongs in a suite
only as an explicitly labelled oracle row (`ORACLE-dp_teacher` in configs/suite/futures_duel.yaml).
Funding, margin and liquidation are not in its objective; the task's accounting still applies to
its fills.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from comparators.dp_teacher import dp_teacher
from core.errors import ConfigError
from frameworks.base import TradingFramework
from market.data import MarketData
from market.decision import Decision, DecisionContext, Trace


class DPTeacherOracle(TradingFramework):
    """The DP teacher's optimal targets, computed from the full (future-including) series (module docstring)."""

    tasks: ClassVar[tuple[str, ...]] = ("futures",)
    oracle: ClassVar[bool] = True

    def __init__(self, data: MarketData, positions: list[float], fee_bps: float):
        if not isinstance(data, MarketData):
            raise ConfigError(f"dp_oracle: data must be a market (a data config), got {type(data).__name__}")
        self.data = data
        self.positions = np.asarray(positions, dtype=np.float64)
        self.fee = float(fee_bps) / 1e4
        self._targets: dict[str, pd.Series] = {}

    def run_facts(self) -> dict:
        return {"oracle": "reads the future: the DP teacher's optimal path over the whole series",
                "positions": self.positions.tolist(), "fee_bps": self.fee * 1e4}

    def targets(self, ticker: str) -> pd.Series:
        """Target leverage per bar of the whole series: the optimal path's, flat on the last bar."""
        if ticker not in self._targets:
            close = self.data.frame(ticker)["close"]
            table = dp_teacher(close.to_numpy(dtype=np.float64), self.positions, self.fee)
            start = int(np.argmin(np.abs(self.positions)))
            path = np.append(table.optimal_path(start), start)
            self._targets[ticker] = pd.Series(self.positions[path], index=close.index)
        return self._targets[ticker]

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        trace = Trace(extra={"oracle": True})
        return [Decision(target=float(self.targets(ctx.ticker).loc[ctx.date]), trace=trace) for ctx in batch]
