"""The names under which text records may mention a ticker, besides the ticker itself.

`COMPANY_NAMES` covers the embedded tickers and the AlphaQuanter paper's: the company, its
best-known brands and its best-known executives. A run adds its own with the probe's `aliases`
(`+probe.aliases.XYZ="[Xyz Corp,Xyzzy]"`). The cleaner replaces each name as a whole word in
any case; the synthetic markets name a company after its ticker (`Alfa Dynamics` for ALFA),
which the ticker's own replacement covers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

COMPANY_NAMES: dict[str, tuple[str, ...]] = {
    "AAPL": ("Apple", "iPhone", "Tim Cook"),
    "AMZN": ("Amazon", "Amazon.com", "AWS", "Jeff Bezos", "Andy Jassy"),
    "GOOGL": ("Alphabet", "Google", "YouTube", "Sundar Pichai"),
    "META": ("Meta Platforms", "Meta", "Facebook", "Instagram", "WhatsApp", "Mark Zuckerberg"),
    "MSFT": ("Microsoft", "Satya Nadella"),
    "NFLX": ("Netflix", "Reed Hastings"),
    "NVDA": ("NVIDIA", "GeForce", "Jensen Huang"),
    "TSLA": ("Tesla", "Elon Musk"),
    "SPX": ("S&P 500", "S&P"),
    "SPX_2015": ("S&P 500", "S&P"),
    "IXIC": ("Nasdaq Composite", "Nasdaq"),
}
"""Ticker -> names of its company, brands and executives (matched in any case)."""


def names_of(tickers: Iterable[str], extra: Mapping[str, Iterable[str]] | None = None) -> dict[str, tuple[str, ...]]:
    """Ticker -> the names the cleaner replaces for it: `COMPANY_NAMES` plus `extra`."""
    extra = extra or {}
    return {ticker: tuple(dict.fromkeys([*COMPANY_NAMES.get(ticker, ()), *map(str, extra.get(ticker, ()))]))
            for ticker in tickers}
