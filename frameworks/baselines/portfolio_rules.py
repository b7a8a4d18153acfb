"""Rule baselines of the portfolio task: equal weight, buy-and-hold of equal weights, inverse
volatility and momentum top-k.

Each stateless rule maps the universe's close history to target weights per bar, causally (the
row of bar t uses closes ≤ t). Fan-out: the close matrix is read once per batch, on the view of
the batch's latest decision bar (which holds nothing after it), and every earlier decision
reads its own row — the same weights as deciding one bar at a time (a test checks it).

Within a pool (`DecisionContext.pool`) a rule's weights are restricted to the pool's members and
renormalised to the same invested fraction; instruments without a price history yet get 0.
Before a rule has `lookback` + 1 closes of every instrument, it holds equal weights.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

import pandas as pd

from frameworks.base import TradingFramework
from harness.decision_checks import CASH
from market.decision import Action, Decision, DecisionContext


def closes(context: DecisionContext, lookback: int | None = None) -> pd.DataFrame:
    """Closes of the context's universe up to its bar (rows: bar stamps, columns: instruments)."""
    return pd.DataFrame({name: context.view.bars(name, lookback=lookback)["close"] for name in context.instruments})


def as_decision(names: list[str], row: list[float], pool: tuple[str, ...] | None) -> Decision:
    """Weights `row` of the instruments `names` at one bar, restricted to `pool` and renormalised to the
    same invested fraction; the rest is cash."""
    invested = sum(row)
    members = set(pool) if pool is not None else None
    kept = {n: w for n, w in zip(names, row) if w > 0 and (members is None or n in members)}
    total = sum(kept.values())
    if total <= 0 or invested <= 0:
        return Decision(weights={CASH: 1.0})
    weights = {name: w * invested / total for name, w in kept.items()}
    weights[CASH] = 1.0 - sum(weights.values())
    return Decision(weights=weights)


class WeightRule(TradingFramework):
    """A stateless rule from a close matrix to a weight matrix (module docstring)."""

    tasks: ClassVar[tuple[str, ...]] = ("portfolio",)

    def __init__(self, lookback: int = 60):
        self.lookback = int(lookback)

    @abstractmethod
    def raw_weights(self, close: pd.DataFrame) -> pd.DataFrame:
        """Causal target weights per bar (rows of `close`), each row summing to at most 1."""

    def weights(self, close: pd.DataFrame) -> pd.DataFrame:
        """`raw_weights`, with equal weights where the history is shorter than `lookback` + 1 closes."""
        raw = self.raw_weights(close)
        short = close.notna().cumsum().min(axis=1) <= self.lookback
        equal = pd.DataFrame(1.0 / close.shape[1], index=close.index, columns=close.columns)
        return raw.where(~short, equal).fillna(0.0)

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        latest: dict[str, DecisionContext] = {}
        for context in batch:
            if context.ticker not in latest or context.date > latest[context.ticker].date:
                latest[context.ticker] = context
        tables = {name: self.weights(closes(context)) for name, context in latest.items()}
        rows = {name: table.index.get_indexer([c.date for c in batch if c.ticker == name])
                for name, table in tables.items()}
        values = {name: iter(table.to_numpy()[rows[name]].tolist()) for name, table in tables.items()}
        names = {name: [str(n) for n in table.columns] for name, table in tables.items()}
        return [as_decision(names[c.ticker], next(values[c.ticker]), c.pool) for c in batch]


class EqualWeight(WeightRule):
    """1/N in every instrument, rebalanced every bar."""

    def __init__(self):
        super().__init__(lookback=0)

    def raw_weights(self, close: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(1.0 / close.shape[1], index=close.index, columns=close.columns)


class InverseVolatility(WeightRule):
    """w_i ∝ 1/σ_i, σ_i the std (ddof=1) of instrument i's daily simple returns over the last `lookback` bars."""

    def raw_weights(self, close: pd.DataFrame) -> pd.DataFrame:
        vol = close.pct_change(fill_method=None).rolling(self.lookback).std()
        inverse = 1.0 / vol.where(vol > 0)
        return inverse.div(inverse.sum(axis=1), axis=0)


class MomentumTopK(WeightRule):
    """Equal weights 1/k on the k instruments with the highest return close_t/close_{t−lookback} − 1."""

    def __init__(self, lookback: int = 60, k: int = 6):
        super().__init__(lookback)
        self.k = int(k)

    def raw_weights(self, close: pd.DataFrame) -> pd.DataFrame:
        momentum = close / close.shift(self.lookback) - 1.0
        rank = momentum.rank(axis=1, ascending=False, method="first")
        return (rank <= self.k).astype(float) / self.k


class BuyAndHoldEqual(TradingFramework):
    """Equal weights on the first bar (when nothing is held yet), then HOLD: the weights drift with prices."""

    tasks: ClassVar[tuple[str, ...]] = ("portfolio",)
    stateful: ClassVar[bool] = True
    needs_portfolio: ClassVar[bool] = True

    def decide(self, batch: list[DecisionContext]) -> list[Decision]:
        decisions = []
        for context in batch:
            held = context.portfolio is not None and any(q != 0 for q in context.portfolio.positions.values())
            if held:
                decisions.append(Decision(action=Action.HOLD))
                continue
            members = context.pool if context.pool is not None else context.instruments
            weights = {name: 1.0 / len(members) for name in members}
            weights[CASH] = 1.0 - sum(weights.values())
            decisions.append(Decision(weights=weights))
        return decisions
