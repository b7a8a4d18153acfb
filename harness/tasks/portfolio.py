"""The portfolio task: target weights on cash + N instruments, rebalanced at the next bar.

A decision on bar t is `Decision(weights={instrument: w_i, "CASH": w_cash})` (the weights,
cash included, sum to 1; `harness.decision_checks.check_weights`) or HOLD (no trade). It is
filled at bar t+1's open (`fill="next_open"`) or close. With p_i the fill bar's price, q_i
the quantities held, h_i = q_i·p_i, E = cash + Σ h_i the equity at that price, s =
slippage_bps/1e4 and f = fee_bps/1e4:

- a buy of value Δ at p_i fills at p_i(1+s) and pays the fee f·Δ(1+s): it costs Δ·(1+κ_buy)
  with κ_buy = s + f(1+s); a sale of value Δ fills at p_i(1−s) and pays f·Δ(1−s): it yields
  Δ·(1−κ_sell) with κ_sell = s + f(1−s);
- the equity after costs E' solves E' = E − Σ_i κ_i·|w_i·E' − h_i| (κ_i of the side of
  instrument i's trade), a contraction (Σ κ_i|w_i| < 1) solved by fixed-point iteration;
- every instrument is moved to the value w_i·E' at p_i: q_i' = w_i·E'/p_i, and cash becomes
  cash' = E'·w_cash ≥ 0 whenever w_cash ≥ 0. Without costs E' = E; from cash only with
  Σ w_i = 1 and no slippage, E' = E/(1+f).

Quantities are fractional (a portfolio is weights, not lots). Recorded per bar: equity, cash,
`position` = gross exposure Σ|q_i·c_i| / equity at the close, `turnover` = Σ_i |w_i·E' − h_i| / E
(one-way traded value over equity, at the fill) and `hhi` = Σ_i (|q_i c_i| / Σ_j |q_j c_j|)²
(the Herfindahl–Hirschman concentration of the holdings at the close, 1/N for equal weights,
NaN when nothing is held). Positions and the fee and slippage flows are kept in long format.

The pool (`PortfolioConfig.pool`, EarnMore's maskable pools) maps dates to the instruments that
may be held from that date on: a weight ≠ 0 outside the pool of the decision bar is an invalid
decision (a recorded failure and the fallback). Before the pool's first date every instrument
of the universe may be held. Positions already held outside a new pool are sold only when a
decision says so (HOLD keeps them).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.errors import ConfigError
from harness.decision_checks import CASH
from harness.bar_cursor import BarCursor
from harness.execution import EpisodeResult
from harness.schema import EQUITY_COLUMNS, FLOW_COLUMNS, POSITION_COLUMNS, TRADE_COLUMNS
from harness.tasks.base import Episode, Task
from market.data import MarketData
from market.decision import Action, Decision, Trace
from market.portfolio import PortfolioState

PORTFOLIO_EQUITY_COLUMNS = [*EQUITY_COLUMNS, "turnover", "hhi"]
"""The portfolio's marks per bar: equity, cash, gross exposure (`position`), turnover and HHI."""

MULTI_TRADE_COLUMNS = [*TRADE_COLUMNS, "instrument"]
"""One fill of a multi-instrument or futures episode: the trading task's columns and the instrument."""

FIXED_POINT_STEPS = 60
"""Iterations of the post-cost equity E' (each shrinks the error by Σ κ_i|w_i| ≤ ~0.01)."""


