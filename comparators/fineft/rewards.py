"""The training reward of every (bar, previous position, target) at once: FineFT's transitions are cheap
because the market does not react to the agent.

For the decision at the close of bar t (previous target leverage L_p, new target L_a, both grid
leverages), filled at the open o of bar t+1 with high h, low l, close c, previous close c₀, fee rate f
(taker), maintenance margin m, liquidation fee rate λ and ρ the funding rates due in bar t+1, the
equity grows by the factor

    g = (1 + L_p·(o/c₀ − 1)) · (1 − f·|L_a − L_p|) · (1 + L_a·(c/o − 1) − L_a·ρ·c/o)

unless the equity at the bar's worst price w (l for a long, h for a short) falls below the
maintenance margin, 1 + L_a·(w/o − 1) < m·|L_a|·w/o, when the position is liquidated at w:

    g = (1 + L_p·(o/c₀ − 1)) · (1 − f·|L_a − L_p|) · max(1 + L_a·(w/o − 1) − λ·|L_a|·w/o, 0)

and the next previous position is flat. The reward is `scale`·(g − 1) (scale 1000: units of 10 bps
of equity). This is the futures task's accounting (`harness.tasks.futures`) to first order: the
leverage is reset to the grid at each bar (the task's position drifts with the price between
fills), the fee is charged on the leverage change before the bar's move, and funding is paid on
the open notional. Evaluation and the claim always run the task itself; only training reads this.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.tasks.futures import FuturesConfig


@dataclass(frozen=True)
class RewardTable:
    """reward[t, p, a] and liquidated[t, p, a] for the decision at the close of bar t (t = 0..T−2)."""

    reward: np.ndarray
    liquidated: np.ndarray


def funding_per_bar(index: pd.DatetimeIndex, rates: pd.Series, hours: float) -> np.ndarray:
    """ρ_i: the funding rate due at the funding time τ in (t_{i−1}, t_i], if any (0 for the first bar): the
    latest rate published at or before τ (step 4 of `harness.tasks.futures`). Bars must not be longer than
    the funding interval (one funding time per bar at most)."""
    step = pd.Timedelta(hours=hours).value
    stamps = index.as_unit("ns").asi8
    if len(stamps) > 1 and np.diff(stamps).max() > step:
        raise ValueError(f"bars longer than the funding interval ({hours} h) are not supported")
    rate_times = pd.DatetimeIndex(rates.index).as_unit("ns").asi8
    values = rates.to_numpy(dtype=float)
    out = np.zeros(len(stamps))
    due = (stamps // step) * step
    first = np.concatenate([[stamps[0] + 1], stamps[:-1]])
    for i in np.flatnonzero(due >= first):
        j = np.searchsorted(rate_times, due[i], side="right") - 1
        out[i] = values[j] if j >= 0 else 0.0
    return out


def reward_table(bars: pd.DataFrame, funding: np.ndarray, grid: np.ndarray, task: FuturesConfig,
                 scale: float = 1000.0) -> RewardTable:
    """The table of the module docstring over `bars` (open, high, low, close) and ρ per bar `funding`."""
    o, h, lo, c = (bars[k].to_numpy(dtype=float) for k in ("open", "high", "low", "close"))
    fee, mmr, liq = task.fee_bps / 1e4, task.maintenance_margin, task.liquidation_bps / 1e4
    gap = (o[1:] / c[:-1] - 1.0)[:, None, None]
    move = (c[1:] / o[1:] - 1.0)[:, None, None]
    rho = (funding[1:] * c[1:] / o[1:])[:, None, None]
    lp, la = grid[None, :, None], grid[None, None, :]
    worst = np.where(la > 0, lo[1:, None, None], h[1:, None, None]) / o[1:, None, None]
    at_worst = 1.0 + la * (worst - 1.0)
    liquidated = np.broadcast_to(at_worst < mmr * np.abs(la) * worst, (len(gap), len(grid), len(grid)))
    before = (1.0 + lp * gap) * (1.0 - fee * np.abs(la - lp))
    during = np.where(liquidated, np.maximum(at_worst - liq * np.abs(la) * worst, 0.0), 1.0 + la * move - la * rho)
    return RewardTable(reward=(scale * (before * during - 1.0)).astype(np.float32), liquidated=liquidated)
