"""Bars from a folder of files, one per ticker: `<TICKER>.csv` or `<TICKER>.parquet`.

Schema (header names are case-insensitive, spaces may stand for underscores):

| column    | type               | meaning |
|-----------|--------------------|---------|
| date      | date (ISO 8601)    | bar date, ascending, unique |
| open      | float > 0          | opening price |
| high      | float > 0          | highest price, ≥ low, ≥ open and close |
| low       | float > 0          | lowest price |
| close     | float > 0          | closing price (split-adjusted; the simulator trades on open/close) |
| volume    | float ≥ 0          | shares traded |
| adj_close | float > 0, optional| dividend-adjusted close, kept for reference |

Other columns are ignored. A bad file stops the load with one line naming the file, the row
(1-based, header excluded) or date, and the problem.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.errors import DataError
from market.data import MarketData
from market.sources.normalise import normalise_bars

SUFFIXES = (".csv", ".parquet")


def read_table(path: Path, **csv_options) -> pd.DataFrame:
    """Read a CSV (with `pandas.read_csv` options) or Parquet file; parser failures become a one-line `DataError`."""
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, **csv_options)
    except (ValueError, OSError, pd.errors.ParserError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DataError(f"{path}: cannot be read ({first_line})") from None


def find_ticker_file(folder: Path, ticker: str) -> Path:
    """The file holding `ticker`'s bars in `folder`; a clear error if there is none."""
    for suffix in SUFFIXES:
        candidate = folder / f"{ticker}{suffix}"
        if candidate.is_file():
            return candidate
    if not folder.is_dir():
        raise DataError(f"{folder}: data folder does not exist")
    present = sorted(p.stem for p in folder.iterdir() if p.suffix in SUFFIXES)
    raise DataError(f"{folder}: no {ticker}.csv or {ticker}.parquet (tickers present: "
                    f"{', '.join(present) or 'none'})")


def load_folder(path: str | Path, tickers: list[str]) -> MarketData:
    """Bars of `tickers` from `path/<TICKER>.csv|.parquet`, validated."""
    folder = Path(path)
    bars, origin = {}, {}
    for ticker in tickers:
        file = find_ticker_file(folder, ticker)
        bars[ticker] = normalise_bars(read_table(file), str(file))
        origin[ticker] = str(file)
    return MarketData(bars=bars, origin=origin)
