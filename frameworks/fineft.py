"""FineFT as a futures-task framework: one trained checkpoint per seed, decided bar by bar.

At the close of a bar that closes a decision step (`comparators.fineft.steps`; HOLD on the other
bars, decided from the bar's stamp alone): the state of the last `comparators.fineft.state.LOOKBACK`
steps of the point-in-time view (`comparators.fineft.view_state`: computed once per bar for every
seed that steps the same way, kept under a digest of the bars it read), standardised with the
checkpoint's training statistics; the previous target =
the grid leverage nearest to the account's signed leverage q·close/equity (after a liquidation:
flat); then the checkpoint's routing (`routing`: `vae` — FineFT, the VAEs route to a learner or
the conservative policy; `dynamics` — the VAEs' best-matching learner, never conservative;
`ensemble` — the unrouted ensemble, argmax of the mean Q of all learners) gives the target index
and `Decision(target=leverage)`. The trace's `extra` holds the route (the dynamic k*, or −1 for the
conservative policy) and the ELBO quantiles. Before `LOOKBACK` steps of history the decision is flat.

Train a checkpoint with `python -m comparators.fineft.train --seed S --out DIR` (docs/fineft.md);
`checkpoints: {seed: DIR/checkpoint}`. The fingerprint covers every seed's weights and config.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from comparators.fineft.checkpoint_io import FineFTCheckpoint
from comparators.fineft.positions import nearest_position
from comparators.fineft.router import Routing
from comparators.fineft.steps import is_step_close
from comparators.fineft.view_state import ViewStates
from core.errors import ConfigError
from frameworks.base import TradingFramework
from frameworks.seed_checkpoints import require_seed, seed_paths, seeds_fingerprint
from market.decision import Action, Decision, DecisionContext, Trace

ROUTINGS = ("vae", "dynamics", "ensemble")


class FineFT(TradingFramework):
    """The FineFT checkpoint of each seed on the futures task (module docstring)."""

    stateful = True
    needs_portfolio = True
    stochastic = True
    tasks: ClassVar[tuple[str, ...]] = ("futures",)

    def __init__(self, checkpoints: dict[int, str], routing: Routing = "vae"):
        if routing not in ROUTINGS:
            raise ConfigError(f"fineft.routing: {routing!r} is not one of {', '.join(ROUTINGS)}")
        self.routing: Routing = routing
        self.paths = seed_paths(checkpoints, "fineft.checkpoints")
        self.loaded = {seed: FineFTCheckpoint.load(path) for seed, path in self.paths.items()}
        self.states = ViewStates()

    def fingerprint(self) -> str:
        """SHA-256 over the routing and each seed's checkpoint fingerprint (weights and config)."""
        return seeds_fingerprint({"routing": self.routing,
                                  "seeds": {seed: c.fingerprint for seed, c in self.loaded.items()}})

    def run_facts(self) -> dict[str, Any]:
        return {"routing": self.routing, "paper_conventions": ["fineft"], "seeds": {str(seed): {"checkpoint": self.paths[seed], "fingerprint": c.fingerprint,
                                                               "threshold": c.facts.get("threshold"),
                                                               "wall_s": c.facts.get("wall_s")}
                                                   for seed, c in sorted(self.loaded.items())}}

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        return [self._decide(context) for context in batch]

    def _decide(self, context: DecisionContext) -> Decision:
        require_seed(context.seed, self.loaded, "fineft.checkpoints")
        checkpoint = self.loaded[context.seed]
        minutes = checkpoint.config["step_minutes"]
        if not is_step_close(pd.Timestamp(context.date), minutes):
            return Decision(action=Action.HOLD)
        state = self.states.state(context.view, context.ticker, minutes, checkpoint.config["funding_hours"])
        if state is None:
            return Decision(target=0.0, trace=Trace(extra={"route": "warm-up"}))
        model = checkpoint.model
        x = checkpoint.standardiser.transform(state)
        portfolio = context.portfolio
        equity = portfolio.equity if portfolio is not None else 0.0
        leverage = portfolio.exposure if portfolio is not None and equity > 0 else 0.0
        previous = int(nearest_position(leverage, model.grid.numpy()))
        tables = model.tables(x)
        path, dynamic = model.path(tables, self.routing, start=previous)
        extra = {"route": int(dynamic[0]), "previous": previous, "quantiles": np.round(tables[1][0], 4).tolist()}
        return Decision(target=float(model.grid[path[0]]), trace=Trace(extra=extra))
