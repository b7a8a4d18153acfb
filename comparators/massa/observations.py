"""What MASSA's agents and its signal network see, built the same way in training and at execution.

Agent i's observation o_i (its own asset only): the point-in-time feature window of asset i
(`comparators.features`), then three portfolio numbers of its own sleeve at the close of bar t:

| feature     | value                                                                              |
|-------------|------------------------------------------------------------------------------------|
| weight      | N · w_i, w_i = q_i c_{i,t} / E_t (1 = an equal-weight sleeve)                       |
| sleeve_pnl  | 100 · N · q_i (c_{i,t} − c_{i,t−1}) / E_{t−1}: the bar's P&L of the sleeve held     |
|             | (in percent of an equal-weight sleeve)                                             |
| sleeve_ema  | exponential average of sleeve_pnl, s_t = β s_{t−1} + (1 − β) sleeve_pnl_t, β = 0.9   |

The public context c (what the signal network reads; every module of the original sees the
page's context): five market numbers of the universe's closes, standardised with the training
window's mean and std (`comparators.features.Standardiser`), then three portfolio aggregates:

| feature     | value on bar t                                                                     |
|-------------|------------------------------------------------------------------------------------|
| index_ret   | r^I_t = mean_i r_{i,t}, r_{i,t} = c_{i,t}/c_{i,t−1} − 1 (the equal-weight index)    |
| index_ret5  | Σ_{k<5} r^I_{t−k}                                                                  |
| realised_vol| std(r^I over the last 20 bars, ddof=1)                                              |
| breadth     | share of assets with c_{i,t} above their 20-bar mean close                         |
| dispersion  | std_i(r_{i,t}) (ddof=0), the cross-sectional dispersion                            |
| gross       | Σ_i w_i                                                                            |
| drawdown    | 1 − E_t / max_{s≤t} E_s since the first decision                                    |
| port_ret    | 100 · log(E_t / E_{t−1})                                                            |

Every market number of bar t uses closes ≤ t (undefined warm-up values are 0). The portfolio
numbers come from `PortfolioMemory`, stepped once per decision bar with the `PortfolioState`
the runner shows (the training environment shows the same state of the same simulator).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from market.portfolio import PortfolioState

MARKET_CONTEXT = ("index_ret", "index_ret5", "realised_vol", "breadth", "dispersion")
PORTFOLIO_CONTEXT = ("gross", "drawdown", "port_ret")
SLEEVE_FEATURES = ("weight", "sleeve_pnl", "sleeve_ema")
CONTEXT_WIDTH = len(MARKET_CONTEXT) + len(PORTFOLIO_CONTEXT)
EMA_DECAY = 0.9
VOL_BARS = 20
BREADTH_BARS = 20


def market_context(closes: pd.DataFrame) -> pd.DataFrame:
    """The market part of the context on every row of `closes` (rows bars, columns assets), causal."""
    returns = closes.pct_change(fill_method=None)
    index = returns.mean(axis=1)
    frame = pd.DataFrame({
        "index_ret": index,
        "index_ret5": index.rolling(5).sum(),
        "realised_vol": index.rolling(VOL_BARS).std(),
        "breadth": (closes > closes.rolling(BREADTH_BARS).mean()).mean(axis=1).where(
            closes.notna().cumsum().min(axis=1) >= BREADTH_BARS),
        "dispersion": returns.std(axis=1, ddof=0),
    }, index=closes.index)
    return frame.replace([np.inf, -np.inf], np.nan).fillna(0.0)


@dataclass
class PortfolioMemory:
    """What the portfolio numbers need from the previous decision bar: equity, its peak, closes, the EMA."""

    instruments: tuple[str, ...]
    equity: float | None = None
    peak: float = 0.0
    closes: np.ndarray | None = None
    ema: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.ema = np.zeros(len(self.instruments))

    def step(self, portfolio: PortfolioState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sleeve features [N, 3], portfolio context [3], weights w_i [N]) at this close; advances the memory."""
        n = len(self.instruments)
        q = np.array([portfolio.positions.get(name, 0.0) for name in self.instruments])
        close = np.array([portfolio.marks[name] for name in self.instruments])
        equity = float(portfolio.equity)
        weights = q * close / equity if equity > 0 else np.zeros(n)
        if self.equity is None or self.closes is None:
            pnl, port_ret = np.zeros(n), 0.0
        else:
            pnl = 100.0 * n * q * (close - self.closes) / self.equity
            port_ret = 100.0 * float(np.log(equity / self.equity)) if equity > 0 and self.equity > 0 else 0.0
        self.ema = EMA_DECAY * self.ema + (1.0 - EMA_DECAY) * pnl
        self.peak = max(self.peak, equity)
        drawdown = 1.0 - equity / self.peak if self.peak > 0 else 0.0
        self.equity, self.closes = equity, close
        sleeves = np.column_stack([n * weights, pnl, self.ema]).astype(np.float32)
        context = np.array([weights.sum(), drawdown, port_ret], dtype=np.float32)
        return sleeves, context, weights


def observe(windows: np.ndarray, market: np.ndarray, memory: PortfolioMemory,
            portfolio: PortfolioState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(o [N, F], c [C], w [N]) of one decision bar: the asset windows [N, F0] and the standardised market
    context [5] of the bar, and the portfolio at its close (steps `memory`)."""
    sleeves, aggregates, weights = memory.step(portfolio)
    observations = np.concatenate([np.asarray(windows, dtype=np.float32), sleeves], axis=1)
    return observations, np.concatenate([np.asarray(market, dtype=np.float32), aggregates]), weights
