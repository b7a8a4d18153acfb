"""`TradingEnv`: a gymnasium environment over the execution simulator, FinRL-style.

One episode trades one ticker over its whole window (FinRL trains on the full training
period): `reset` draws the ticker from the environment's seeded generator (or takes
`options={"episode": i}`), and builds a fresh `harness.execution.Simulator` on its bars.

- Action: `Discrete(3)`, index into `ACTIONS` = (SELL, HOLD, BUY) — the paper's discrete rules
  as the simulator executes them (BUY spends κ of the cash, SELL closes the position).
- Observation at bar t: `features.observation` (market features of bar t, exposure at its close).
- Step: the action is the decision at the close of bar t, filled by the simulator on bar t+1;
  reward = `reward_scale` · (V_{t+1} / V_t − 1), the equity's simple return over that bar
  (FinRL rewards the change of total asset value, scaled; this is its scale-free form).
- The episode terminates when bar t+1 is the window's last bar: a decision on the last bar
  would never be filled.

Fills, fees and equity are the simulator's, so an episode's `result()` is exactly what
`harness.execution.simulate` gives for the same actions (a test checks it).
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pandas as pd

from core.errors import ConfigError
from frameworks.rl.features import observation
from harness.execution import EpisodeResult, ExecutionConfig, Simulator
from market.decision import Action, Decision

ACTIONS: tuple[Action, ...] = (Action.SELL, Action.HOLD, Action.BUY)
"""Policy output index -> action."""


@dataclass(frozen=True)
class TrainingEpisode:
    """One ticker's window: its bars and the market feature rows aligned with them."""

    ticker: str
    bars: pd.DataFrame
    features: np.ndarray

    def __post_init__(self) -> None:
        if len(self.bars) < 2:
            raise ConfigError(f"{self.ticker}: a training episode needs at least 2 bars, got {len(self.bars)}")
        if len(self.features) != len(self.bars):
            raise ConfigError(f"{self.ticker}: {len(self.features)} feature rows for {len(self.bars)} bars")


class TradingEnv(gym.Env):
    """Discrete BUY/SELL/HOLD trading of one ticker per episode, executed by the simulator."""

    metadata = {"render_modes": []}

    def __init__(self, episodes: list[TrainingEpisode], execution: ExecutionConfig | None = None,
                 reward_scale: float = 100.0):
        if not episodes:
            raise ConfigError("TradingEnv needs at least one episode")
        widths = {episode.features.shape[1] for episode in episodes}
        if len(widths) != 1:
            raise ConfigError(f"episodes have different feature widths: {sorted(widths)}")
        self.episodes = episodes
        self.execution = execution or ExecutionConfig(mode="discrete")
        if self.execution.mode != "discrete":
            raise ConfigError("TradingEnv trades BUY/SELL/HOLD: it needs the discrete execution mode")
        self.reward_scale = reward_scale
        self.action_space = gym.spaces.Discrete(len(ACTIONS))
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(widths.pop() + 1,), dtype=np.float32)
        self._episode = episodes[0]
        self._simulator = Simulator(self._episode.bars, self.execution)
        self._bar = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if options and "episode" in options:
            index = int(options["episode"])
        else:
            index = int(self.np_random.integers(len(self.episodes)))
        self._episode = self.episodes[index]
        self._simulator = Simulator(self._episode.bars, self.execution)
        self._bar = 0
        return self._observation(), {"ticker": self._episode.ticker}

    def step(self, action):
        before = self._simulator.portfolio.equity
        self._simulator.submit(Decision(action=ACTIONS[int(action)]))
        self._bar += 1
        after = self._simulator.portfolio.equity
        reward = self.reward_scale * (after / before - 1.0)
        terminated = self._bar == len(self._episode.bars) - 1
        return self._observation(), float(reward), terminated, False, {"ticker": self._episode.ticker}

    def result(self) -> EpisodeResult:
        """The simulator's marks and fills of the current episode so far."""
        return self._simulator.result()

    def _observation(self) -> np.ndarray:
        return observation(self._episode.features[self._bar], self._simulator.portfolio)
