"""A FineFT policy at 5x long on a crash path is liquidated by the futures task, and the training
reward table marks the same bar."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from comparators.fineft.evaluation import play, summary
from comparators.fineft.policy import FineFTModel
from comparators.fineft.positions import position_grid
from comparators.fineft.rewards import reward_table
from harness.tasks.futures import FuturesConfig

CRASH_BAR = 30


def crash_path() -> pd.DataFrame:
    """Flat minute bars at 100, then one bar whose low is 25 % below its open (5x long loses everything)."""
    index = pd.date_range("2024-01-01 00:01", periods=60, freq="1min", name="date")
    close = np.full(60, 100.0)
    close[CRASH_BAR:] = 80.0
    open_ = np.concatenate([[100.0], close[:-1]])
    low = np.minimum(open_, close) * 0.999
    low[CRASH_BAR] = 75.0
    high = np.maximum(open_, close) * 1.001
    return pd.DataFrame({"open": open_, "high": high, "low": low, "close": close, "volume": 10.0}, index=index)


def always_max_long() -> FineFTModel:
    """An ensemble whose every learner prefers the last target (+5x) whatever the state."""
    model = FineFTModel(3, position_grid(5.0), learners=3, dynamics=1, hidden=4)
    with torch.no_grad():
        model.ensemble.weights[-1].zero_()
        model.ensemble.biases[-1].zero_()
        model.ensemble.biases[-1][:, 0, -1] = 1.0
    return model


def test_a_leveraged_policy_is_liquidated_on_the_crash():
    bars = crash_path()
    model = always_max_long()
    targets, _ = model.targets(np.zeros((len(bars), 3), dtype=np.float32), "ensemble")
    leverages = model.grid.numpy()[targets]
    assert (leverages == 5.0).all()
    task = FuturesConfig()
    rates = pd.Series([0.0001], index=pd.DatetimeIndex(["2024-01-01"]))
    result = play(bars, rates, task, bars.index, leverages)  # a decision at every bar
    liquidations = result.events[result.events["kind"] == "liquidation"]
    assert len(liquidations) == 1
    assert liquidations["date"].iloc[0] == bars.index[CRASH_BAR]
    assert summary(result)["max_drawdown"] > 0.95
    assert result.equity["position"].iloc[CRASH_BAR - 1] > 0 and result.equity["position"].iloc[CRASH_BAR] == 0

    table = reward_table(bars, np.zeros(len(bars)), model.grid.numpy(), task)
    long_5x = len(model.grid) - 1
    assert table.liquidated[CRASH_BAR - 1, long_5x, long_5x]  # the decision at the close before the crash
    assert not table.liquidated[CRASH_BAR - 1, long_5x, model.flat]
    assert table.liquidated[:CRASH_BAR - 1].sum() == 0
    assert table.reward[CRASH_BAR - 1, long_5x, long_5x] < -990  # scale 1000: the equity is gone
