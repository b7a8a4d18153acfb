"""Perpetual futures markets: bars with a `funding` record channel (the futures task needs one).

`load_perpetual` takes the bars of any data source config (`bars`, a Hydra node such as the
embedded BTC_15M) and adds funding rates: from a `funding` record file (`funding_file`: CSV or
JSONL with ticker, available_at in UTC, rate; validated row by row like every record file), or
else the seeded synthetic series of `market.synthetic.funding`, which is synthetic, not market
data, and is named so in each ticker's origin.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from market.data import MarketData
from market.sources.records import load_records
from market.synthetic.funding import synthetic_funding


def load_perpetual(bars: MarketData, funding_file: str | None = None, funding_seed: int = 0,
                   funding_hours: float = 8.0) -> MarketData:
    """`bars` with a `funding` channel: from `funding_file`, or synthetic (seeded by `funding_seed`)."""
    if funding_file is not None:
        funding = load_records(funding_file, "funding")
        origin = bars.origin
    else:
        funding = pd.concat([synthetic_funding(t, frame.index[0], frame.index[-1], funding_seed, funding_hours)
                             for t, frame in bars.bars.items()], ignore_index=True)
        origin = {t: f"{o} + synthetic funding(seed={funding_seed})" for t, o in bars.origin.items()}
    return replace(bars, records={**bars.records, "funding": funding}, origin=origin)
