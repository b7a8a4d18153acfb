"""Fill the on-disk data cache from Yahoo Finance (needs network and `tradeduel[online]`).

    python -m market.fetch --tickers GOOGL META MSFT NVDA TSLA --start 2022-06-01 --end 2025-07-31
"""

from __future__ import annotations

import argparse
import sys

from core.errors import ConfigError, DataError
from market.sources.yfinance_source import fetch_yfinance


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickers", nargs="+", required=True)
    parser.add_argument("--start", required=True)
    parser.add_argument("--end", required=True)
    parser.add_argument("--cache-dir", default=None)
    args = parser.parse_args(argv)
    try:
        for path in fetch_yfinance(args.tickers, args.start, args.end, args.cache_dir):
            print(path)
    except (DataError, ConfigError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
