"""The portfolio state a stateful framework sees at the close of a decision bar.

One model for every task (`harness.tasks`):

- `cash`: currency units. For cash-settled holdings (trading, portfolio) the cash left after
  buying the positions; for a futures account (`settled=True`) the wallet balance, into which
  the mark-to-market P&L is settled at every close.
- `positions`: instrument -> quantity (shares or contracts; negative = short).
- `marks`: instrument -> price at the close of the decision bar.
- `margin`: initial margin held by open futures positions (0 for cash-settled holdings).

equity = cash + Σ_i q_i·m_i for cash-settled holdings, = cash for a settled futures account
(its positions' P&L is already in the wallet at the close). exposure_i = q_i·m_i / equity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PortfolioState:
    """Cash, positions and marks at the close of the decision bar (see the module docstring)."""

    cash: float
    positions: Mapping[str, float] = field(default_factory=dict)
    marks: Mapping[str, float] = field(default_factory=dict)
    margin: float = 0.0
    settled: bool = False
    """True for a futures account: positions are marked into `cash` at every close."""

    @classmethod
    def single(cls, ticker: str, cash: float, shares: float, close: float) -> "PortfolioState":
        """The state of a one-instrument account (the trading task)."""
        return cls(cash=cash, positions={ticker: shares}, marks={ticker: close})

    @property
    def equity(self) -> float:
        if self.settled:
            return self.cash
        return self.cash + sum(q * self.marks[name] for name, q in self.positions.items())

    def exposures(self) -> dict[str, float]:
        """Instrument -> q·m / equity (0 when equity ≤ 0)."""
        equity = self.equity
        return {name: (q * self.marks[name] / equity if equity > 0 else 0.0) for name, q in self.positions.items()}

    def _only(self) -> str:
        if len(self.positions) != 1:
            raise ValueError(f"a state of {len(self.positions)} instruments has no single position")
        return next(iter(self.positions))

    @property
    def shares(self) -> float:
        """The quantity of a one-instrument account."""
        return self.positions[self._only()]

    @property
    def close(self) -> float:
        """The mark of a one-instrument account."""
        return self.marks[self._only()]

    @property
    def exposure(self) -> float:
        """q·m / equity of a one-instrument account (1 = fully invested, 0 = flat)."""
        return self.exposures()[self._only()]
