"""Random policy: BUY, SELL or HOLD drawn with probabilities `p_buy`, `p_sell`, 1 − both.

Each draw is seeded from (seed, ticker, date), so a decision does not depend on batch order
or on which decisions a resumed run had already journaled.
"""

from __future__ import annotations

import hashlib

import numpy as np

from frameworks.base import TradingFramework
from frameworks.baselines.shared_decisions import shared_decisions
from market.decision import Action, Decision, DecisionContext


def context_rng(seed: int, ticker: str, date) -> np.random.Generator:
    """A generator seeded by a stable hash of (seed, ticker, date)."""
    digest = hashlib.sha256(f"{seed}|{ticker}|{date.isoformat()}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


class RandomPolicy(TradingFramework):
    stochastic = True

    def __init__(self, p_buy: float = 1 / 3, p_sell: float = 1 / 3):
        if p_buy < 0 or p_sell < 0 or p_buy + p_sell > 1:
            raise ValueError(f"random: p_buy ({p_buy}) and p_sell ({p_sell}) must be ≥ 0 and sum to ≤ 1")
        self.p_buy, self.p_sell = p_buy, p_sell

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        actions = []
        for ctx in batch:
            u = context_rng(ctx.seed, ctx.ticker, ctx.date).random()
            actions.append(Action.BUY if u < self.p_buy else Action.SELL if u < self.p_buy + self.p_sell else Action.HOLD)
        return shared_decisions(actions)
