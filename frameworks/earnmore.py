"""EarnMore (comparators/earnmore, docs/earnmore.md) as a portfolio framework: seed k trades checkpoint k.

Stateless: a decision at the close of bar t reads the last `days` feature rows of every stock of
the universe up to t (OHLCV features and the checkpoint's record channels, standardised with the
checkpoint's train-split statistics) and returns the deterministic policy's weights on cash + the
stocks. The stocks outside `context.pool` (the task's maskable pool) are masked: their tokens are
the mask token and their weight is exactly 0, so one policy trained on the global pool serves any
sub-pool. A checkpoint served a market whose bars over its training window differ from those it
was trained on fails its decisions with one line (`comparators.market_match`). Fan-out: the feature
tables are read once per batch on the view of its latest decision bar (it holds nothing after that
bar) and each decision takes its own bar's rows — the same values as deciding one bar at a time,
since every row depends only on what its bar's close could read.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from comparators.checkpoint import Checkpoint
from comparators.earnmore.agent import load_policy, pool_weights
from comparators.earnmore.data import universe_features
from comparators.features import Standardiser, panel
from comparators.market_match import ServedMarketCheck
from core.errors import ConfigError
from frameworks.base import TradingFramework
from frameworks.seed_checkpoints import require_seed, seed_paths, seeds_fingerprint
from harness.decision_checks import CASH
from market.decision import Decision, DecisionContext, Trace
from metrics.paper_conventions import FACT_KEY


class EarnMore(TradingFramework):
    """A trained EarnMore policy per seed (`checkpoints: {seed: folder}`)."""

    tasks: ClassVar[tuple[str, ...]] = ("portfolio",)
    stochastic: ClassVar[bool] = True

    def __init__(self, checkpoints: dict[int, str]):
        self.paths = seed_paths(checkpoints, "earnmore.checkpoints")
        self.checkpoints: dict[int, Checkpoint] = {seed: load_policy(path) for seed, path in self.paths.items()}
        self.check_market = ServedMarketCheck("earnmore")

    def fingerprint(self) -> str:
        """SHA-256 over each seed's checkpoint fingerprint (weights and config)."""
        return seeds_fingerprint({seed: c.fingerprint for seed, c in self.checkpoints.items()})

    def run_facts(self) -> dict[str, Any]:
        """The paper's metric convention for the report (`metrics.paper_conventions`: SR = mean/std·√n,
        ARR not compounded) and per seed its checkpoint folder, fingerprint and training facts."""
        return {FACT_KEY: ["earnmore"], "seeds": {str(seed): {"checkpoint": self.paths[seed], "fingerprint": c.fingerprint,
                                      **{k: c.facts.get(k) for k in ("train", "train_wall_s", "train_cpu_s",
                                                                      "reconstruction_loss")}}
                          for seed, c in sorted(self.checkpoints.items())}}

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        decisions: list[Decision | None] = [None] * len(batch)
        for seed in sorted({ctx.seed for ctx in batch}):
            require_seed(seed, self.checkpoints, "earnmore.checkpoints")
            members = [i for i, ctx in enumerate(batch) if ctx.seed == seed]
            checkpoint = self.checkpoints[seed]
            self.check_market(seed, checkpoint.facts, batch[members[0]].view, checkpoint.config["tickers"],
                              self.paths[seed])
            for i, decision in zip(members, self._decide(checkpoint, [batch[i] for i in members])):
                decisions[i] = decision
        return decisions

    def _decide(self, checkpoint: Checkpoint, batch: list[DecisionContext]) -> list[Decision]:
        config = checkpoint.config
        tickers = list(config["tickers"])
        for ctx in batch:
            if set(ctx.instruments) != set(tickers):
                raise ConfigError(f"earnmore: the checkpoint was trained on {', '.join(tickers)}; the universe "
                                  f"{ctx.ticker} is {', '.join(ctx.instruments)} (serve a subset with task.pool)")
        latest = max(batch, key=lambda ctx: ctx.date)
        frames = universe_features(latest.view, tickers, config["channels"], config["shuffle_seed"])
        dates = pd.DatetimeIndex([ctx.date for ctx in batch])
        windows = panel(frames, dates, int(config["days"]), Standardiser.from_dict(config["standardiser"]))
        outside = np.array([[ctx.pool is not None and name not in ctx.pool for name in tickers] for ctx in batch],
                           dtype=np.float32)
        weights = pool_weights(checkpoint.model, windows, outside, float(config["temperature"]), bool(config["cash"]))
        return [Decision(weights={CASH: float(row[0]), **{name: float(w) for name, w in zip(tickers, row[1:])}},
                         trace=Trace(extra={"masked": int(mask.sum())}))
                for row, mask in zip(weights, outside)]
