"""The training environment: one portfolio over N stocks on the training window, with masked pools.

Arrays: `windows` (T, N, W, F), the standardised feature windows of each decision bar t (rows ≤ t),
and `opens` (T, N), the opening prices. A step decides at the close of bar t (observation
windows[t] and a mask m_t) and is filled at the open of t+1, as the benchmark's portfolio task
(`fill: next_open`); the next decision is filled at the open of t+2. With w = softmax(a/T) on cash
+ N stocks (`actions.action_weights`, no hard mask in training; w_0 = 0 with `cash=False`), r_i = open_{t+2,i}/open_{t+1,i},
w̃ the weights the previous step's holdings drifted to at the open of t+1 (all cash at the start)
and f the fee per side:

    turnover τ = Σ_i |w_i − w̃_i|          (stocks only; one-way traded value / equity)
    growth   G = (1 − f·τ)·(w_0 + Σ_i w_i r_i)
    reward   = scale · (ln G − b)         (the log return of portfolio value, net of fees)

with b = 0 (`excess=False`, the original's reward on log value) or b = ln(Σ_i (1 − m_i)·r_i / Σ_i (1 − m_i)),
the log return of the unmasked stocks held at equal weight (`excess=True`). b depends on the mask
and the market, never on the action, so it shifts every Q(s, a) of a state by the same amount and
leaves the (soft-)optimal policy unchanged; what it removes from the sampled rewards is the market
factor every fully invested portfolio shares (its daily std is 0.8-1.8 % on the synthetic market,
against 0.6 % for a stock's hidden alpha), the noise the critic would otherwise have to average out.

(1 − f·τ) is the first-order form of the task's post-cost equity E' = E − f·Σ|w_i E' − h_i|; the
two differ by O(f²τ²). The mask m_t is drawn every step: ⌊ρN⌉ stocks, ρ ~ the `model.MaskRatio`
given (by default the original's TruncNormal(0.7, 0.1) on [0.6, 0.8]; training passes its
settings'). An episode starts at a uniformly drawn bar and lasts `horizon` steps or until the
window ends (truncation, not termination: the market goes on).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from comparators.earnmore.actions import action_weights
from comparators.earnmore.model import MaskRatio, random_mask


def rebalance(weights: np.ndarray, drifted: np.ndarray, relative: np.ndarray, fee: float
              ) -> tuple[float, float, np.ndarray]:
    """One day of the module docstring's accounting: (ln G, turnover τ, the stock weights drifted to
    the next open) for weights (N+1,) on cash + N stocks, the holdings `drifted` (N,) they replace and
    the stocks' price relatives (N,) from this fill to the next."""
    turnover = float(np.abs(weights[1:] - drifted).sum())
    gross = weights[0] + float(weights[1:] @ relative)
    return float(np.log((1.0 - fee * turnover) * gross)), turnover, weights[1:] * relative / gross


def observation_space(n_stocks: int, days: int, n_features: int) -> spaces.Dict:
    """{"windows": (N, W, F) reals, "mask": (N,) in {0, 1}} (1 = masked)."""
    return spaces.Dict({"windows": spaces.Box(-np.inf, np.inf, (n_stocks, days, n_features), np.float32),
                        "mask": spaces.Box(0.0, 1.0, (n_stocks,), np.float32)})


def action_space(n_stocks: int) -> spaces.Box:
    """Logits a ∈ [−1, 1]^{N+1}: cash first, then the stocks."""
    return spaces.Box(-1.0, 1.0, (n_stocks + 1,), np.float32)


class PoolEnv(gym.Env):
    """Daily rebalancing of cash + N stocks under random masks (module docstring)."""

    def __init__(self, windows: np.ndarray, opens: np.ndarray, fee: float = 1e-3, temperature: float = 0.2,
                 horizon: int = 64, reward_scale: float = 100.0, mask_ratio: MaskRatio | None = None,
                 cash: bool = True, excess: bool = False):
        super().__init__()
        if windows.shape[0] != opens.shape[0] or windows.shape[1] != opens.shape[1]:
            raise ValueError(f"windows {windows.shape} and opens {opens.shape} disagree on bars or stocks")
        if windows.shape[0] < 3:
            raise ValueError(f"need at least 3 bars to take a step, got {windows.shape[0]}")
        self.windows = windows.astype(np.float32)
        self.opens = opens.astype(np.float64)
        self.fee, self.temperature, self.horizon, self.reward_scale = fee, temperature, horizon, reward_scale
        self.cash, self.excess = cash, excess
        self.mask_ratio = mask_ratio or MaskRatio()
        n_stocks = windows.shape[1]
        self.observation_space = observation_space(n_stocks, windows.shape[2], windows.shape[3])
        self.action_space = action_space(n_stocks)
        self._bar = 0
        self._steps = 0
        self._drifted = np.zeros(n_stocks)
        self._mask = np.zeros(n_stocks, dtype=np.float32)

    @property
    def last_decision_bar(self) -> int:
        """The last bar whose decision can be filled and valued (two opens after it)."""
        return self.windows.shape[0] - 3

    def _observation(self) -> dict[str, np.ndarray]:
        self._mask = random_mask(self.np_random, self.windows.shape[1], self.mask_ratio.sample(self.np_random))
        return {"windows": self.windows[self._bar], "mask": self._mask}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._bar = int(self.np_random.integers(0, self.last_decision_bar + 1))
        self._steps = 0
        self._drifted = np.zeros(self.windows.shape[1])
        return self._observation(), {}

    def step(self, action: np.ndarray):
        weights = action_weights(torch.as_tensor(action, dtype=torch.float32).reshape(1, -1),
                                 self.temperature, cash=self.cash)[0].double().numpy()
        relative = self.opens[self._bar + 2] / self.opens[self._bar + 1]
        log_return, turnover, self._drifted = rebalance(weights, self._drifted, relative, self.fee)
        info = {"log_return": log_return, "turnover": turnover,
                "masked_weight": float(weights[1:] @ self._mask),
                "baseline": float(np.log(relative[self._mask == 0].mean())) if self.excess else 0.0}
        self._bar += 1
        self._steps += 1
        truncated = self._bar > self.last_decision_bar or self._steps >= self.horizon
        return self._observation(), self.reward_scale * (info["log_return"] - info["baseline"]), False, truncated, info
