"""FineFT's action space: nine target positions, evenly spaced leverages between −M and M.

    L_k = M·(k − 4)/4,  k = 0..8  (M = 5: −5, −3.75, −2.5, −1.25, 0, 1.25, 2.5, 3.75, 5)

A target is a leverage of the futures task (position notional / equity, `harness.tasks.futures`).
The original (`position_choices: 9`, `max_holding_number`) spaces nine holdings of the contract
evenly between −max and max at 5x leverage; here the futures task's leverage cap M plays that part.
"""

from __future__ import annotations

import numpy as np

POSITION_COUNT = 9
"""The number of target positions (the original's `position_choices`)."""


def position_grid(max_leverage: float, count: int = POSITION_COUNT) -> np.ndarray:
    """The `count` (odd) target leverages from −max_leverage to max_leverage, flat in the middle."""
    if count < 3 or count % 2 == 0:
        raise ValueError(f"the position grid needs an odd count of at least 3, got {count}")
    return np.linspace(-max_leverage, max_leverage, count)


def nearest_position(leverage: float | np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Index of the grid leverage nearest to a signed leverage (a position drifted with the price)."""
    return np.abs(np.asarray(leverage, dtype=float)[..., None] - grid).argmin(axis=-1)
