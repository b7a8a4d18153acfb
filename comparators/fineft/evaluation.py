"""Play a FineFT target path through the futures task's own accounting (`harness.tasks.futures`).

Stage II scores learners and stage III tunes its thresholds on the validation split with this, and
the claim's measurements use it too: the decision of step t is `Decision(target=grid[a_t])` at the
bar that closes the step (`steps`), filled at the next bar's open by `FuturesSimulator` with margin,
funding and liquidation; every other bar HOLDs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.execution import EpisodeResult
from harness.tasks.futures import FuturesConfig, FuturesSimulator
from market.decision import Action, Decision
from metrics.performance import max_drawdown, sharpe_ratio, simple_returns


HOLD = Decision(action=Action.HOLD)


def play(bars: pd.DataFrame, rates: pd.Series, task: FuturesConfig, steps: pd.DatetimeIndex,
         leverages: np.ndarray) -> EpisodeResult:
    """The episode over `bars` from the first step's close, with target `leverages[t]` decided at the bar
    stamped `steps[t]` and HOLD on the others."""
    bars = bars.loc[steps[0]:]
    simulator = FuturesSimulator(bars, rates, task)
    decisions = {float(v): Decision(target=float(v)) for v in np.unique(leverages)}
    at = dict(zip(steps.as_unit("ns").asi8.tolist(), (decisions[float(v)] for v in leverages)))
    for stamp in bars.index.as_unit("ns").asi8[:-1].tolist():
        simulator.submit(at.get(stamp, HOLD))
    return simulator.result()


def summary(result: EpisodeResult) -> dict[str, float]:
    """Total return, maximum drawdown (positive fraction), per-bar Sharpe and liquidations of an episode."""
    equity = result.equity["equity"].to_numpy(dtype=float)
    returns = simple_returns(equity)
    return {"total_return": float(equity[-1] / equity[0] - 1.0), "max_drawdown": float(max_drawdown(returns)),
            "sharpe_per_bar": float(np.nan_to_num(sharpe_ratio(returns))),
            "liquidations": int((result.events["kind"] == "liquidation").sum()) if len(result.events) else 0}
