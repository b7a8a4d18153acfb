"""The cold start: for the first N decision days of an episode, execute a blend of the framework's
target exposure and a baseline's.

On day t < N the book is moved, at the fill, to the exposure

    x_t = w·x_framework + (1 − w)·x_baseline,    w = `framework_weight` (0.5: a 50/50 blend)

where each x is what that decision maker alone would hold after its own decision of day t:

- target mode: its target exposure τ (the decision itself);
- discrete mode: the exposure after the fill of a shadow book that has executed that maker's
  decisions alone from the episode's first day under the run's execution rules (BUY = κ of its
  cash, SELL = flat, HOLD = as it was), x = s·p / (c + s·p) at the fill price p.

The baseline is a stateless framework (e.g. buy_and_hold) deciding on the same point-in-time
contexts (`MarketView` at each day's close). From day N on the framework's own decisions apply
to the book the blend left.
"""

from __future__ import annotations

import pandas as pd

from core.errors import ConfigError
from harness.decision_checks import task_problem
from harness.execution import ExecutionConfig, Simulator
from market.data import MarketData
from market.decision import Decision, DecisionContext
from market.portfolio import PortfolioState
from market.view import MarketView


def baseline_decisions(baseline, data: MarketData, ticker: str, dates: list[pd.Timestamp], seed: int,
                       execution: ExecutionConfig) -> list[Decision]:
    """The baseline's decisions on `dates` of `ticker`, each on the view at that date's close; a stateful
    baseline or a decision the task cannot execute is one `ConfigError` line."""
    if getattr(baseline, "stateful", False):
        raise ConfigError(f"overlay.cold_start.baseline: {type(baseline).__name__} is stateful; the cold start "
                          "needs a stateless baseline (e.g. buy_and_hold)")
    contexts = [DecisionContext(ticker=ticker, date=date, view=MarketView(data, date), seed=seed) for date in dates]
    decisions = list(baseline.decide(contexts))
    for date, decision in zip(dates, decisions):
        if (problem := task_problem(decision, execution)) is not None:
            raise ConfigError(f"overlay.cold_start.baseline: {ticker} {date:%Y-%m-%d}: {problem}")
    return decisions


def exposure_at(portfolio: PortfolioState, price: float) -> float:
    """x = s·p / (c + s·p) of `portfolio` at `price` (0 when that equity is not positive)."""
    return PortfolioState.single("", cash=portfolio.cash, shares=portfolio.shares, close=price).exposure


class ColdStart:
    """The blend over one episode: `blend` once for each of the first `len(baseline)` decision days, in order."""

    def __init__(self, weight: float, baseline: list[Decision], bars: pd.DataFrame, execution: ExecutionConfig):
        self.weight = weight
        self.baseline = baseline
        self._day = 0
        shadows = execution.mode == "discrete"
        self._own = Simulator(bars, execution) if shadows else None
        self._base = Simulator(bars, execution) if shadows else None

    @property
    def active(self) -> bool:
        return self._day < len(self.baseline)

    def blend(self, decision: Decision, fill_price: float | None) -> tuple[float, float, float] | None:
        """(x_t, x_framework, x_baseline) for today's `decision`; None on the last bar (nothing fills)."""
        base = self.baseline[self._day]
        self._day += 1
        if self._own is None:
            own_x, base_x = decision.target, base.target
        else:
            self._own.submit(decision)
            self._base.submit(base)
            if fill_price is None:
                return None
            own_x, base_x = exposure_at(self._own.portfolio, fill_price), exposure_at(self._base.portfolio, fill_price)
        if fill_price is None:
            return None
        return self.weight * own_x + (1 - self.weight) * base_x, own_x, base_x