class PortfolioConfig(BaseModel):
    """The portfolio task's rules (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["weights"] = "weights"
    universe: str = "UNIVERSE"
    """The episode's name: the universe of the configured tickers."""
    fill: Literal["next_open", "next_close"] = "next_open"
    initial_cash: float = Field(100_000.0, gt=0)
    fee_bps: float = Field(10.0, ge=0)
    slippage_bps: float = Field(0.0, ge=0)
    allow_short: bool = False
    max_gross: float = Field(1.0, gt=0)
    """Cap on Σ|w_i| over instruments: 1 = no leverage; above 1 cash may go negative (borrowing)."""
    weight_tolerance: float = Field(1e-6, gt=0, lt=0.1)
    """How far the weights, cash included, may sum from 1."""
    pool: dict[str, list[str]] | None = None
    """Date -> the instruments that may be held from that date on (None: the whole universe)."""
    fallback: Literal["hold", "cash"] = "hold"
    """What a failed decision executes: keep the holdings, or sell everything into cash."""

    @field_validator("pool")
    @classmethod
    def _dated(cls, pool: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
        if pool is None:
            return None
        for key in pool:
            try:
                pd.Timestamp(key)
            except ValueError:
                raise ValueError(f"pool date {key!r} is not a date") from None
        return pool


class PortfolioTask(Task):
    """One episode: the universe of the configured tickers over their common bars in the window."""

    name = "portfolio"
    benchmark = "equal_weight"
    multi_instrument = True

    def __init__(self, config: PortfolioConfig | None = None):
        super().__init__(config or PortfolioConfig())
        self._pool_dates: pd.DatetimeIndex = pd.DatetimeIndex([])
        self._pools: list[tuple[str, ...]] = []

    def episodes(self, data: MarketData, names: list[str], start: pd.Timestamp, end: pd.Timestamp) -> list[Episode]:
        if CASH in names:
            raise ConfigError(f"tickers: {CASH} names the cash weight of the portfolio task; rename that instrument")
        times = data.trading_days(names[0], start, end)
        for name in names[1:]:
            times = times.intersection(data.trading_days(name, start, end))
        self._set_pool(names)
        return [Episode(self.config.universe, tuple(names), times)]

    def _set_pool(self, universe: list[str]) -> None:
        """Check the pool against the universe (one line naming the first unknown instrument) and index it by date."""
        pool = self.config.pool or {}
        known = set(universe)
        for key, members in pool.items():
            unknown = [m for m in members if m not in known]
            if unknown:
                raise ConfigError(f"task.pool.{key}: unknown instrument {unknown[0]!r}; the universe holds "
                                  f"{', '.join(universe)}")
        dated = sorted((pd.Timestamp(key), tuple(members)) for key, members in pool.items())
        self._pool_dates = pd.DatetimeIndex([d for d, _ in dated])
        self._pools = [m for _, m in dated]

    def pool(self, episode: Episode, date: pd.Timestamp) -> tuple[str, ...] | None:
        i = self._pool_dates.searchsorted(date, side="right") - 1
        return self._pools[i] if i >= 0 else None

    def scope_problem(self, decision: Decision, episode: Episode, date: pd.Timestamp) -> str | None:
        if decision.weights is None:
            return None
        known = set(episode.instruments)
        for name in decision.weights:
            if name != CASH and name not in known:
                return f"weight on {name!r}, which is not in the universe {episode.name} ({len(known)} instruments)"
        pool = self.pool(episode, date)
        if pool is not None:
            outside = [n for n, w in decision.weights.items() if n != CASH and w != 0 and n not in pool]
            if outside:
                day = date.date() if date == date.normalize() else date
                return f"weight on {outside[0]}, outside the pool of {day} ({', '.join(pool)})"
        return None

    def fallback(self, error: str) -> Decision:
        if self.config.fallback == "cash":
            return Decision(weights={CASH: 1.0}, trace=Trace(error=error, fallback=True))
        return super().fallback(error)

    def simulator(self, data: MarketData, episode: Episode) -> PortfolioSimulator:
        bars = {name: data.frame(name).loc[episode.times] for name in episode.instruments}
        return PortfolioSimulator(bars, episode.times, self.config)


class PortfolioSimulator(BarCursor):
    """Steps one portfolio episode bar by bar (the accounting of the module docstring)."""

    def __init__(self, bars: dict[str, pd.DataFrame], times: pd.DatetimeIndex, config: PortfolioConfig):
        if len(times) == 0:
            raise ValueError("cannot simulate an empty window")
        self.config = config
        self.instruments = tuple(bars)
        self._column = {name: j for j, name in enumerate(self.instruments)}
        self._open = np.column_stack([bars[n]["open"].to_numpy(dtype=float) for n in self.instruments])
        self._close = np.column_stack([bars[n]["close"].to_numpy(dtype=float) for n in self.instruments])
        self._dates = times
        self._i = 0
        self._cash = float(config.initial_cash)
        self._q = np.zeros(len(self.instruments))
        self._held: list[np.ndarray] = []
        self._marks: list[tuple[float, ...]] = []
        self._trades: list[tuple] = []
        self._flows: list[tuple] = []
        self._turnover = 0.0
        self._mark()

    @property
    def portfolio(self) -> PortfolioState:
        close = self._close[self._i]
        return PortfolioState(cash=self._cash, positions=dict(zip(self.instruments, self._q.tolist())),
                              marks=dict(zip(self.instruments, close.tolist())))

    def submit(self, decision: Decision) -> None:
        """Take the decision of the current bar: fill it on the next bar, then advance."""
        if not self._advance():
            return
        self._turnover = 0.0
        if decision.weights is not None:
            prices = self._open[self._i] if self.config.fill == "next_open" else self._close[self._i]
            self._rebalance(self._weights(decision.weights), prices)
        elif decision.action is not Action.HOLD:
            raise ValueError(f"the portfolio task takes weights or HOLD, got {decision.action}")
        self._mark()

    def _weights(self, weights: dict[str, float]) -> np.ndarray:
        vector = np.zeros(len(self.instruments))
        for name, w in weights.items():
            if name != CASH:
                vector[self._column[name]] = w
        return vector

    def _rebalance(self, w: np.ndarray, p: np.ndarray) -> None:
        s, f = self.config.slippage_bps / 1e4, self.config.fee_bps / 1e4
        h = self._q * p
        equity = self._cash + h.sum()
        after = equity
        for _ in range(FIXED_POINT_STEPS):
            delta = w * after - h
            kappa = np.where(delta > 0, s + f * (1 + s), s + f * (1 - s))
            step = equity - float((kappa * np.abs(delta)).sum())
            if abs(step - after) <= 1e-13 * max(abs(equity), 1.0):
                after = step
                break
            after = step
        delta = w * after - h
        traded = np.abs(delta) > 1e-12 * max(abs(equity), 1.0)
        buying = delta > 0
        fill = np.where(buying, p * (1 + s), p * (1 - s))
        shares = np.where(traded, delta / p, 0.0)
        fees = f * np.abs(shares) * fill
        self._cash -= float((shares * fill).sum() + fees.sum())
        self._q = np.where(traded, w * after / p, self._q)
        self._turnover = float(np.abs(delta[traded]).sum() / equity) if equity > 0 else 0.0
        date = self._dates[self._i]
        for j in np.flatnonzero(traded):
            name = self.instruments[j]
            notional = abs(shares[j]) * fill[j]
            self._trades.append((date, "BUY" if buying[j] else "SELL", abs(shares[j]), fill[j], notional, fees[j], name))
            self._flows.append((date, name, "fee", -fees[j]))
            if s > 0:
                self._flows.append((date, name, "slippage", -abs(shares[j]) * p[j] * s))

    def _mark(self) -> None:
        close = self._close[self._i]
        values = self._q * close
        equity = self._cash + values.sum()
        gross = np.abs(values).sum()
        hhi = float(((np.abs(values) / gross) ** 2).sum()) if gross > 0 else np.nan
        self._marks.append((equity, self._cash, gross / equity if equity > 0 else np.nan, self._turnover, hhi))
        self._held.append(self._q.copy())

    def result(self) -> EpisodeResult:
        n = len(self._marks)
        index = self._dates[:n]
        equity = pd.DataFrame(self._marks, index=index, columns=PORTFOLIO_EQUITY_COLUMNS)
        held = np.vstack(self._held)
        marks = self._close[:n]
        weights = held * marks / equity["equity"].to_numpy()[:, None]
        k = len(self.instruments)
        positions = pd.DataFrame({
            "date": np.repeat(index.to_numpy(), k), "instrument": np.tile(np.array(self.instruments, dtype=object), n),
            "quantity": held.ravel(), "mark": marks.ravel(), "weight": weights.ravel()}, columns=POSITION_COLUMNS)
        return EpisodeResult(equity=equity, trades=pd.DataFrame(self._trades, columns=MULTI_TRADE_COLUMNS),
                             positions=positions, flows=pd.DataFrame(self._flows, columns=FLOW_COLUMNS))
