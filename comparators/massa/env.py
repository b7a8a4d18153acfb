"""The training environment: N agents trading one portfolio through the task's own simulator.

An episode is a stretch of `length` bars of a window, started from cash. At bar t the agents see
their observations and the context (`observations.observe`, at the close of bar t) and ask for
weight changes; the orders are scaled pro rata (`orders.scale_orders`, under the task's gross
cap) and submitted as target weights to `harness.tasks.portfolio.PortfolioSimulator`, which fills
them at bar t+1 (open or close, the task's `fill`), pays the fees and marks the close of t+1.
Fills, fees and equity are the simulator's, so a greedy rollout is what the runner computes for
the same decisions.

Shared reward of the step (one number for every agent), E the equity at the close, after fees:

    DD_t = 1 − E_t / max_{s≤t} E_s,   r_t = k · [log(E_{t+1} / E_t) − λ · max(DD_{t+1} − DD_t, 0)]

with k = `reward_scale` and λ = `drawdown_penalty`: the log return net of the costs paid
(fees lower E_{t+1}), minus a penalty on every deepening of the drawdown. The episode ends on
its last bar, whose decision would never be filled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from comparators.massa.observations import PortfolioMemory, observe
from comparators.massa.orders import Orders, scale_orders
from core.errors import ConfigError
from harness.decision_checks import CASH
from harness.tasks.portfolio import PortfolioConfig, PortfolioSimulator
from market.decision import Decision


def weights_decision(instruments: tuple[str, ...], orders: Orders) -> Decision:
    """The task's decision for the scaled orders: {instrument: w_i', CASH: w_cash'}."""
    weights = {name: float(w) for name, w in zip(instruments, orders.weights)}
    weights[CASH] = 1.0 - sum(weights.values())
    return Decision(weights=weights)


@dataclass(frozen=True)
class Market:
    """A window's inputs aligned on its bars: OHLCV per asset, asset windows [T, N, F0], market context [T, 5]."""

    bars: dict[str, pd.DataFrame]
    times: pd.DatetimeIndex
    windows: np.ndarray
    context: np.ndarray

    def __post_init__(self) -> None:
        if self.windows.shape[:2] != (len(self.times), len(self.bars)) or len(self.context) != len(self.times):
            raise ConfigError(f"massa: {self.windows.shape} feature windows and {len(self.context)} context rows "
                              f"for {len(self.times)} bars of {len(self.bars)} assets")

    @property
    def instruments(self) -> tuple[str, ...]:
        return tuple(self.bars)


class MassaEnv:
    """Steps one episode of `market` (module docstring)."""

    def __init__(self, market: Market, task: PortfolioConfig, reward_scale: float, drawdown_penalty: float):
        if task.allow_short:
            raise ConfigError("massa: the agents trade long-only sleeves; set task.allow_short false")
        self.market, self.task = market, task
        self.reward_scale, self.drawdown_penalty = reward_scale, drawdown_penalty
        self._t = 0
        self._end = 0

    def reset(self, start: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """Start from cash at bar `start`; the episode holds bars start .. start + length − 1."""
        if length < 2 or start < 0 or start + length > len(self.market.times):
            raise ConfigError(f"massa: an episode of {length} bars from bar {start} does not fit the "
                              f"{len(self.market.times)} bars of the window")
        times = self.market.times[start:start + length]
        bars = {name: frame.iloc[start:start + length] for name, frame in self.market.bars.items()}
        self.simulator = PortfolioSimulator(bars, times, self.task)
        self.memory = PortfolioMemory(self.market.instruments)
        self._t, self._end = start, start + length - 1
        self._peak = self.simulator.portfolio.equity
        self._drawdown = 0.0
        return self._observe()

    def _observe(self) -> tuple[np.ndarray, np.ndarray]:
        o, c, self.weights = observe(self.market.windows[self._t], self.market.context[self._t], self.memory,
                                     self.simulator.portfolio)
        return o, c

    def step(self, changes: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, bool, Orders]:
        """(o', c', reward, done, the scaled orders) after submitting the agents' weight changes."""
        orders = scale_orders(self.weights, changes, self.task.max_gross)
        before = self.simulator.portfolio.equity
        self.simulator.submit(weights_decision(self.market.instruments, orders))
        self._t += 1
        after = self.simulator.portfolio.equity
        self._peak = max(self._peak, after)
        drawdown = 1.0 - after / self._peak
        deepening = max(drawdown - self._drawdown, 0.0)
        self._drawdown = drawdown
        reward = self.reward_scale * (math.log(after / before) - self.drawdown_penalty * deepening)
        o, c = self._observe()
        return o, c, reward, self._t >= self._end, orders

    def equity(self) -> float:
        return float(self.simulator.portfolio.equity)
