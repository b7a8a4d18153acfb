"""`AnonymisationKey`: the seeded, invertible maps of an anonymised replay.

Everything is drawn from a stable hash of (seed, name), so adding a ticker to a market never
changes the codes or scales of the others, and the same seed always gives the same key.

- **Tickers** become codes of `CODE_LETTERS` capital letters that are neither a ticker of the
  market nor contain one, nor any company name the text cleaner replaces (so no cleaned text
  can contain a real name by accident).
- **Prices** (currency per share) of ticker i are multiplied by c_i = 2^k and **share counts**
  (volume, insider shares) by v_i = 2^j, with k, j drawn from `SCALE_EXPONENTS`; currency
  totals (revenue, assets, dividends paid) scale by c_i·v_i. Every ratio a reader can form —
  returns, P/E = price / EPS, dividend yield, turnover, P/S = price·shares / revenue — is
  unchanged. The factors are powers of two so that binary floating point scales exactly:
  (c·x)·(c·y) / (c·z) rounds as x·y / z does, so a scale-free rule decides bit for bit as it
  does on the real prices, not merely up to rounding.
- **People** named in the insider channel become pseudonyms `X. Abcdef` (an initial and a
  capitalised code), in the channel and wherever their full name appears in text.
- **Macro series** that are levels (index levels, prices, price indexes) are multiplied by one
  power of two per series; rates and percentages (`SCALE_FREE_SERIES`) are kept.
- **Dates** move by a whole number of weeks, W = round(Y·365.2425 / 7) with Y drawn from
  `SHIFT_YEARS`, narrowed where the market's span needs it so that every shifted date lies
  after `FUTURE_FLOOR` (a range no model has seen as market history) and within pandas'
  calendar (before 2262): weekdays are preserved, a date lands within 3.5 days of the same
  calendar day Y years later. Years written in text move by Y.

The inverse maps (`real_ticker`, `real_date`, dividing by the factors) are exact.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import ConfigError
from market.portfolio import PortfolioState

CODE_LETTERS = 4
SCALE_EXPONENTS = (-4, -3, -2, -1, 1, 2, 3, 4)
"""Exponents k of the power-of-two factors 2^k (1/16 .. 16, never 1)."""
SHIFT_YEARS = (150, 200)
"""The range (inclusive) of Y, the shift in years."""
FUTURE_FLOOR = pd.Timestamp("2050-01-01")
"""Every shifted date lies after this day."""
LAST_YEAR = pd.Timestamp.max.year - 1
"""Every shifted date lies in or before this year (pandas' nanosecond calendar ends in April 2262)."""
DAYS_PER_YEAR = 365.2425

SCALE_FREE_SERIES = frozenset({
    "vix", "aaa_yield", "baa_yield", "treasury_10y", "fed_funds_rate", "unemployment", "cpi_yoy",
    "economic_surprise",
})
"""Macro series in percent or index points of change, kept as they are; every other series is a level."""


def _rng(seed: int, *parts: str) -> np.random.Generator:
    """A generator seeded by a stable hash of (seed, parts)."""
    digest = hashlib.sha256("|".join((str(seed), *parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _power_of_two(seed: int, *parts: str) -> float:
    return float(2.0 ** _rng(seed, *parts).choice(SCALE_EXPONENTS))


def _code(rng: np.random.Generator, letters: int, taken: Iterable[str], avoid: set[str]) -> str:
    """Random capital letters: not in `taken`, and neither containing nor contained in a name of `avoid`."""
    taken = set(taken)
    while True:
        code = "".join(rng.choice(list(string.ascii_uppercase), letters))
        if code not in taken and not any(name in code or code in name for name in avoid):
            return code


def _shift_years(seed: int, first: pd.Timestamp, last: pd.Timestamp) -> int:
    """Y, drawn from `SHIFT_YEARS` narrowed so that [first, last] + Y years (+- 1) lies in (FUTURE_FLOOR, LAST_YEAR)."""
    low = max(SHIFT_YEARS[0], FUTURE_FLOOR.year - first.year + 1)
    high = min(SHIFT_YEARS[1], LAST_YEAR - last.year - 1)
    if low > high:
        raise ConfigError(f"anonymisation: the market's dates {first.date()} .. {last.date()} span too many years to "
                          f"move them all between {FUTURE_FLOOR.year} and {LAST_YEAR}")
    return int(_rng(seed, "years").integers(low, high + 1))


@dataclass(frozen=True)
class AnonymisationKey:
    """The maps of one anonymisation (see the module docstring); `describe()` is its JSON form."""

    seed: int
    codes: dict[str, str]
    """Real ticker -> code."""
    price_scale: dict[str, float]
    """Real ticker -> c_i, the factor of prices and other currency-per-share amounts."""
    share_scale: dict[str, float]
    """Real ticker -> v_i, the factor of share counts."""
    series_scale: dict[str, float]
    """Macro series -> its factor (1 for `SCALE_FREE_SERIES`)."""
    people: dict[str, str]
    """Real person's name -> pseudonym."""
    years: int
    """Y: the shift of years written in text."""

    @classmethod
    def draw(cls, seed: int, span: tuple[pd.Timestamp, pd.Timestamp], tickers: Iterable[str],
             series: Iterable[str] = (), people: Iterable[str] = (), reserved: Iterable[str] = ()) -> AnonymisationKey:
        """The key of `seed` for a market whose dates lie in `span` (first, last) with `tickers`, macro
        `series` and `people`; codes avoid `reserved` names (any case)."""
        tickers, people = sorted(set(tickers)), sorted(set(people))
        avoid = {name.upper() for name in [*tickers, *people, *reserved] if len(name) >= 2}
        codes: dict[str, str] = {}
        for ticker in tickers:
            codes[ticker] = _code(_rng(seed, "code", ticker), CODE_LETTERS, codes.values(), avoid)
        pseudonyms: dict[str, str] = {}
        for person in people:
            rng = _rng(seed, "person", person)
            surname = _code(rng, 6, (p.split()[-1].upper() for p in pseudonyms.values()), avoid)
            pseudonyms[person] = f"{string.ascii_uppercase[rng.integers(26)]}. {surname.capitalize()}"
        return cls(
            seed=seed, codes=codes,
            price_scale={t: _power_of_two(seed, "price", t) for t in tickers},
            share_scale={t: _power_of_two(seed, "shares", t) for t in tickers},
            series_scale={s: 1.0 if s in SCALE_FREE_SERIES else _power_of_two(seed, "series", s)
                          for s in sorted(set(series))},
            people=pseudonyms,
            years=_shift_years(seed, *span),
        )

    @property
    def weeks(self) -> int:
        """W = round(Y·365.2425 / 7): the shift of every date, in weeks."""
        return round(self.years * DAYS_PER_YEAR / 7)

    @property
    def shift(self) -> pd.Timedelta:
        return pd.Timedelta(weeks=self.weeks)

    def ticker(self, real: str) -> str:
        """The code of a real ticker ("" stays "": market-wide records)."""
        if real == "":
            return ""
        try:
            return self.codes[real]
        except KeyError:
            raise ConfigError(f"anonymisation: no code for ticker {real!r}") from None

    def real_ticker(self, code: str) -> str:
        """The real ticker of a code (the inverse of `ticker`)."""
        if code == "":
            return ""
        for real, known in self.codes.items():
            if known == code:
                return real
        raise ConfigError(f"anonymisation: {code!r} is not a code of this key")

    def date(self, real):
        """A date, DatetimeIndex or datetime Series moved W weeks on."""
        return real + self.shift

    def real_date(self, shown):
        """The inverse of `date`."""
        return shown - self.shift

    def total_scale(self, ticker: str) -> float:
        """c_i·v_i: the factor of currency totals (revenue, assets, traded notional)."""
        return self.price_scale[ticker] * self.share_scale[ticker]

    def portfolio(self, real: PortfolioState, ticker: str) -> PortfolioState:
        """A portfolio in anonymised units: cash x c_i·v_i (a currency total), shares x v_i, close x c_i."""
        return PortfolioState.single(self.ticker(ticker), cash=real.cash * self.total_scale(ticker),
                                     shares=real.shares * self.share_scale[ticker],
                                     close=real.close * self.price_scale[ticker])

    def describe(self) -> dict:
        """The key as plain JSON values (run.json of the replay)."""
        return {"seed": self.seed, "codes": self.codes, "price_scale": self.price_scale,
                "share_scale": self.share_scale, "series_scale": self.series_scale, "people": self.people,
                "years": self.years, "weeks": self.weeks}
