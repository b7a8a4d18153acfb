"""Bars from Yahoo Finance through the optional `yfinance` package, cached on disk.

`fetch_yfinance` downloads (needs network and `pip install tradeduel[online]`) and writes one
CSV per ticker into the cache folder in the schema of `market.sources.files`; `load_yfinance`
only reads that cache, so a benchmark run never touches the network and is reproducible from
the cached files. Prices are Yahoo's split-adjusted `Close` and `Open` (auto_adjust=False).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.errors import ConfigError, DataError
from market.data import MarketData
from market.sources.cache import cache_folder
from market.sources.files import load_folder

LABEL_PADDING = pd.Timedelta(days=31)
"""Extra calendar days fetched after `end`, so that forward-looking labels of the last decisions
(the regime label looks 8 bars ahead) have prices."""


def fetch_command(tickers: list[str], start: str, end: str) -> str:
    """The command line that fills the cache for these tickers and dates (plus label padding)."""
    padded_end = (pd.Timestamp(end) + LABEL_PADDING).date()
    return f"python -m market.fetch --tickers {' '.join(tickers)} --start {start} --end {padded_end}"


def load_yfinance(tickers: list[str], start: str, end: str,
                  cache_dir: str | Path | None = None) -> MarketData:
    """Cached Yahoo bars of `tickers`; stops with the fetch command when any is missing or short."""
    folder = cache_folder("yfinance", cache_dir)
    missing = [t for t in tickers if not (folder / f"{t}.csv").is_file()]
    if missing:
        raise DataError(f"{folder}: no cached data for {', '.join(missing)}; fetch it with: "
                        f"{fetch_command(tickers, start, end)}")
    data = load_folder(folder, tickers)
    for ticker in tickers:
        index = data.bars[ticker].index
        if index[0] > pd.Timestamp(start) + pd.Timedelta(days=7) or index[-1] < pd.Timestamp(end) - pd.Timedelta(days=7):
            raise DataError(f"{folder / (ticker + '.csv')}: covers {index[0].date()} .. {index[-1].date()}, "
                            f"not {start} .. {end}; refetch with: {fetch_command(tickers, start, end)}")
    return data


def fetch_yfinance(tickers: list[str], start: str, end: str, cache_dir: str | Path | None = None) -> list[Path]:
    """Download daily bars into the cache folder, one CSV per ticker; returns the files."""
    try:
        import yfinance
    except ImportError:
        raise ConfigError("yfinance is not installed: pip install 'tradeduel[online]'") from None
    folder = cache_folder("yfinance", cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for ticker in tickers:
        raw = yfinance.Ticker(ticker).history(start=start, end=end, auto_adjust=False, actions=False)
        if raw.empty:
            raise DataError(f"yfinance returned no bars for {ticker} between {start} and {end}")
        table = raw.reset_index().rename(columns=str.lower).rename(columns={"adj close": "adj_close"})
        table["date"] = pd.to_datetime(table["date"]).dt.strftime("%Y-%m-%d")
        path = folder / f"{ticker}.csv"
        table[["date", "open", "high", "low", "close", "volume", "adj_close"]].to_csv(path, index=False)
        files.append(path)
    return files
