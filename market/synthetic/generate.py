"""`generate_market`: a seeded synthetic market whose channels carry known information.

Each component draws from its own random stream (seeded by (seed, component)), so changing a
channel's knobs never changes the prices, and the same seed always gives the same market.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from market.data import MarketData
from market.synthetic.company import company_records
from market.synthetic.events import insider, news, social
from market.synthetic.knobs import SyntheticKnobs
from market.synthetic.latent import simulate_latent, standardised
from market.synthetic.macro import macro_records
from market.synthetic.prices import simulate_bars
from market.synthetic.text import company_name
from market.validation import validate_bars

_STREAMS = ("latent", "bars", "names", "news", "social", "insider", "company", "macro", "sectors")


def generate_market(**knobs: Any) -> MarketData:
    """A synthetic `MarketData` from the knobs of `SyntheticKnobs` (all optional).

    Bars: business days from `start`, `days` of them. Records: news, social, fundamentals,
    insider, dividends, earnings_estimates and macro, in the schemas of
    `market.sources.records`.
    """
    spec = SyntheticKnobs.model_validate(knobs)
    streams = {name: np.random.default_rng([spec.seed, i]) for i, name in enumerate(_STREAMS)}
    dates = pd.bdate_range(spec.start, periods=spec.days, name="date")
    latent = simulate_latent(spec, dates, streams["latent"])
    if spec.sectors:
        latent = replace(latent, sector=sector_returns(spec, dates, streams["sectors"]))
    bars = simulate_bars(spec, latent, streams["bars"])
    origin = f"synthetic(seed={spec.seed})"
    origins = {t: origin if not spec.sectors else f"synthetic(seed={spec.seed}, sector={sector_of(spec, t)})"
               for t in spec.tickers}
    for ticker, frame in bars.items():
        validate_bars(frame, f"{origin}:{ticker}")
    companies = {t: company_name(streams["names"], t) for t in spec.tickers}
    z = standardised(latent.alpha, spec.alpha_vol)
    close = pd.DataFrame({t: frame["close"] for t, frame in bars.items()})
    channels = spec.channels
    records = {
        "news": news(streams["news"], z, channels["news"], companies),
        "social": social(streams["social"], z, channels["social"], companies),
        "insider": insider(streams["insider"], z, channels["insider"], close),
        **company_records(streams["company"], z, channels["fundamentals"]),
        "macro": macro_records(streams["macro"], spec, latent, channels["macro"]),
    }
    return MarketData(bars=bars, records=records, origin=origins)


def sector_of(spec: SyntheticKnobs, ticker: str) -> int:
    """The sector (0-based) of `ticker`: the tickers fill the sectors in contiguous blocks of ⌈n/sectors⌉."""
    size = -(-len(spec.tickers) // spec.sectors)
    return spec.tickers.index(ticker) // size


def sector_returns(spec: SyntheticKnobs, dates: pd.DatetimeIndex, rng: np.random.Generator) -> pd.DataFrame:
    """u_{k(i),t} per ticker i (columns) and day: each sector's N(0, sector_vol²) factor, shared within the sector."""
    factors = spec.sector_vol * rng.standard_normal((len(dates), spec.sectors))
    columns = [sector_of(spec, t) for t in spec.tickers]
    return pd.DataFrame(factors[:, columns], index=dates, columns=spec.tickers)


# The knobs are `SyntheticKnobs`' fields; config key checks (core.config_keys) and help() read this.
generate_market.__signature__ = inspect.signature(SyntheticKnobs).replace(return_annotation=MarketData)
