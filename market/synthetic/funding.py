"""A synthetic funding-rate series for perpetual futures — synthetic, not market data.

The embedded data ships no funding rates, so the futures task runs on this seeded stand-in
(or on a real series loaded from a `funding` record file, `market.sources.records`). At every
funding time τ_k (every `hours` from midnight UTC) the rate per funding interval is an AR(1)
around a positive mean, as perpetuals' rates typically are (longs pay shorts):

    r_k = μ + φ·(r_{k−1} − μ) + σ·ε_k,  ε_k ~ N(0, 1),  r_0 = μ,  clipped to [−cap, cap]

with μ = 1 bp, φ = 0.9, σ = 0.5 bp and cap = 75 bp by default. Each rate is published at its
funding time (`available_at` = τ_k): a decision sees the rates already paid, never the next.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def synthetic_funding(ticker: str, start: pd.Timestamp, end: pd.Timestamp, seed: int = 0, hours: float = 8.0,
                      mean: float = 1e-4, persistence: float = 0.9, vol: float = 5e-5, cap: float = 0.0075) -> pd.DataFrame:
    """Funding records (ticker, available_at, rate) of `ticker` at every funding time in [start, end]."""
    step = pd.Timedelta(hours=hours)
    first = start.normalize()
    times = pd.date_range(first, end, freq=step)
    rng = np.random.default_rng([seed, 0xF0])
    rates = np.empty(len(times))
    previous = mean
    for k, shock in enumerate(rng.standard_normal(len(times))):
        previous = mean + persistence * (previous - mean) + vol * shock
        rates[k] = previous
    return pd.DataFrame({"ticker": ticker, "available_at": times, "rate": np.clip(rates, -cap, cap)})
