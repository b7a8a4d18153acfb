"""The hidden state of a synthetic market: regimes, the market factor and the alphas.

- Regime s_t: a Markov chain that stays with probability 1 − 1/`regime_days` and otherwise
  jumps to another regime chosen uniformly.
- Market factor f_t ~ N(drift[s_t], vol[s_t]²): the common daily return.
- Sector factors (when `sectors` > 0): u_{k,t} ~ N(0, sector_vol²) for sector k, shared by
  the tickers of that sector (contiguous blocks of the ticker list: `sector_of`).
- Alphas: AR(1) processes a_t = φ·a_{t−1} + √(1 − φ²)·σ·ε_t with stationary std σ, one per
  ticker (`alpha_vol`) and one for the whole market g_t (`market_alpha_vol`). The alpha of
  day t is the expected excess return of day t+1 from open to close: information about it
  that is public at the close of t is worth trading on at the next open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd

from market.synthetic.knobs import SyntheticKnobs

T = TypeVar("T", np.ndarray, pd.DataFrame)


@dataclass(frozen=True)
class Latent:
    """The hidden daily state, indexed by trading day."""

    regime: pd.Series
    """Regime name per day."""
    factor: pd.Series
    """Market factor return f_t."""
    market_alpha: pd.Series
    """g_t: the market's expected excess return for day t+1."""
    alpha: pd.DataFrame
    """a_t per ticker (columns): each ticker's expected excess return for day t+1."""
    beta: pd.Series
    """Market beta per ticker."""
    sector: pd.DataFrame | None = None
    """The sector factor return of each ticker's sector per day (None: no sectors)."""


def regime_path(rng: np.random.Generator, n: int, names: list[str], mean_days: float) -> np.ndarray:
    """Indices into `names` of a Markov chain that leaves its state with probability 1/mean_days."""
    states = np.empty(n, dtype=int)
    states[0] = rng.integers(len(names))
    leave = rng.random(n) < 1.0 / mean_days
    jumps = rng.integers(1, max(len(names), 2), size=n)
    for t in range(1, n):
        states[t] = (states[t - 1] + jumps[t]) % len(names) if leave[t] and len(names) > 1 else states[t - 1]
    return states


def ar1(rng: np.random.Generator, shape: tuple[int, ...], phi: float, std: float) -> np.ndarray:
    """A stationary AR(1) path along axis 0: x_t = φ·x_{t−1} + √(1 − φ²)·std·ε_t, x_0 ~ N(0, std²)."""
    shocks = rng.standard_normal(shape) * std
    out = np.empty(shape)
    out[0] = shocks[0]
    scale = np.sqrt(1.0 - phi**2)
    for t in range(1, shape[0]):
        out[t] = phi * out[t - 1] + scale * shocks[t]
    return out


def standardised(alpha: T, std: float) -> T:
    """z = alpha / std (all zeros when std = 0: a channel then carries no information)."""
    return alpha / std if std > 0 else alpha * 0.0


def simulate_latent(knobs: SyntheticKnobs, dates: pd.DatetimeIndex, rng: np.random.Generator) -> Latent:
    """Draw the hidden state for `dates` (the order of draws is fixed: seed ⇒ same path)."""
    n, names = len(dates), list(knobs.regimes)
    states = regime_path(rng, n, names, knobs.regime_days)
    drift = np.array([knobs.regimes[name].drift for name in names])[states]
    vol = np.array([knobs.regimes[name].vol for name in names])[states]
    factor = drift + vol * rng.standard_normal(n)
    market_alpha = ar1(rng, (n,), knobs.alpha_persistence, knobs.market_alpha_vol)
    alpha = ar1(rng, (n, len(knobs.tickers)), knobs.alpha_persistence, knobs.alpha_vol)
    beta = rng.uniform(*knobs.beta_range, size=len(knobs.tickers))
    return Latent(
        regime=pd.Series(np.array(names)[states], index=dates, name="regime"),
        factor=pd.Series(factor, index=dates, name="factor"),
        market_alpha=pd.Series(market_alpha, index=dates, name="market_alpha"),
        alpha=pd.DataFrame(alpha, index=dates, columns=knobs.tickers),
        beta=pd.Series(beta, index=knobs.tickers, name="beta"),
    )
