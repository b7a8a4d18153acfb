"""Performance metrics over daily simple returns: the convention table of TradeDuel.

Every function takes per-period simple returns ``r_t = V_t / V_{t-1} - 1`` of an equity
curve ``V_0 .. V_T`` (so T = number of return periods) and the number of periods per year
``P`` (``periods_per_year``, from the data's calendar, ``market.calendar``: 252 for daily
exchange bars, 365 for daily 24/7 bars, 525,600 for 24/7 minute bars; it is a parameter
everywhere so intraday or crypto calendars work unchanged). Missing returns (NaN, e.g. a day the series has a gap) are
dropped before anything is computed, so T counts the observed periods only (empyrical's
``annual_return`` counts the missing day in T).

==========  ===================================================  ==========================
name        formula                                              vs empyrical-reloaded
==========  ===================================================  ==========================
TR          V_T / V_0 - 1 = prod(1 + r_t) - 1, the period's     ``cum_returns_final``
            total return                                         (equal)
ARR         (V_T / V_0)^(P / T) - 1 = (prod(1 + r_t))^(P/T) - 1  ``annual_return`` (equal)
SR_day      mean(r) / std(r, ddof=1), per period, NOT            ``sharpe_ratio(annualization
            annualised (what PSR and DSR are defined on)         =1)`` (equal)
SR_ann      SR_day * sqrt(P): the paper's SR (AlphaQuanter's     ``sharpe_ratio`` (equal)
            tables are on this scale)
MDD         max_t (1 - V_t / max_{s<=t} V_s), a positive         ``max_drawdown`` is the
            fraction (0.25 = a 25 % fall from the peak)          same number, negative
Calmar      ARR / MDD                                            ``calmar_ratio`` (equal)
Sortino     mean(r - m) * P / (DD * sqrt(P)), annualised, with   ``sortino_ratio`` (equal)
            DD = sqrt(mean(min(r_t - m, 0)^2)) over ALL T days
            and required return m = 0
Vol         std(r, ddof=1) * sqrt(P)                             ``annual_volatility``
==========  ===================================================  ==========================

The ``*_columns`` functions compute TR, ARR, SR_day, std and MDD of every column of a (T, k) array
at once (NaN = missing day), for the bootstraps; the one-series functions call them.

Degenerate inputs never raise; they follow one rule, written in :func:`ratio`:
a ratio whose numerator is exactly 0 is 0 (flat equity: SR = Sortino = Calmar = 0, where
empyrical gives NaN — a framework that never trades scores a plain zero, so ``AVG`` rows
stay finite); a ratio with a zero or undefined denominator and a non-zero numerator is NaN
(empyrical gives NaN or inf). A statistic that needs two returns (std) is NaN with fewer
(so SR_day, SR_ann and Vol of a one-day series are NaN, as in empyrical). With no return at all
(T = 0) ARR is NaN and MDD is 0. A total loss or worse (V_T <= 0) has ARR = -1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

METRIC_KEYS: tuple[str, ...] = ("TR", "ARR", "SR_day", "SR_ann", "MDD", "Calmar", "Sortino", "Vol", "Trades")
"""The columns of ``metrics.csv`` after ``framework, ticker, seed``, in order."""


def clean_returns(returns: Iterable[float]) -> np.ndarray:
    """Returns as a 1-d float array with missing values (NaN) dropped."""
    values = np.asarray(returns, dtype=float).ravel()
    return values[~np.isnan(values)]


def simple_returns(equity: pd.Series | np.ndarray) -> np.ndarray:
    """Per-period simple returns r_t = V_t / V_{t-1} - 1 of an equity curve (length T = len - 1)."""
    values = np.asarray(equity, dtype=float).ravel()
    if len(values) < 2:
        return np.empty(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return values[1:] / values[:-1] - 1.0


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, with 0 when the numerator is 0 and NaN when the denominator is 0 or NaN."""
    if numerator == 0.0 and not math.isnan(denominator):
        return 0.0
    if denominator == 0.0 or math.isnan(denominator) or math.isnan(numerator):
        return math.nan
    return float(numerator / denominator)


