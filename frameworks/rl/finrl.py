"""`FinRLAgent`: the paper's FinRL-A2C and FinRL-PPO rows as a stateful framework.

One policy per seed, trained with stable-baselines3's defaults (`training.train_policy`) on
the training window of the configured tickers, lazily at the first decision of that seed and
cached on disk (`policy_store`). Training data comes from the first decision's `MarketView`:
bars from the feature anchor (`features.feature_anchor`) to the end of the training window.
A decision dated on or before that end is refused, so no policy has seen a bar after any date
it decides on.

Each decision: the observation (market features of the decision bar over history from the
same anchor, and the portfolio's exposure at its close) goes through the policy greedily
(`deterministic=True`, as FinRL trades); the output indexes `env.ACTIONS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from stable_baselines3.common.base_class import BaseAlgorithm

from core.errors import ConfigError
from frameworks.base import TradingFramework
from frameworks.rl.env import ACTIONS, TrainingEpisode
from frameworks.rl.features import feature_anchor, market_features, observation
from frameworks.rl.policy_store import cached_policy, policy_inputs
from frameworks.rl.training import Algorithm, TrainingSettings, library_versions, single_threaded_torch, train_policy
from harness.execution import ExecutionConfig
from market.decision import Decision, DecisionContext, Trace
from market.splits import Window
from market.view import MarketView


class FinRLAgent(TradingFramework):
    """A stable-baselines3 policy over the simulator; `algorithm` is "a2c" or "ppo"."""

    stateful = True
    needs_portfolio = True
    stochastic = True

    def __init__(self, algorithm: Algorithm, tickers: list[str], train: dict[str, Any],
                 execution: dict[str, Any] | None = None, timesteps: int = 30_000, window: int = 10,
                 reward_scale: float = 100.0, cache_dir: str | None = None):
        if algorithm not in ("a2c", "ppo"):
            raise ConfigError(f"finrl: algorithm must be a2c or ppo, got {algorithm!r}")
        if not tickers:
            raise ConfigError("finrl: no training tickers")
        self.tickers = list(tickers)
        self.train = Window.model_validate(dict(train))
        self.settings = TrainingSettings(algorithm=algorithm, timesteps=int(timesteps), window=int(window),
                                         reward_scale=float(reward_scale),
                                         execution=ExecutionConfig(**dict(execution or {})))
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._policies: dict[int, tuple[BaseAlgorithm, dict]] = {}
        self._episodes: list[TrainingEpisode] | None = None

    def fingerprint(self) -> str:
        return ",".join(f"{name}={v}" for name, v in library_versions().items())

    def training_facts(self) -> dict[int, dict]:
        """Per trained seed: its policy key, timesteps, training wall and CPU time (s) and inputs."""
        return {seed: facts for seed, (_, facts) in self._policies.items()}

    def run_facts(self) -> dict[str, Any]:
        """The algorithm, timesteps per policy, and per seed loaded in this run its policy key and training cost."""
        cost = ("key", "train_wall_s", "train_cpu_s")
        return {"algorithm": self.settings.algorithm, "timesteps": self.settings.timesteps,
                "seeds": {str(seed): {k: facts[k] for k in cost if k in facts}
                          for seed, facts in sorted(self.training_facts().items())}}

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        for ctx in batch:
            if ctx.date <= self.train.end:
                raise ConfigError(f"finrl: decision on {ctx.date.date()} is not after the training window "
                                  f"(ends {self.train.end.date()})")
            if ctx.portfolio is None:
                raise ConfigError("finrl: needs the portfolio in each context")
        views = {(ctx.ticker, ctx.date): ctx.view for ctx in batch}
        rows = {(ticker, date): self._market_row(view, ticker) for (ticker, date), view in views.items()}
        decisions: list[Decision | None] = [None] * len(batch)
        for seed in sorted({ctx.seed for ctx in batch}):
            model, facts = self._policy(seed, batch[0].view)
            members = [i for i, ctx in enumerate(batch) if ctx.seed == seed]
            observations = np.stack([observation(rows[batch[i].ticker, batch[i].date], batch[i].portfolio)
                                     for i in members])
            with single_threaded_torch():
                actions, _ = model.predict(observations, deterministic=True)
            for i, action in zip(members, actions):
                decisions[i] = Decision(action=ACTIONS[int(action)], trace=Trace(extra={"policy": facts["key"]}))
        return decisions

    def _history(self, view: MarketView, ticker: str) -> pd.DataFrame:
        """Bars of `ticker` visible in `view`, from the feature anchor on."""
        bars = view.bars(ticker)
        if bars.empty:
            raise ConfigError(f"finrl: no bars of {ticker} at or before {view.asof.date()}")
        return bars.loc[feature_anchor(bars.index, self.train.start):]

    def _market_row(self, view: MarketView, ticker: str) -> np.ndarray:
        """Market features of the view's last bar of `ticker`."""
        return market_features(self._history(view, ticker), self.settings.window).to_numpy()[-1]

    def _training_episodes(self, view: MarketView) -> list[TrainingEpisode]:
        """Each ticker's bars in the training window, with feature rows computed from the anchor."""
        if self._episodes is None:
            episodes = []
            for ticker in self.tickers:
                history = self._history(view, ticker).loc[: self.train.end]
                features = market_features(history, self.settings.window)
                inside = history.index >= self.train.start
                episodes.append(TrainingEpisode(ticker, history.loc[inside], features.to_numpy()[inside]))
            self._episodes = episodes
        return self._episodes

    def _policy(self, seed: int, view: MarketView) -> tuple[BaseAlgorithm, dict]:
        if seed not in self._policies:
            episodes = self._training_episodes(view)
            self._policies[seed] = cached_policy(
                policy_inputs(self.settings, episodes, seed),
                lambda: train_policy(self.settings, episodes, seed), self.cache_dir)
        return self._policies[seed]
