"""AlphaMix on the portfolio task: hold the top-k stocks by the mixture's up-probability, equal weight.

Each run seed k decides with its trained checkpoint `checkpoints[k]` (a folder written by
`python -m comparators.alphamix.train`; the paper's seeds are training seeds). For a decision at
the close of day t the plugin computes the features of every stock of the universe through the
context's point-in-time view (the spec and train-split scaling stored in the checkpoint, so
trading reads exactly what training read, the control's shuffled channel included), takes each
stock's up-probability from the mixture (`mixture`: `router` = as needed, `greedy` = the greedy
selective ensemble, `mean` = the whole pool) and answers weights 1/k on the k stocks with the
highest up-probability (k = `top_k`, 4 as in the original; fewer when the pool has fewer members;
ties broken by universe order) and 0 elsewhere, no cash. Within a pool (`context.pool`) only its
members are ranked. The fees are the task's (the original traded without any). A checkpoint
served a market whose bars over its training window differ from those it was trained on fails its
decisions with one line (`comparators.market_match`).

Fan-out: the features of a batch are computed once per universe on the view of its latest
decision (causal rows: the same numbers as deciding one day at a time). The trace's `extra`
holds each stock's up-probability and the experts the router used. `fingerprint()` covers every
seed's checkpoint (weights and config, `comparators.checkpoint.fingerprint`); `run_facts()` asks
the report for the AlphaMix paper's convention (TR = Σr) and gives each seed's training facts.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch

from comparators.alphamix.data import FeatureSpec, feature_frames, windows_at
from comparators.alphamix.model import MIXTURES, AlphaMixModel
from comparators.checkpoint import Checkpoint, load_checkpoint
from comparators.features import Standardiser
from comparators.market_match import ServedMarketCheck
from core.errors import ConfigError
from frameworks.base import TradingFramework
from frameworks.seed_checkpoints import require_seed, seed_paths, seeds_fingerprint
from harness.decision_checks import CASH
from market.decision import Decision, DecisionContext, Trace
from metrics.paper_conventions import FACT_KEY


class AlphaMix(TradingFramework):
    """Top-k equal weight on the AlphaMix mixture's up-probabilities (module docstring)."""

    tasks: ClassVar[tuple[str, ...]] = ("portfolio",)
    stochastic: ClassVar[bool] = True

    def __init__(self, checkpoints: dict[int, str] | None = None, top_k: int = 4, mixture: str = "router"):
        self.paths = seed_paths(checkpoints, "alphamix.checkpoints")
        if mixture not in MIXTURES:
            raise ConfigError(f"alphamix.mixture: {mixture!r} is not one of {', '.join(MIXTURES)}")
        if int(top_k) < 1:
            raise ConfigError(f"alphamix.top_k: {top_k} must be at least 1")
        self.top_k, self.mixture = int(top_k), mixture
        self.models: dict[int, Checkpoint] = {seed: load_checkpoint(path, AlphaMixModel.from_config)
                                              for seed, path in self.paths.items()}
        self.check_market = ServedMarketCheck("alphamix")

    def fingerprint(self) -> str:
        """SHA-256 over each seed's checkpoint fingerprint (weights and config)."""
        return seeds_fingerprint({seed: checkpoint.fingerprint for seed, checkpoint in self.models.items()})

    def run_facts(self) -> dict[str, Any]:
        keep = ("train_wall_s", "train_cpu_s", "torch_threads", "load_average_1m", "greedy", "mixtures", "samples")
        seeds = {str(seed): {"checkpoint": self.paths[seed], **{k: c.facts.get(k) for k in keep}}
                 for seed, c in sorted(self.models.items())}
        return {FACT_KEY: ["alphamix"], "features": next(iter(self.models.values())).config["features"]["spec"],
                "seeds": seeds}

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        decisions: list[Decision | None] = [None] * len(batch)
        groups: dict[tuple[int, str], list[int]] = {}
        for i, context in enumerate(batch):
            groups.setdefault((context.seed, context.ticker), []).append(i)
        for (seed, _), members in groups.items():
            require_seed(seed, self.models, "alphamix.checkpoints")
            self.check_market(seed, self.models[seed].facts, batch[members[0]].view, self.models[seed].facts["tickers"],
                              self.paths[seed])
            for i, decision in zip(members, self._decide_universe(self.models[seed], [batch[i] for i in members])):
                decisions[i] = decision
        return decisions

    def _decide_universe(self, checkpoint: Checkpoint, contexts: list[DecisionContext]) -> list[Decision]:
        """The decisions of one seed on one universe's contexts."""
        features = checkpoint.config["features"]
        spec, scaler = FeatureSpec.from_dict(features["spec"]), Standardiser.from_dict(features["standardiser"])
        latest = max(contexts, key=lambda c: c.date)
        instruments = list(latest.instruments)
        frames = feature_frames(latest.view, instruments, spec)
        dates = [c.date for c in contexts]
        windows = windows_at(frames, pd.DatetimeIndex(dates), spec, scaler)
        t, n, _ = windows.x.shape
        up, used = checkpoint.model.predict(torch.from_numpy(windows.x.reshape(t * n, -1)),
                                            torch.from_numpy(windows.last.reshape(t * n, -1)), self.mixture)
        up, used = up.numpy().reshape(t, n), used.numpy().reshape(t, n)
        return [self._weights(context, instruments, up[row], used[row]) for row, context in enumerate(contexts)]

    def _weights(self, context: DecisionContext, instruments: list[str], up: np.ndarray, used: np.ndarray) -> Decision:
        """1/k on the k members (of the pool, when there is one) with the highest up-probability."""
        allowed = set(context.pool) if context.pool is not None else set(instruments)
        ranked = [i for i in np.argsort(-up, kind="stable") if instruments[i] in allowed]
        chosen = ranked[:self.top_k]
        trace = Trace(extra={"up_probability": {name: round(float(p), 6) for name, p in zip(instruments, up)},
                             "experts_used": {name: int(u) for name, u in zip(instruments, used)}})
        if not chosen:
            return Decision(weights={CASH: 1.0}, trace=trace)
        weights = {instruments[i]: 1.0 / len(chosen) for i in chosen}
        weights[CASH] = 1.0 - sum(weights.values())
        return Decision(weights=weights, trace=trace)

