"""Trading-activity metrics of one episode (framework x ticker x seed): trades, wins, turnover, exposure.

Inputs follow the run directory: ``trades`` has the ``trades.csv`` columns ``date, side,
shares, price, notional, fee`` (``side`` BUY or SELL, ``notional`` = shares x price, ``fee``
in currency) and ``equity`` / ``position`` are the ``equity.parquet`` columns of one episode
in date order, the first row being the initial cash.

Definitions:

* **number of trades** = number of fills; **closed trades** = number of SELL fills.
* **win rate per closed trade** = share of SELL fills with realised P&L > 0, where the P&L of
  a sale of q shares at price p with fee f is ``q * (p - c) - f`` and c is the average cost
  per share of the position sold (buy notional plus buy fees, divided by shares bought since
  the position was last flat). NaN when nothing was closed. Episodes are long-only: a SELL
  beyond the shares held is valued at its own price (P&L = -fee).
* **win rate per day** = #{t : r_t > 0} / #{t : r_t != 0}, over the days on which equity
  moved (days out of the market do not count as losses). NaN when equity never moved.
* **one-way turnover** (annualised) = (sum of |notional| / 2) / mean(V) x P / T: the fraction
  of the average equity bought-and-sold per year, half of the two-way traded volume.
* **exposure** = fraction of the T return periods that started with a non-zero position,
  i.e. mean over t = 1..T of [position_{t-1} != 0].
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from metrics.performance import clean_returns


def trade_count(trades: pd.DataFrame) -> int:
    """Number of fills."""
    return int(len(trades))


def closed_trade_pnl(trades: pd.DataFrame) -> np.ndarray:
    """Realised P&L (currency) of each SELL fill, at the average cost of the shares sold."""
    shares_held = 0.0
    cost_held = 0.0
    pnl = []
    for side, shares, price, fee in trades[["side", "shares", "price", "fee"]].itertuples(index=False):
        if side == "BUY":
            shares_held += shares
            cost_held += shares * price + fee
        elif side == "SELL":
            average_cost = cost_held / shares_held if shares_held > 0 else price
            pnl.append(shares * (price - average_cost) - fee)
            sold = min(shares, shares_held)
            cost_held -= sold * average_cost
            shares_held -= sold
        else:
            raise ValueError(f"trades: side must be BUY or SELL, got {side!r}")
    return np.array(pnl, dtype=float)


def winning_trades(trades: pd.DataFrame) -> tuple[int, int]:
    """(closed trades with realised P&L > 0, closed trades)."""
    pnl = closed_trade_pnl(trades)
    return int(np.sum(pnl > 0)), len(pnl)


def win_rate_trades(trades: pd.DataFrame) -> float:
    """Share of closed trades (SELL fills) with realised P&L > 0; NaN when none was closed."""
    wins, closed = winning_trades(trades)
    return wins / closed if closed else math.nan


def up_days(returns: np.ndarray) -> tuple[int, int]:
    """(#{r_t > 0}, #{r_t != 0}): days equity rose, days it moved."""
    r = clean_returns(returns)
    return int(np.sum(r > 0.0)), int(np.sum(r != 0.0))


def win_rate_days(returns: np.ndarray) -> float:
    """#{r_t > 0} / #{r_t != 0}: share of the days on which equity moved that it rose; NaN if never."""
    up, moved = up_days(returns)
    return up / moved if moved else math.nan


def turnover(trades: pd.DataFrame, equity: pd.Series, periods_per_year: float = 252.0) -> float:
    """Annualised one-way turnover = (sum |notional| / 2) / mean(V) * P / T; 0 without fills."""
    periods = len(equity) - 1
    if periods < 1:
        return math.nan
    traded = float(np.abs(trades["notional"].to_numpy(dtype=float)).sum()) / 2.0
    return traded / float(np.mean(equity)) * periods_per_year / periods


def periods_held(position: pd.Series) -> tuple[int, int]:
    """(return periods started with a non-zero position, return periods T)."""
    held = np.asarray(position, dtype=float)[:-1]
    return int(np.sum(held != 0.0)), len(held)


def exposure(position: pd.Series) -> float:
    """Fraction of return periods started with a non-zero position: mean_t [position_{t-1} != 0]."""
    held, periods = periods_held(position)
    return held / periods if periods else math.nan