def total_return(returns: Iterable[float]) -> float:
    """TR = V_T / V_0 - 1 = prod(1 + r_t) - 1, the period's cumulative simple return (0 for no returns)."""
    return float(total_return_columns(clean_returns(returns))[0])


def as_columns(returns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(returns as a (T, k) float array, mask of present values); a 1-d series is one column, NaN = missing."""
    panel = np.asarray(returns, dtype=float)
    if panel.ndim == 1:
        panel = panel[:, None]
    return panel, ~np.isnan(panel)


def annual_return_columns(returns: np.ndarray, periods_per_year: float = 252.0) -> np.ndarray:
    """ARR of each column: (prod of present 1 + r_t)^(P / T) - 1, T = present values; NaN for T = 0, -1 if V_T <= 0."""
    panel, present = as_columns(returns)
    periods = present.sum(axis=0)
    growth = np.prod(np.where(present, 1.0 + panel, 1.0), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        arr = np.abs(growth) ** (periods_per_year / periods) - 1.0
    return np.where(periods == 0, np.nan, np.where(growth <= 0.0, -1.0, arr))


def total_return_columns(returns: np.ndarray) -> np.ndarray:
    """TR of each column: prod of present (1 + r_t) - 1 (0 for a column without returns)."""
    panel, present = as_columns(returns)
    return np.prod(np.where(present, 1.0 + panel, 1.0), axis=0) - 1.0


def std_columns(returns: np.ndarray) -> np.ndarray:
    """Sample std (ddof=1) of each column's present values; exactly 0 if they are all equal, NaN for fewer than 2."""
    panel, present = as_columns(returns)
    periods = present.sum(axis=0)
    highest = np.max(np.where(present, panel, -np.inf), axis=0, initial=-np.inf)
    constant = highest == np.min(np.where(present, panel, np.inf), axis=0, initial=np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(present, panel, 0.0).sum(axis=0) / periods
        variance = np.where(present, (panel - mean) ** 2, 0.0).sum(axis=0) / (periods - 1)
    return np.where(periods < 2, np.nan, np.where(constant, 0.0, np.sqrt(variance)))


def sharpe_ratio_columns(returns: np.ndarray) -> np.ndarray:
    """SR_day of each column = mean / std(ddof=1) per period, with the zero-numerator rule of :func:`ratio`."""
    panel, present = as_columns(returns)
    periods = present.sum(axis=0)
    std = std_columns(panel)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(present, panel, 0.0).sum(axis=0) / periods
        sharpe = np.where(mean == 0.0, 0.0, mean / std)
    return np.where((periods < 2) | ((std == 0.0) & (mean != 0.0)), np.nan, sharpe)


def max_drawdown_columns(returns: np.ndarray) -> np.ndarray:
    """MDD of each column = max_t (1 - V_t / max_{s<=t} V_s), V_0 = 1 the first peak; missing days change nothing."""
    panel, present = as_columns(returns)
    growth = np.cumprod(np.where(present, 1.0 + panel, 1.0), axis=0)
    wealth = np.vstack([np.ones((1, panel.shape[1])), growth])
    return np.max(1.0 - wealth / np.maximum.accumulate(wealth, axis=0), axis=0)


def annual_return(returns: Iterable[float], periods_per_year: float = 252.0) -> float:
    """ARR = (V_T / V_0)^(P / T) - 1, compounded; NaN for T = 0, -1 when V_T <= 0."""
    return float(annual_return_columns(clean_returns(returns), periods_per_year)[0])


def sharpe_ratio(returns: Iterable[float]) -> float:
    """SR_day = mean(r) / std(r, ddof=1), per period, not annualised, risk-free rate 0."""
    return float(sharpe_ratio_columns(clean_returns(returns))[0])


def sharpe_ratio_annual(returns: Iterable[float], periods_per_year: float = 252.0) -> float:
    """SR_ann = SR_day * sqrt(P), the paper's SR."""
    return sharpe_ratio(returns) * math.sqrt(periods_per_year)


def max_drawdown(returns: Iterable[float]) -> float:
    """MDD = max_t (1 - V_t / max_{s<=t} V_s), a positive fraction (0 when equity never falls, also for T = 0)."""
    return float(max_drawdown_columns(clean_returns(returns))[0])


def calmar_ratio(returns: Iterable[float], periods_per_year: float = 252.0) -> float:
    """Calmar = ARR / MDD (0 for ARR = 0, NaN when MDD = 0 and ARR != 0)."""
    return ratio(annual_return(returns, periods_per_year), max_drawdown(returns))


def downside_deviation(returns: Iterable[float], required_return: float = 0.0) -> float:
    """Per-period DD = sqrt(mean_t(min(r_t - m, 0)^2)) over all T periods, m = required return."""
    r = clean_returns(returns)
    if len(r) == 0:
        return math.nan
    shortfall = np.minimum(r - required_return, 0.0)
    return float(np.sqrt(np.mean(shortfall**2)))


def sortino_ratio(
    returns: Iterable[float], periods_per_year: float = 252.0, required_return: float = 0.0
) -> float:
    """Sortino = mean(r - m) * P / (DD * sqrt(P)), annualised like empyrical; NaN for T < 2."""
    r = clean_returns(returns)
    if len(r) < 2:
        return math.nan
    annual_excess = float(np.mean(r - required_return)) * periods_per_year
    annual_dd = downside_deviation(r, required_return) * math.sqrt(periods_per_year)
    return ratio(annual_excess, annual_dd)


def annual_volatility(returns: Iterable[float], periods_per_year: float = 252.0) -> float:
    """Vol = std(r, ddof=1) * sqrt(P); NaN for T < 2."""
    return float(std_columns(clean_returns(returns))[0]) * math.sqrt(periods_per_year)


def metrics_row(equity: pd.Series, trades: int, periods_per_year: float = 252.0) -> dict[str, float]:
    """The ``metrics.csv`` row of one equity curve: TR, ARR, SR_day, SR_ann, MDD, Calmar, Sortino, Vol, Trades.

    ``equity`` is marked at each bar's close and starts with the initial cash (V_0); its
    returns are ``equity.pct_change()``. ``trades`` is the number of fills. Never raises on
    a flat or one-row curve (see the module docstring for the degenerate values).
    """
    r = simple_returns(equity)
    return {
        "TR": total_return(r),
        "ARR": annual_return(r, periods_per_year),
        "SR_day": sharpe_ratio(r),
        "SR_ann": sharpe_ratio_annual(r, periods_per_year),
        "MDD": max_drawdown(r),
        "Calmar": calmar_ratio(r, periods_per_year),
        "Sortino": sortino_ratio(r, periods_per_year),
        "Vol": annual_volatility(r, periods_per_year),
        "Trades": float(trades),
    }


def average_row(rows: list[Mapping[str, float]]) -> dict[str, float]:
    """The ``ticker=AVG`` row: the plain mean over tickers of each per-ticker metric.

    This is what the AlphaQuanter and TradingAgents tables report ("average ARR" is the mean
    of the per-ticker ARRs, not the ARR of an equal-weight portfolio). NaN entries are
    skipped; a metric that is NaN for every ticker stays NaN. Keys are those of the first row.
    """
    if not rows:
        raise ValueError("average_row: no rows to average")
    averaged = {}
    for key in rows[0]:
        values = np.array([row[key] for row in rows], dtype=float)
        present = values[~np.isnan(values)]
        averaged[key] = float(present.mean()) if len(present) else math.nan
    return averaged
