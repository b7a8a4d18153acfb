"""Anonymised replay data: the same market, with nothing a memory could recognise it by.

    market = anonymise(data, seed=0)      # an AnonymisedMarket: .data, .key, .withheld
    restore(market.data, market.key)      # bars and record values back, exactly

`anonymise` is one seeded, invertible map of a whole `MarketData`: tickers become codes, prices
and share counts are multiplied by one power of two each per ticker, dates move by a whole
number of weeks into the future, and text records are cleaned consistently
(`key` for the maps, `records` for the rule of every column, `text` for the cleaner). A reader
without memory sees the same information: every return, ratio and indicator in ratio form,
every sentiment, every weekday. A reader with memory sees no name or date it could look up.

A text record that still names the real world after cleaning (a ticker glued to other letters,
a company name the cleaner was not told) stops the anonymisation with one `DataError` line
naming the record; with `uncleanable="withhold"` such records are left out of the anonymised
market instead and counted in `withheld`. A record is never half-cleaned without a word.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from core.errors import DataError
from market.anonymise.key import AnonymisationKey
from market.anonymise.names import names_of
from market.anonymise.records import clean_texts, transform_bars, transform_columns
from market.anonymise.text import TextCleaner
from market.data import MarketData

Uncleanable = Literal["stop", "withhold"]


@dataclass(frozen=True)
class AnonymisedMarket:
    """The anonymised data, the key that maps it back, and the records withheld per channel."""

    data: MarketData
    key: AnonymisationKey
    withheld: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict:
        """The key and the withheld counts as plain JSON values."""
        return {**self.key.describe(), "withheld_records": self.withheld}


def _record_tickers(data: MarketData) -> set[str]:
    return {t for frame in data.records.values() if "ticker" in frame for t in frame["ticker"].unique() if t}


def _span(data: MarketData) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The first and last date anywhere in the market (bars and every date column of the records)."""
    stamps = [index for frame in data.bars.values() for index in (frame.index.min(), frame.index.max())]
    for frame in data.records.values():
        for column in frame.columns:
            if pd.api.types.is_datetime64_any_dtype(frame[column]) and frame[column].notna().any():
                stamps += [frame[column].min(), frame[column].max()]
    return min(stamps), max(stamps)


def draw_key(data: MarketData, seed: int, names: Mapping[str, tuple[str, ...]]) -> AnonymisationKey:
    """The key of `seed` for every ticker, macro series and insider of `data`."""
    macro = data.records.get("macro")
    insider = data.records.get("insider")
    return AnonymisationKey.draw(
        seed, _span(data), tickers=[*data.tickers, *_record_tickers(data)],
        series=macro["series"].unique() if macro is not None else (),
        people=insider["insider"].unique() if insider is not None else (),
        reserved=[name for aliases in names.values() for name in aliases])


def anonymise(data: MarketData, seed: int = 0, aliases: Mapping[str, Iterable[str]] | None = None,
              uncleanable: Uncleanable = "stop") -> AnonymisedMarket:
    """`data` anonymised under the key of `seed` (module docstring); `aliases` adds names per ticker."""
    names = names_of([*data.tickers, *_record_tickers(data)], aliases)
    key = draw_key(data, seed, names)
    cleaner = TextCleaner(key, names)
    records, withheld = {}, {}
    for channel, frame in data.records.items():
        cleaned, failures = clean_texts(channel, frame, cleaner)
        if failures and uncleanable == "stop":
            raise DataError(failures[0].message())
        if failures:
            cleaned = cleaned.drop(index=cleaned.index[sorted({f.row for f in failures})]).reset_index(drop=True)
            withheld[channel] = len({f.row for f in failures})
        records[channel] = transform_columns(channel, cleaned, key)
    return AnonymisedMarket(
        data=MarketData(
            bars={key.ticker(t): transform_bars(frame, t, key) for t, frame in data.bars.items()},
            records=records, origin={key.ticker(t): f"anonymised:{key.ticker(t)}" for t in data.bars},
            calendar=data.calendar),
        key=key, withheld=withheld)


def restore(data: MarketData, key: AnonymisationKey) -> MarketData:
    """The inverse of `anonymise` on bars and on every record column but free text (which keeps its codes)."""
    return MarketData(
        bars={key.real_ticker(code): transform_bars(frame, key.real_ticker(code), key, inverse=True)
              for code, frame in data.bars.items()},
        records={channel: transform_columns(channel, frame, key, inverse=True) for channel, frame in data.records.items()},
        origin={key.real_ticker(code): origin for code, origin in data.origin.items()},
        calendar=data.calendar)


__all__ = ["AnonymisationKey", "AnonymisedMarket", "anonymise", "restore"]
