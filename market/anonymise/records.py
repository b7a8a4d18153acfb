"""How each column of bars and record channels is anonymised (channels of `market.sources.records`).

| kind | columns | forward map (inverse: the reverse) |
|---|---|---|
| ticker | `ticker` of every channel | its code; "" (market-wide) stays |
| date | `available_at`, `period_end`, `ex_date`, `period`; the bar dates | + W weeks |
| price (currency per share) | bar `open, high, low, close, adj_close`; insider `price`; dividends `amount`; estimates `eps_estimate` | x c_i |
| shares | bar `volume`; insider `shares` | x v_i |
| total (currency) | estimates `revenue_estimate` | x c_i·v_i |
| item | fundamentals `value`, by its `item` name: per share (`eps`, `per_share`) x c_i, share counts (`shares`) x v_i, ratios (`margin`, `ratio`, `pct`, `percent`, `yield`, `rate`) kept, every other item a currency total x c_i·v_i | |
| series | macro `value` | x the series' factor (1 for rates and percentages) |
| text | news `headline`, `source`; social `text`; insider `role`; fundamentals `item` | `TextCleaner` (not inverted) |
| person | insider `insider` | its pseudonym |
| kept | sentiments, likes, analysts, `transaction`, `statement`, `series` | unchanged |

A channel or column without a rule here is refused: nothing passes into a replay untransformed
by oversight.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import ConfigError
from market.anonymise.key import AnonymisationKey
from market.anonymise.text import TextCleaner

TICKER, DATE, PRICE, SHARES, TOTAL, ITEM, SERIES, TEXT, PERSON, KEPT = (
    "ticker", "date", "price", "shares", "total", "item", "series", "text", "person", "kept")

BAR_RULES = {"open": PRICE, "high": PRICE, "low": PRICE, "close": PRICE, "adj_close": PRICE, "volume": SHARES}
COLUMN_RULES: dict[str, dict[str, str]] = {
    "news": {"headline": TEXT, "source": TEXT, "sentiment": KEPT},
    "social": {"text": TEXT, "sentiment": KEPT, "likes": KEPT},
    "fundamentals": {"statement": KEPT, "period_end": DATE, "item": TEXT, "value": ITEM},
    "insider": {"insider": PERSON, "role": TEXT, "transaction": KEPT, "shares": SHARES, "price": PRICE},
    "dividends": {"ex_date": DATE, "amount": PRICE},
    "earnings_estimates": {"period_end": DATE, "eps_estimate": PRICE, "revenue_estimate": TOTAL, "analysts": KEPT},
    "macro": {"series": KEPT, "period": DATE, "value": SERIES},
}
"""Channel -> column -> kind, besides `ticker` (kind ticker) and `available_at` (kind date)."""

_RATIO_WORDS = ("margin", "ratio", "pct", "percent", "yield", "rate")


def item_kind(item: str) -> str:
    """The kind of a fundamentals item's value: price (per share), shares, kept (a ratio) or total."""
    name = item.lower()
    if "eps" in name or "per_share" in name:
        return PRICE
    if "shares" in name:
        return SHARES
    return KEPT if any(word in name for word in _RATIO_WORDS) else TOTAL


def rules_of(channel: str, columns) -> dict[str, str]:
    """Column -> kind for every column of `channel`; an unknown channel or column is a `ConfigError`."""
    if channel not in COLUMN_RULES:
        raise ConfigError(f"anonymisation: no rule for the record channel {channel!r}; channels with rules are "
                          f"{', '.join(COLUMN_RULES)}")
    rules = {"ticker": TICKER, "available_at": DATE, **COLUMN_RULES[channel]}
    unknown = [c for c in columns if c not in rules]
    if unknown:
        raise ConfigError(f"anonymisation: no rule for column {unknown[0]!r} of the {channel} channel")
    return {c: rules[c] for c in columns}


