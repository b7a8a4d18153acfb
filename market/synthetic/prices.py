"""Daily OHLCV bars of a synthetic market from its hidden state.

For ticker i on day t (all returns simple, in fractions):
- overnight gap: open_t = close_{t−1}·(1 + o_t), o_t ~ N(0, overnight_vol²);
- intraday: close_t = open_t·(1 + r_t), r_t = β_i·(f_t + g_{t−1}) + u_{k(i),t} + a_{i,t−1} + idio_vol·ε_t,
  with u the sector factor of ticker i's sector (0 without sectors);
- high/low extend the open–close range by |N(0, (idio_vol/2)²)| on each side;
- volume = base·exp(N(0, 0.3²))·(1 + 20·|r_t|), base per ticker.
Starting prices are drawn in [20, 200].
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from market.synthetic.knobs import SyntheticKnobs
from market.synthetic.latent import Latent


def intraday_returns(knobs: SyntheticKnobs, latent: Latent, rng: np.random.Generator) -> pd.DataFrame:
    """r_{i,t} = β_i·(f_t + g_{t−1}) + a_{i,t−1} + idio_vol·ε (yesterday's alphas pay today)."""
    n, k = latent.alpha.shape
    market = (latent.factor + latent.market_alpha.shift(1, fill_value=0.0)).to_numpy()[:, None]
    alpha = latent.alpha.shift(1, fill_value=0.0).to_numpy()
    returns = market * latent.beta.to_numpy()[None, :] + alpha + knobs.idio_vol * rng.standard_normal((n, k))
    if latent.sector is not None:
        returns = returns + latent.sector.to_numpy()
    return pd.DataFrame(np.clip(returns, -0.5, 0.5), index=latent.alpha.index, columns=latent.alpha.columns)


def simulate_bars(knobs: SyntheticKnobs, latent: Latent, rng: np.random.Generator) -> dict[str, pd.DataFrame]:
    """One validated-shape bar frame per ticker (index `date`, columns open..volume)."""
    returns = intraday_returns(knobs, latent, rng)
    n, k = returns.shape
    gaps = np.clip(knobs.overnight_vol * rng.standard_normal((n, k)), -0.5, 0.5)
    gaps[0] = 0.0
    growth = np.cumprod((1 + gaps) * (1 + returns.to_numpy()), axis=0)
    start = rng.uniform(20, 200, size=k)
    close = start * growth
    open_ = close / (1 + returns.to_numpy())
    wick = np.abs(rng.standard_normal((2, n, k))) * knobs.idio_vol / 2
    high = np.maximum(open_, close) * (1 + wick[0])
    low = np.minimum(open_, close) * (1 - np.minimum(wick[1], 0.5))
    base = rng.uniform(1e6, 2e7, size=k)
    volume = np.round(base * np.exp(0.3 * rng.standard_normal((n, k))) * (1 + 20 * np.abs(returns.to_numpy())))
    index = pd.DatetimeIndex(returns.index, name="date")
    return {
        ticker: pd.DataFrame({"open": open_[:, j], "high": high[:, j], "low": low[:, j],
                              "close": close[:, j], "volume": volume[:, j]}, index=index)
        for j, ticker in enumerate(returns.columns)
    }
