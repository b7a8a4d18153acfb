"""A trained single agent whose seeds are training seeds: seed k decides with checkpoint k.

The paper's "3 seeds" of a trained row are three training runs, evaluated greedily. This
framework maps each run seed to its checkpoint (`checkpoints: {0: PATH, 1: PATH, ...}`) and
plays it through `frameworks.single_agent.SingleAgent` with the remaining settings (those of
`configs/framework/alphaquanter.yaml`); it is stochastic in the runner's sense (every seed runs)
and each seed's decisions are those of a greedy `alphaquanter` row on that checkpoint.

    +framework@frameworks.aq=alphaquanter_seeds frameworks.aq.checkpoints="{0: PATH0, 1: PATH1}"

`run_facts()` adds, per seed, what the training run left next to its checkpoint
(`single_agent.training_facts`: optimizer steps, wall seconds, convergence).
"""

from __future__ import annotations

from typing import Any

from frameworks.base import TradingFramework
from frameworks.seed_checkpoints import require_seed, seed_paths, seeds_fingerprint
from frameworks.single_agent import SingleAgent
from market.decision import Decision, DecisionContext
from single_agent.training_facts import training_facts


class CheckpointPerSeed(TradingFramework):
    """`SingleAgent(checkpoint=checkpoints[seed], **agent)` for the decisions of each seed."""

    stochastic = True

    def __init__(self, checkpoints: dict[int, str], **agent: Any) -> None:
        agent.pop("checkpoint", None)
        self.paths = seed_paths(checkpoints, "checkpoints")
        self.agents = {seed: SingleAgent(checkpoint=path, **agent) for seed, path in self.paths.items()}

    def fingerprint(self) -> str:
        """SHA-256 over each seed's agent fingerprint (weights, protocol, grammar, reward)."""
        return seeds_fingerprint({seed: agent.fingerprint() for seed, agent in self.agents.items()})

    def run_facts(self) -> dict[str, Any]:
        """The first seed's agent facts, and per seed its checkpoint and training facts."""
        first = self.agents[min(self.agents)]
        seeds = {str(seed): {"checkpoint": path, **training_facts(path)} for seed, path in sorted(self.paths.items())}
        return {**first.run_facts(), "seeds": seeds}

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        """Each seed's contexts decided by that seed's agent, in the batch's order."""
        decisions: list[Decision | None] = [None] * len(batch)
        for seed in sorted({ctx.seed for ctx in batch}):
            require_seed(seed, self.agents, "checkpoints")
            members = [i for i, ctx in enumerate(batch) if ctx.seed == seed]
            for i, decision in zip(members, self.agents[seed].decide([batch[i] for i in members])):
                decisions[i] = decision
        return decisions
