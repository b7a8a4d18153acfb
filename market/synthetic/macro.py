"""Market-wide macro series of a synthetic market (`ticker` = ""), with release times.

| series            | released                              | value                                          |
|-------------------|---------------------------------------|------------------------------------------------|
| index_level       | every trading day, 16:00              | 1000·Π(1 + f_t + g_{t−1}) (the market factor)  |
| vix               | every trading day, 16:00              | 100·√252·vol[regime_t]·exp(0.1·ε)              |
| wti               | every trading day, 14:30              | a geometric random walk from 60, 2 % daily vol |
| economic_surprise | Thursdays, 08:30                      | 50·(ρ·g_t/market_alpha_vol + √(1 − ρ²)·ε): carries the `macro` channel's information |
| cpi_yoy           | monthly, first trading day ≥ the 12th of the next month, 08:30 | AR(1) around 2.5 %, for the previous month |
| fed_funds_rate    | every 30 trading days, 14:00          | moves ±0.25 with probability 0.3 each, floored at 0 |
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from market.synthetic.events import latent_scores
from market.synthetic.knobs import Channel, SyntheticKnobs
from market.synthetic.latent import Latent, ar1, standardised

CLOSE = pd.Timedelta(hours=16)


def _series(name: str, days: pd.DatetimeIndex, released: pd.DatetimeIndex, values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"ticker": "", "available_at": released, "series": name, "period": days,
                         "value": np.round(values, 4)})


def macro_records(rng: np.random.Generator, knobs: SyntheticKnobs, latent: Latent, channel: Channel) -> pd.DataFrame:
    """The `macro` channel: every series of the module table, sorted by release time."""
    dates = latent.factor.index
    n = len(dates)
    level = 1000 * np.cumprod(1 + latent.factor + latent.market_alpha.shift(1, fill_value=0.0))
    vol = np.array([knobs.regimes[r].vol for r in latent.regime])
    thursdays = np.flatnonzero(dates.day_of_week == 3)
    z = standardised(latent.market_alpha.to_numpy()[thursdays], knobs.market_alpha_vol)
    months = pd.date_range(dates[0] - pd.offsets.MonthBegin(1), dates[-1], freq="MS")
    cpi_days = dates.searchsorted(months + pd.offsets.MonthBegin(1) + pd.Timedelta(days=11))
    keep = cpi_days < n
    meetings = np.arange(0, n, 30)
    steps = rng.choice([-0.25, 0.0, 0.25], p=[0.3, 0.4, 0.3], size=len(meetings))
    frames = [
        _series("index_level", dates, dates + CLOSE, level.to_numpy()),
        _series("vix", dates, dates + CLOSE, 100 * np.sqrt(252) * vol * np.exp(0.1 * rng.standard_normal(n))),
        _series("wti", dates, dates + pd.Timedelta(hours=14, minutes=30),
                60 * np.exp(np.cumsum(0.02 * rng.standard_normal(n)))),
        _series("economic_surprise", dates[thursdays], dates[thursdays] + pd.Timedelta(hours=8, minutes=30),
                50 * latent_scores(rng, z, channel)),
        _series("cpi_yoy", months[keep], dates[cpi_days[keep]] + pd.Timedelta(hours=8, minutes=30),
                2.5 + ar1(rng, (int(keep.sum()),), 0.9, 0.5)),
        _series("fed_funds_rate", dates[meetings], dates[meetings] + pd.Timedelta(hours=14),
                np.maximum(1.5 + np.cumsum(steps), 0.0)),
    ]
    return pd.concat(frames).sort_values("available_at", kind="stable").reset_index(drop=True)
