"""FinAgent's rule tools: today's signal of each rule baseline and its track record, point in time.

The four rules of FinAgent's decision prompt, as our baselines: MACD crossover
(`frameworks.baselines.macd`), KDJ with an RSI filter (`kdj_rsi`), stochastic oscillator +
Bollinger bands (`stoch_bbands`) and z-score mean reversion (`zmr`). Each runs on the bars the
decision's view holds (causal rules: bar i uses bars ≤ i), so today's signal and its record
never read a bar after t.

Track record over the last `record_bars` daily returns up to t, as FinAgent reports for each
strategy (its ARR, Sharpe ratio and maximum drawdown, there over a year that overlapped the test
window): following the rule long-only — long from a BUY until a SELL, the position of bar i
earning r_{i+1} = close_{i+1} / close_i − 1 — total return Π(1 + p_i r_{i+1}) − 1, annualised
Sharpe mean/std (ddof 1) × √252 of the daily strategy returns, and maximum drawdown of its
equity curve (a positive fraction); buy-and-hold over the same bars as the baseline.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from frameworks.baselines.kdj_rsi import KDJRSI
from frameworks.baselines.macd import MACDCross
from frameworks.baselines.signal_rule import SignalRule
from frameworks.baselines.stoch_bbands import StochasticBollinger
from frameworks.baselines.zmr import ZScoreMeanReversion
from market.decision import Action
from market.view import MarketView

RULES: dict[str, SignalRule] = {
    "MACD crossover": MACDCross(),
    "KDJ with RSI filter": KDJRSI(),
    "Stochastic oscillator + Bollinger bands": StochasticBollinger(),
    "Z-score mean reversion": ZScoreMeanReversion(),
}
"""The rule tools by the name the decision prompt gives them, with the baselines' defaults."""

PERIODS_PER_YEAR = 252


def long_only_positions(signals: pd.Series) -> np.ndarray:
    """1 from a BUY until the next SELL, else 0 (the position held after each bar's signal)."""
    position, held = 0.0, []
    for signal in signals:
        position = 1.0 if signal == Action.BUY else 0.0 if signal == Action.SELL else position
        held.append(position)
    return np.asarray(held)


def record(daily: np.ndarray) -> dict[str, float]:
    """Total return, annualised Sharpe and maximum drawdown of daily returns (module docstring)."""
    equity = np.cumprod(1.0 + daily)
    std = float(np.std(daily, ddof=1)) if len(daily) > 1 else 0.0
    sharpe = float(np.mean(daily)) / std * math.sqrt(PERIODS_PER_YEAR) if std > 0 else 0.0
    peak = np.maximum.accumulate(np.concatenate([[1.0], equity]))[1:]
    return {"return": float(equity[-1] - 1) if len(equity) else 0.0, "sharpe": sharpe,
            "max_drawdown": float(np.max(1 - equity / peak)) if len(equity) else 0.0}


def record_text(values: dict[str, float]) -> str:
    return f"return {values['return']:+.1%}, Sharpe {values['sharpe']:.2f}, max drawdown {values['max_drawdown']:.1%}"


def rule_signals(view: MarketView, ticker: str, record_bars: int) -> str:
    """Each rule's signal today and its track record over the last `record_bars` returns, one line each."""
    bars = view.bars(ticker)
    closes = bars["close"].to_numpy()
    returns = closes[1:] / closes[:-1] - 1
    window = min(record_bars, len(returns))
    lines = [f"Buy-and-hold over the last {window} trading days: {record_text(record(returns[len(returns) - window:]))}."]
    for name, rule in RULES.items():
        signals = rule.signals(bars)
        earned = long_only_positions(signals)[:-1] * returns
        lines.append(f"{name}: today {signals.iloc[-1].value}; over the last {window} trading days "
                     f"{record_text(record(earned[len(earned) - window:]))}.")
    return "\n".join(lines)
