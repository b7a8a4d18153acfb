"""MASSA (He et al., RecSys 2020, arXiv 2008.09369) and its controls as a portfolio framework.

A thin adapter (docs/massa.md): one trained policy per seed (`checkpoints: {seed: folder}`,
written by `python -m comparators.massa.train`), each executed by `comparators.massa.agent`.
Per decision bar: every asset's feature window and the market context from the point-in-time
view (`comparators.massa.inputs.decision_row`), the portfolio at the close, the agents' weight
changes (actor i reads its own asset and its own signal only; no critic is loaded), pro-rata
scaling under the task's gross cap (`max_gross`, the config interpolates `task.max_gross`), and `Decision(weights=...)`. The trace keeps each agent's
raw change, the buy scale λ and whether the orders were scaled down.

Stateful (the agents' portfolio memory carries over bars) and shown the portfolio; stochastic in
the runner's sense (seed k runs checkpoint k). A resumed run hands its journaled decisions to
`recall`, which steps the memory with the same portfolio. `run_facts` reports per seed the
checkpoint's variant, fingerprint and training cost, and over the decisions of this run: the
share of bars whose orders were scaled down, the mean λ, and the mean pairwise correlation of
the agents' raw weight changes.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from comparators.massa.agent import MassaAgent, load_agent
from comparators.massa.env import weights_decision
from comparators.massa.inputs import InputScaling, decision_row
from comparators.massa.orders import SCALE_TOLERANCE
from core.errors import ConfigError
from frameworks.base import TradingFramework
from frameworks.seed_checkpoints import require_seed, seed_paths, seeds_fingerprint
from market.decision import Decision, DecisionContext, Trace

TRAINING_FACTS = ("variant", "train_wall_s", "train_cpu_s", "best_episode", "updates", "load_average_start")


def mean_pairwise_correlation(actions: np.ndarray) -> float:
    """Mean over agent pairs i < j of the Pearson correlation of their actions over bars ([T, N]);
    agents whose action never changes are left out (NaN when fewer than two remain)."""
    moving = actions[:, actions.std(axis=0) > 0] if len(actions) > 1 else actions[:, :0]
    if moving.shape[1] < 2:
        return float("nan")
    corr = np.corrcoef(moving.T)
    return float(corr[np.triu_indices_from(corr, k=1)].mean())


class MassaFramework(TradingFramework):
    """Seed k's decisions by the MASSA (or control) policy of `checkpoints[k]` (module docstring)."""

    stateful: ClassVar[bool] = True
    needs_portfolio: ClassVar[bool] = True
    stochastic: ClassVar[bool] = True
    tasks: ClassVar[tuple[str, ...]] = ("portfolio",)

    def __init__(self, checkpoints: dict[int, str], max_gross: float = 1.0):
        self.paths = seed_paths(checkpoints, "massa.checkpoints")
        if not max_gross > 0:
            raise ConfigError(f"massa: max_gross {max_gross}: the gross cap must be > 0 (the task's task.max_gross)")
        self.max_gross = float(max_gross)
        self.checkpoints, self.scalings = {}, {}
        for seed, path in self.paths.items():
            self.checkpoints[seed], self.scalings[seed] = load_agent(path)
        self._agents: dict[tuple[int, str], MassaAgent] = {}
        self._rows: dict[tuple[InputScaling, pd.Timestamp], tuple[np.ndarray, np.ndarray]] = {}
        self._executed: dict[int, list[tuple[list[float], float]]] = {seed: [] for seed in self.paths}

    def fingerprint(self) -> str:
        """SHA-256 over each seed's checkpoint fingerprint (weights and config)."""
        return seeds_fingerprint({seed: checkpoint.fingerprint for seed, checkpoint in self.checkpoints.items()})

    def run_facts(self) -> dict[str, Any]:
        seeds = {}
        for seed, checkpoint in sorted(self.checkpoints.items()):
            executed = self._executed[seed]
            facts = {"checkpoint": self.paths[seed], "fingerprint": checkpoint.fingerprint,
                     **{k: checkpoint.facts[k] for k in TRAINING_FACTS if k in checkpoint.facts}}
            if executed:
                actions = np.array([a for a, _ in executed])
                scales = np.array([s for _, s in executed])
                facts.update(decisions=len(executed), scaled_share=float((scales < 1.0 - SCALE_TOLERANCE).mean()),
                             mean_buy_scale=float(scales.mean()), action_correlation=mean_pairwise_correlation(actions))
            seeds[str(seed)] = facts
        return {"seeds": seeds}

    def _agent(self, context: DecisionContext) -> tuple[MassaAgent, InputScaling]:
        seed = context.seed
        require_seed(seed, self.checkpoints, "massa.checkpoints")
        config = self.checkpoints[seed].config
        if context.portfolio is None:
            raise ConfigError("massa: needs the portfolio in each context")
        if context.pool is not None:
            raise ConfigError("massa: the agents hold one sleeve per asset of a fixed universe; task.pool is not supported")
        if tuple(context.instruments) != tuple(config["instruments"]):
            raise ConfigError(f"massa: checkpoint {self.paths[seed]} was trained on {', '.join(config['instruments'])}, "
                              f"the run trades {', '.join(context.instruments)}")
        if context.date <= pd.Timestamp(config["seen_until"]):
            raise ConfigError(f"massa: decision on {context.date.date()} is not after the last bar the checkpoint "
                              f"{self.paths[seed]} saw in training ({config['seen_until']})")
        key = (seed, context.ticker)
        if key not in self._agents:
            self._agents[key] = MassaAgent(self.checkpoints[seed].model, tuple(config["instruments"]),
                                           self.max_gross, seed)
        return self._agents[key], self.scalings[seed]

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        decisions = []
        agents = [self._agent(context) for context in batch]  # every context checked before any memory moves
        for context, (agent, scaling) in zip(batch, agents):
            key = (scaling, context.date)
            if key not in self._rows:
                self._rows[key] = decision_row(context.view, agent.instruments, scaling)
            row = self._rows[key]
            step = agent.step(context.date, *row, context.portfolio)
            decision = weights_decision(agent.instruments, step.orders)
            extra = {"actions": [round(float(a), 8) for a in step.actions], "buy_scale": step.orders.buy_scale,
                     "scaled": step.orders.scaled}
            self._executed[context.seed].append((extra["actions"], step.orders.buy_scale))
            decisions.append(Decision(weights=decision.weights, trace=Trace(extra=extra)))
        return decisions

    def recall(self, context: DecisionContext, decision: Decision) -> None:
        """Step the portfolio memory as `decide` did, and count the journaled decision's orders."""
        agent, _ = self._agent(context)
        agent.memory.step(context.portfolio)
        extra = decision.trace.extra
        if "actions" in extra:
            self._executed[context.seed].append((list(extra["actions"]), float(extra["buy_scale"])))
