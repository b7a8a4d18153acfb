"""Model selection on the validation split: keep the weights of the training step that scored best.

The score of a policy is its deterministic weights on the whole universe (no stock masked) played
over the validation split's decisions with the training environment's accounting
(`env.rebalance`: fill at the next open, the fee on the turnover), against equal weight played the
same way:

    score = (1/T) Σ_t [ln G_t(policy) − ln G_t(equal weight)]        (per day; × 1e4 = bp/day)

over the T = len(split) − 2 decisions whose fill and next open both fall inside the split.
`SelectionCallback` scores the policy every `every` environment steps (and logs the score as
`valid_excess_bp`), keeps a copy of the best-scoring weights, and `restore()` loads them into the
policy when training ends. The control (news shuffled across stocks) is selected the same way on
its own shuffled validation features, so both rows get the same chance.
"""

from __future__ import annotations

import copy

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from comparators.earnmore.agent import pool_weights
from comparators.earnmore.env import rebalance
from comparators.earnmore.policy import EarnMorePolicy
from comparators.training_log import TrainingLog


def daily_log_returns(weights: np.ndarray, opens: np.ndarray, fee: float) -> np.ndarray:
    """ln G_t of weights (T, N+1) decided at bars 0..T−1 of `opens` (≥ T + 2 bars, N stocks)."""
    drifted = np.zeros(opens.shape[1])
    out = np.empty(len(weights))
    for t, row in enumerate(weights):
        out[t], _, drifted = rebalance(row, drifted, opens[t + 2] / opens[t + 1], fee)
    return out


def excess_log_return(policy: EarnMorePolicy, windows: np.ndarray, opens: np.ndarray, fee: float,
                      temperature: float, cash: bool) -> float:
    """The module docstring's score of `policy` on windows (T + 2, N, W, F) and their opens (T + 2, N)."""
    decisions, n_stocks = windows.shape[0] - 2, windows.shape[1]
    weights = pool_weights(policy, windows[:decisions], np.zeros((decisions, n_stocks)), temperature, cash)
    equal = np.tile(np.r_[0.0, np.full(n_stocks, 1.0 / n_stocks)], (decisions, 1))
    return float(np.mean(daily_log_returns(weights, opens, fee) - daily_log_returns(equal, opens, fee)))


class SelectionCallback(BaseCallback):
    """Score every `every` steps, remember the best weights, `restore()` them (module docstring)."""

    def __init__(self, windows: np.ndarray, opens: np.ndarray, fee: float, temperature: float, cash: bool,
                 every: int, log: TrainingLog, log_every: int):
        super().__init__()
        self.windows, self.opens, self.fee, self.temperature, self.cash = windows, opens, fee, temperature, cash
        self.every, self.log, self.log_every = every, log, log_every
        self.curve: list[dict[str, float]] = []
        self.best: tuple[float, int, dict] | None = None

    def _on_step(self) -> bool:
        if self.num_timesteps % self.every == 0:
            score = excess_log_return(self.model.policy, self.windows, self.opens, self.fee, self.temperature,
                                      self.cash)
            self.curve.append({"step": self.num_timesteps, "valid_excess_bp": round(score * 1e4, 3)})
            self.log.scalars(self.num_timesteps // self.log_every, valid_excess_bp=score * 1e4)
            if self.best is None or score > self.best[0]:
                self.best = (score, self.num_timesteps, copy.deepcopy(self.model.policy.state_dict()))
        return True

    def restore(self) -> dict:
        """Load the best weights into the policy; the facts: the curve and the selected step (None: none scored)."""
        if self.best is not None:
            self.model.policy.load_state_dict(self.best[2])
        return {"every": self.every, "curve": self.curve, "selected_step": self.best[1] if self.best else None}
