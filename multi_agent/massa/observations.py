"""What the coordinator and each asset agent are shown, computed point-in-time from the view.

The coordinator's `PublicContext` (RL MASSA's context c, comparators.massa.observations, in
natural units rather than standardised): over the agents' assets, on the decision bar t,

    index_ret    r^I_t = mean_i r_{i,t}, r_{i,t} = c_{i,t}/c_{i,t−1} − 1   (the equal-weight index)
    index_ret5   Σ_{k<5} r^I_{t−k}
    realised_vol std(r^I over the last 20 bars)
    breadth      share of assets with c_{i,t} above their 20-bar mean close
    dispersion   std_i(r_{i,t})
    gross        Σ_i w_i,   drawdown 1 − E_t / max_{s≤t} E_s,   port_ret log(E_t / E_{t−1})

(every value a fraction; the prompts show percent). It holds no number of a single asset.

Agent i's `AssetView` (its own asset only): its last `window` daily returns r_{i,t−window+1..t},
its `trend_bars`-bar return c_{i,t}/c_{i,t−k} − 1, its sleeve's weight w_i = q_i c_{i,t} / E_t,
the bar's sleeve P&L q_i (c_{i,t} − c_{i,t−1}) / E_{t−1} and its EMA (β = 0.9), both as fractions
of equity. The portfolio numbers come from RL MASSA's `PortfolioMemory` (stepped once per
decision bar with the portfolio at the close), so both variants read the same quantities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from comparators.massa.inputs import HISTORY_BARS, closes, view_bars
from comparators.massa.observations import MARKET_CONTEXT, PortfolioMemory, market_context
from market.portfolio import PortfolioState
from market.view import MarketView


@dataclass(frozen=True)
class PublicContext:
    """What the coordinator reads: the date, the agents' names, the market and the portfolio's aggregates."""

    date: str
    agents: tuple[str, ...]
    index_ret: float
    index_ret5: float
    realised_vol: float
    breadth: float
    dispersion: float
    gross: float
    drawdown: float
    port_ret: float


@dataclass(frozen=True)
class AssetView:
    """What agent `name` reads: its own asset's window and trend, its sleeve's weight and P&L."""

    name: str
    date: str
    agents: int
    """N, the number of agents (an equal-weight sleeve is 1/N)."""
    returns: tuple[float, ...]
    trend: float
    trend_bars: int
    weight: float
    pnl: float
    pnl_ema: float


def observe(view: MarketView, agents: tuple[str, ...], memory: PortfolioMemory, portfolio: PortfolioState,
            window: int, trend_bars: int) -> tuple[PublicContext, dict[str, AssetView], np.ndarray]:
    """(public context, each agent's view, the weights w_i at the close) of the view's last bar; steps `memory`."""
    close = closes(view_bars(view, agents, lookback=max(HISTORY_BARS, trend_bars + 1)))
    market = market_context(close).iloc[-1]
    sleeves, aggregates, weights = memory.step(portfolio)
    n, date = len(agents), f"{view.asof:%Y-%m-%d}"
    public = PublicContext(date, agents, *(float(market[k]) for k in MARKET_CONTEXT),
                           gross=float(aggregates[0]), drawdown=float(aggregates[1]),
                           port_ret=float(aggregates[2]) / 100.0)
    returns = close.pct_change(fill_method=None).fillna(0.0)
    trend = (close.iloc[-1] / close.iloc[-1 - min(trend_bars, len(close) - 1)] - 1.0).fillna(0.0)
    views = {name: AssetView(name, date, n, tuple(float(r) for r in returns[name].iloc[-window:]),
                             float(trend[name]), trend_bars, float(weights[i]), float(sleeves[i, 1]) / (100.0 * n),
                             float(sleeves[i, 2]) / (100.0 * n))
             for i, name in enumerate(agents)}
    return public, views, weights

