"""Pro-rata scaling of the agents' orders: the portfolio's analogue of modules competing for slots.

Every agent i asks for a change Δ_i of its sleeve's weight (a fraction of equity) on top of its
weight w_i at the close. Long-only, the target is t_i = max(w_i + Δ_i, 0): sales s_i = max(w_i − t_i, 0)
always go through, and buys b_i = max(t_i − w_i, 0) share what the gross cap G leaves after the sales:

    H = max(G − (Σ_i w_i − Σ_i s_i), 0),   λ = min(1, H / Σ_i b_i)   (λ = 1 when nobody buys),
    w_i' = w_i − s_i + λ·b_i,              w_cash' = 1 − Σ_i w_i'.

With G ≤ 1 (no borrowing) the headroom H is the cash weight plus the sales' proceeds, so the
orders never exceed cash; above 1 the cash weight may go negative down to 1 − G, as the task allows.
Every buyer is cut by the same factor λ (pro rata to its order); `scaled` says λ < 1. Fees are
the simulator's: it fills w' on the post-cost equity (harness/tasks/portfolio.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SCALE_TOLERANCE = 1e-12
"""λ below 1 − this counts as a scaled-down bar (rounding is not scaling)."""


@dataclass(frozen=True)
class Orders:
    """The weights the agents' orders come to after pro-rata scaling."""

    weights: np.ndarray
    """w_i' per agent (instrument)."""
    cash: float
    """w_cash' = 1 − Σ w_i'."""
    buy_scale: float
    """λ: the fraction of every buy order that was filled."""
    requested_buys: float
    """Σ_i b_i before scaling."""

    @property
    def scaled(self) -> bool:
        return self.buy_scale < 1.0 - SCALE_TOLERANCE


def scale_orders(weights: np.ndarray, changes: np.ndarray, max_gross: float) -> Orders:
    """The module docstring's w' from the weights at the close and the agents' requested changes."""
    w = np.asarray(weights, dtype=float)
    target = np.maximum(w + np.asarray(changes, dtype=float), 0.0)
    sales = np.maximum(w - target, 0.0)
    buys = np.maximum(target - w, 0.0)
    requested = float(buys.sum())
    headroom = max(max_gross - float((w - sales).sum()), 0.0)
    scale = 1.0 if requested <= headroom else headroom / requested
    final = w - sales + scale * buys
    return Orders(weights=final, cash=1.0 - float(final.sum()), buy_scale=scale, requested_buys=requested)
