"""FineFT stage III: the routing threshold and the conservative policy, tuned on the validation split.

The grid: τ ∈ `THRESHOLDS` (ELBO quantiles; 0 = never conservative) × conservative ∈ {flat, hold}.
Each cell plays the validation split's bars through the futures task (`evaluation.play`) and is scored by
its per-bar Sharpe ratio; the best cell wins (ties: the smaller τ, then `flat`). The original tunes
its gating thresholds on validation with Optuna over a wider space; a small stated grid keeps the
CPU budget and makes the choice readable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from comparators.fineft.evaluation import play, summary
from comparators.fineft.policy import FineFTModel
from harness.tasks.futures import FuturesConfig

THRESHOLDS = (0.0, 0.002, 0.005, 0.01, 0.02, 0.05)
MODES = ("flat", "hold")


def tune_routing(model: FineFTModel, tables: tuple[np.ndarray, np.ndarray], bars: pd.DataFrame, rates: pd.Series,
                 task: FuturesConfig, steps: pd.DatetimeIndex, thresholds: tuple[float, ...] = THRESHOLDS) -> list[dict]:
    """Score every grid cell on the validation `tables` (`FineFTModel.tables`), set the model's threshold
    and conservative policy to the best; the cells (τ = 0 once: both policies are the same there)."""
    cells = []
    for tau in sorted(thresholds):
        for mode in MODES[:1] if tau == 0 else MODES:
            path, dynamic = model.path(tables, "vae", threshold=tau, conservative=mode)
            facts = summary(play(bars, rates, task, steps, model.grid.numpy()[path]))
            cells.append({"threshold": tau, "conservative": mode, **facts,
                          "conservative_share": float((dynamic < 0).mean())})
    best = max(cells, key=lambda c: (c["sharpe_per_bar"], -c["threshold"], c["conservative"] == "flat"))
    model.threshold.fill_(best["threshold"])
    model.conservative = best["conservative"]
    return cells
