"""`generate_intraday`: a seeded synthetic 24/7 minute market with regime changes and volatility clustering.

For one instrument, bar t (length `minutes`, stamped at its close, `market.calendar`):

- regime s_t: a Markov chain that stays with probability 1 − 1/`regime_bars` and otherwise jumps
  to another regime chosen uniformly; each regime has a drift μ_s and a volatility scale v_s
  (per bar, as fractions);
- volatility clustering, GARCH(1,1) on the standardised shocks: h_t = ω + α·z_{t−1}² + β·h_{t−1},
  ω = 1 − α − β (so E[h] = 1), z_t = √h_t·ε_t, ε_t ~ N(0, 1);
- log return r_t = μ_{s_t} + base_vol·v_{s_t}·z_t; close_t = close_{t−1}·exp(r_t), open_t = close_{t−1}
  (a 24/7 market has no gaps); high and low extend the open–close range by |N(0, (base_vol·v/2)²)|;
- volume = base·exp(N(0, 0.3²))·(1 + |z_t|).

`inject` (default none) overwrites the drift and volatility scale of bars [start, start + bars) with
those of one extra regime, after everything is drawn: every random draw is the one without injection, so the bars before the
window are unchanged and the returns after it are too; the regime is one the chain never visits — an unseen regime
for a test window (a crash: drift −2e-4 per bar, vol_scale 4).

The market has a `funding` channel (`market.synthetic.funding`, synthetic as well) so that the
futures task runs on it as it is. The same seed always gives the same market.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from market.calendar import Calendar
from market.data import MarketData
from market.synthetic.funding import synthetic_funding
from market.synthetic.latent import regime_path
from market.validation import validate_bars


class IntradayRegime(BaseModel):
    """One regime: drift per bar and a scale of `base_vol`."""

    model_config = ConfigDict(extra="forbid")

    drift: float
    vol_scale: float = Field(gt=0)


def _default_regimes() -> dict[str, IntradayRegime]:
    return {"bull": IntradayRegime(drift=2e-5, vol_scale=0.8), "calm": IntradayRegime(drift=0.0, vol_scale=0.6),
            "bear": IntradayRegime(drift=-2.5e-5, vol_scale=1.6)}


class InjectedRegime(IntradayRegime):
    """A regime forced on the bars from `start` (a bar stamp) for `bars` bars."""

    start: str
    bars: int = Field(gt=0)


class IntradayKnobs(BaseModel):
    """The knobs of `generate_intraday` (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    tickers: list[str] = Field(default_factory=lambda: ["SYNBTC"], min_length=1)
    start: str = "2024-01-01"
    bars: int = Field(default=100_000, ge=10)
    minutes: int = Field(default=1, ge=1, le=720)
    seed: int = 0
    start_price: float = Field(default=40_000.0, gt=0)
    base_vol: float = Field(default=8e-4, gt=0)
    regimes: dict[str, IntradayRegime] = Field(default_factory=_default_regimes, min_length=1)
    regime_bars: float = Field(default=4_000.0, gt=1)
    garch_alpha: float = Field(default=0.08, ge=0)
    garch_beta: float = Field(default=0.9, ge=0)
    funding_seed: int = 0
    inject: InjectedRegime | None = None


def _one(knobs: IntradayKnobs, index: pd.DatetimeIndex, rng: np.random.Generator) -> pd.DataFrame:
    n, names = len(index), list(knobs.regimes)
    states = regime_path(rng, n, names, knobs.regime_bars)
    drift = np.array([knobs.regimes[k].drift for k in names])[states]
    scale = knobs.base_vol * np.array([knobs.regimes[k].vol_scale for k in names])[states]
    if knobs.inject is not None:
        first = int(index.searchsorted(pd.Timestamp(knobs.inject.start)))
        drift[first:first + knobs.inject.bars] = knobs.inject.drift
        scale[first:first + knobs.inject.bars] = knobs.base_vol * knobs.inject.vol_scale
    alpha, beta = knobs.garch_alpha, knobs.garch_beta
    omega = 1.0 - alpha - beta
    eps = rng.standard_normal(n)
    z = np.empty(n)
    h = 1.0
    for t in range(n):
        z[t] = np.sqrt(h) * eps[t]
        h = omega + alpha * z[t] ** 2 + beta * h
    returns = np.clip(drift + scale * z, -0.2, 0.2)
    close = knobs.start_price * np.exp(np.cumsum(returns))
    open_ = np.concatenate([[knobs.start_price], close[:-1]])
    wick = np.abs(rng.standard_normal((2, n))) * scale / 2
    high = np.maximum(open_, close) * (1 + wick[0])
    low = np.minimum(open_, close) * (1 - np.minimum(wick[1], 0.5))
    volume = np.round(rng.uniform(5.0, 50.0) * np.exp(0.3 * rng.standard_normal(n)) * (1 + np.abs(z)), 4)
    return pd.DataFrame({"open": open_, "high": high, "low": low, "close": close, "volume": volume}, index=index)


def generate_intraday(**knobs) -> MarketData:
    """A synthetic intraday `MarketData` (24/7 calendar, `minutes`-minute bars) with a synthetic funding channel."""
    spec = IntradayKnobs.model_validate(knobs)
    step = pd.Timedelta(minutes=spec.minutes)
    index = pd.DatetimeIndex(pd.Timestamp(spec.start) + step * np.arange(1, spec.bars + 1), name="date")
    origin = f"synthetic intraday(seed={spec.seed})"
    bars = {}
    for i, ticker in enumerate(spec.tickers):
        bars[ticker] = validate_bars(_one(spec, index, np.random.default_rng([spec.seed, i])), f"{origin}:{ticker}")
    funding = pd.concat([synthetic_funding(t, index[0], index[-1], spec.funding_seed) for t in spec.tickers],
                        ignore_index=True)
    return MarketData(bars=bars, records={"funding": funding}, calendar=Calendar(step, "24/7"),
                      origin={t: f"{origin} + synthetic funding(seed={spec.funding_seed})" for t in spec.tickers})