def _factors(kind: str, frame: pd.DataFrame, key: AnonymisationKey, tickers: pd.Series) -> np.ndarray:
    """The forward factor of each row for a numeric column of `kind`; `tickers` holds each row's real ticker."""
    if kind == SERIES:
        return frame["series"].map(key.series_scale).to_numpy(dtype=float)
    scales = {PRICE: key.price_scale, SHARES: key.share_scale,
              TOTAL: {ticker: key.total_scale(ticker) for ticker in key.codes}}
    if kind == ITEM:
        kinds = frame["item"].map(item_kind).to_numpy()
        per_kind = {k: tickers.map(v).to_numpy(dtype=float) for k, v in scales.items()}
        return np.select([kinds == k for k in per_kind], list(per_kind.values()), 1.0)
    return tickers.map(scales[kind]).to_numpy(dtype=float)


def transform_bars(frame: pd.DataFrame, ticker: str, key: AnonymisationKey, inverse: bool = False) -> pd.DataFrame:
    """One ticker's bars moved W weeks with prices x c_i and volume x v_i (`inverse`: back; `ticker` is real)."""
    unknown = [c for c in frame.columns if c not in BAR_RULES]
    if unknown:
        raise ConfigError(f"anonymisation: no rule for the bar column {unknown[0]!r} of {ticker}")
    out = frame.copy()
    for column, kind in BAR_RULES.items():
        if column in out:
            factor = key.price_scale[ticker] if kind == PRICE else key.share_scale[ticker]
            out[column] = out[column] / factor if inverse else out[column] * factor
    out.index = key.real_date(frame.index) if inverse else key.date(frame.index)
    return out


def transform_columns(channel: str, frame: pd.DataFrame, key: AnonymisationKey, inverse: bool = False) -> pd.DataFrame:
    """Every non-text column of a channel mapped (module table); text columns are left as they are."""
    rules = rules_of(channel, frame.columns)
    out = frame.copy()
    if frame.empty:
        return out
    real = frame["ticker"].map(key.real_ticker) if inverse else frame["ticker"]
    for column, kind in rules.items():
        if kind == TICKER:
            out[column] = frame[column].map(key.real_ticker if inverse else key.ticker).astype(frame[column].dtype)
        elif kind == DATE:
            out[column] = key.real_date(frame[column]) if inverse else key.date(frame[column])
        elif kind == PERSON:
            people = {v: k for k, v in key.people.items()} if inverse else key.people
            out[column] = frame[column].map(people).astype(frame[column].dtype)
        elif kind in (PRICE, SHARES, TOTAL, ITEM, SERIES):
            factors = _factors(kind, frame, key, real)
            if np.isnan(factors).any():
                row = int(np.flatnonzero(np.isnan(factors))[0])
                raise ConfigError(f"anonymisation: {channel} record {row + 1}: no scale for its {column} "
                                  f"(ticker {frame['ticker'].iloc[row]!r})")
            out[column] = frame[column] / factors if inverse else frame[column] * factors
    return out


@dataclass(frozen=True)
class Uncleanable:
    """A text record that still names the real world after cleaning."""

    channel: str
    row: int
    """0-based position in the channel's frame."""
    ticker: str
    available_at: pd.Timestamp
    column: str
    text: str
    residue: str

    def message(self) -> str:
        """The one-line error that names the record and what is left."""
        excerpt = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return (f"{self.channel} record {self.row + 1} ({self.ticker or 'market-wide'}, published "
                f"{self.available_at:%Y-%m-%d %H:%M}): {self.column} {excerpt!r} still names {self.residue!r} after "
                "anonymisation; add that form to probe.aliases, correct the record, or set probe.uncleanable=withhold "
                "to leave such records out of the replay (they are counted in the report)")


def clean_texts(channel: str, frame: pd.DataFrame, cleaner: TextCleaner) -> tuple[pd.DataFrame, list[Uncleanable]]:
    """The text columns of a channel (real tickers still in `ticker`) cleaned, and the records that stay unclean."""
    texts = [c for c, kind in rules_of(channel, frame.columns).items() if kind == TEXT]
    out = frame.copy()
    failures: list[Uncleanable] = []
    for column in texts:
        cleaned = []
        for row, (text, ticker, published) in enumerate(zip(frame[column], frame["ticker"], frame["available_at"])):
            result = cleaner.clean(str(text), ticker, published)
            residue = cleaner.residue(result)
            if residue is not None:
                failures.append(Uncleanable(channel, row, ticker, published, column, str(text), residue))
            cleaned.append(result)
        out[column] = pd.Series(cleaned, index=frame.index, dtype=object)
    return out, failures
