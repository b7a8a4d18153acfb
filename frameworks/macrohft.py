"""MacroHFT (KDD 2024) as a futures framework: seed k trades checkpoint k.

Each checkpoint (`python -m comparators.macrohft.train --seed k --output DIR`, folder
`DIR/checkpoint`) holds the six condition sub-agents and the hyper-agent; its target leverage per
bar comes from `comparators.macrohft.trader.MacroHFTTrader` (greedy on the mixed Q-values, its own
previous action fed back, from flat at `start`, the test window's start in the configs, or at the
data's first bar when `start` is None). Stateless in the runner's sense:
the decision on bar t depends on bars ≤ t alone, so a batch is answered from one pass over its
latest view (as `frameworks.baselines.futures_rules.TrendFollowing`), and that pass is extended,
never redone, by later batches. docs/macrohft.md has what is faithful to the original and what is not.

    +framework@frameworks.macrohft=macrohft frameworks.macrohft.checkpoints="{0: DIR/checkpoint}"
"""

from __future__ import annotations

from typing import Any, ClassVar

from comparators.macrohft.trader import MacroHFTTrader
from frameworks.base import TradingFramework
from frameworks.seed_checkpoints import require_seed, seed_paths, seeds_fingerprint
from market.decision import Decision, DecisionContext


class MacroHFTAgent(TradingFramework):
    """Target leverages of a trained MacroHFT per seed (module docstring)."""

    tasks: ClassVar[tuple[str, ...]] = ("futures",)
    stochastic = True

    def __init__(self, checkpoints: dict[int, str], start: str | None = None):
        self.paths = seed_paths(checkpoints, "macrohft.checkpoints")
        self.traders = {seed: MacroHFTTrader(path, start) for seed, path in self.paths.items()}

    def fingerprint(self) -> str:
        """SHA-256 over each seed's checkpoint fingerprint (weights and config)."""
        return seeds_fingerprint({seed: trader.fingerprint for seed, trader in self.traders.items()})

    def run_facts(self) -> dict[str, Any]:
        """The paper convention to report (return on required money) and per seed the checkpoint's facts."""
        seeds = {str(seed): {"checkpoint": self.paths[seed], "fingerprint": trader.fingerprint,
                             **{k: trader.checkpoint.facts.get(k) for k in ("wall_s", "cpu_s", "train", "valid")}}
                 for seed, trader in sorted(self.traders.items())}
        return {"paper_conventions": ["macrohft"], "positions": self.traders[min(self.traders)].positions.tolist(),
                "seeds": seeds}

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        decisions: list[Decision | None] = [None] * len(batch)
        groups: dict[tuple[int, str], list[int]] = {}
        for i, ctx in enumerate(batch):
            require_seed(ctx.seed, self.traders, "macrohft.checkpoints")
            groups.setdefault((ctx.seed, ctx.ticker), []).append(i)
        for (seed, ticker), members in groups.items():
            latest = max(members, key=lambda i: batch[i].date)
            targets = self.traders[seed].targets(ticker, batch[latest].view.bars(ticker))
            rows = targets.index.get_indexer([batch[i].date for i in members])
            if (rows < 0).any():
                raise RuntimeError(f"macrohft: a decision date of {ticker} is not a bar of its own view")
            for i, row in zip(members, rows):
                decisions[i] = Decision(target=float(targets.iloc[row]))
        return decisions
