"""Portfolio state as a stateful framework sees it at the close of a decision day."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PortfolioState:
    """Cash and holdings of one ticker, marked at the close of the decision day.

    `cash` and `equity` are in currency units; `shares` may be negative in target-position mode
    (a short). `exposure` = shares·close / equity (1 = fully invested, 0 = flat).
    """

    cash: float
    shares: float
    close: float

    @property
    def equity(self) -> float:
        return self.cash + self.shares * self.close

    @property
    def exposure(self) -> float:
        equity = self.equity
        return self.shares * self.close / equity if equity > 0 else 0.0
