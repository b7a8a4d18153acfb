"""Buy-and-hold with the AlphaQuanter paper's semantics: BUY on every bar.

Under the default execution rules each BUY spends κ = 90 % of the remaining cash, so the
position converges to fully invested within a few bars and is never sold.
"""

from __future__ import annotations

from frameworks.base import TradingFramework
from frameworks.baselines.shared_decisions import shared_decisions
from market.decision import Action, Decision, DecisionContext


class BuyAndHold(TradingFramework):
    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        return shared_decisions(Action.BUY for _ in batch)
