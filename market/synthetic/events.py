"""Event channels of a synthetic market: news, social posts and insider transactions.

Each ticker gets Poisson(`per_day`) records per trading day, published at a uniform time
between 06:00 and 20:00 (records after the 16:00 close are visible only from the next
day's decision). A record of day t carries a latent score
    score = ρ·a_{i,t}/alpha_vol + √(1 − ρ²)·ε,  ρ = √(snr/(1 + snr)),
so its information is about the next day's open-to-close return. News and social posts turn
the score into sentiment = tanh(score) and a template text of that tone; an insider buys
when the score is positive and sells otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from market.sources.records import SCHEMAS
from market.synthetic.knobs import Channel
from market.synthetic.text import HEADLINES, POSTS, SOURCES, fill

FIRST_HOUR, LAST_HOUR = 6, 20
INSIDERS = (("J. Marsh", "CEO"), ("L. Okafor", "CFO"), ("P. Lindqvist", "Director"),
            ("R. Sato", "Director"), ("M. Alvarez", "VP Sales"))


def event_days(rng: np.random.Generator, dates: pd.DatetimeIndex, per_day: float) -> tuple[np.ndarray, pd.DatetimeIndex]:
    """Day indices and publication times of Poisson(`per_day`) events per day, time-sorted."""
    counts = rng.poisson(per_day, size=len(dates))
    days = np.repeat(np.arange(len(dates)), counts)
    seconds = rng.uniform(FIRST_HOUR * 3600, LAST_HOUR * 3600, size=len(days)).round()
    times = dates[days] + pd.to_timedelta(seconds, unit="s")
    order = np.argsort(times.asi8, kind="stable")
    return days[order], times[order]


def latent_scores(rng: np.random.Generator, z: np.ndarray, channel: Channel) -> np.ndarray:
    """score = ρ·z + √(1 − ρ²)·ε for each event's standardised alpha z."""
    return channel.rho * z + np.sqrt(1.0 - channel.rho**2) * rng.standard_normal(len(z))


def _events(rng: np.random.Generator, z: pd.DataFrame, channel: Channel) -> list[tuple[str, pd.Timestamp, float]]:
    """(ticker, time, score) of every event of every ticker (ordered by ticker, then time)."""
    out = []
    for ticker in z.columns:
        days, times = event_days(rng, z.index, channel.per_day)
        scores = latent_scores(rng, z[ticker].to_numpy()[days], channel)
        out.extend(zip([ticker] * len(days), times, scores))
    return out


def record_frame(channel: str, rows: list[dict]) -> pd.DataFrame:
    """The rows as a `channel` frame in its schema's column order, sorted by `available_at`."""
    frame = pd.DataFrame(rows, columns=["ticker", "available_at", *SCHEMAS[channel]])
    return frame.sort_values("available_at", kind="stable").reset_index(drop=True)


def _text_channel(rng: np.random.Generator, z: pd.DataFrame, channel: Channel, companies: dict[str, str],
                  name: str, text_column: str, templates: dict[str, tuple[str, ...]],
                  extra: Callable[[], dict]) -> pd.DataFrame:
    """A text channel: sentiment = tanh(score), a template text of its tone, and `extra()`'s columns."""
    rows = []
    for ticker, time, score in _events(rng, z, channel):
        sentiment = round(float(np.tanh(score)), 3)
        text = fill(rng, templates, sentiment, ticker, companies[ticker])
        rows.append({"ticker": ticker, "available_at": time, text_column: text, "sentiment": sentiment, **extra()})
    return record_frame(name, rows)


def news(rng: np.random.Generator, z: pd.DataFrame, channel: Channel, companies: dict[str, str]) -> pd.DataFrame:
    """The `news` channel: ticker, available_at, headline, source, sentiment."""
    return _text_channel(rng, z, channel, companies, "news", "headline", HEADLINES,
                         lambda: {"source": SOURCES[rng.integers(len(SOURCES))]})


def social(rng: np.random.Generator, z: pd.DataFrame, channel: Channel, companies: dict[str, str]) -> pd.DataFrame:
    """The `social` channel: ticker, available_at, text, sentiment, likes."""
    return _text_channel(rng, z, channel, companies, "social", "text", POSTS,
                         lambda: {"likes": float(np.floor(rng.lognormal(2.0, 1.2)))})


def insider(rng: np.random.Generator, z: pd.DataFrame, channel: Channel, close: pd.DataFrame) -> pd.DataFrame:
    """The `insider` channel: buy if the score > 0, else sell; price near the day's close."""
    rows = []
    for ticker, time, score in _events(rng, z, channel):
        name, role = INSIDERS[rng.integers(len(INSIDERS))]
        day_close = float(close[ticker].asof(time.normalize()))
        rows.append({"ticker": ticker, "available_at": time, "insider": name, "role": role,
                     "transaction": "buy" if score > 0 else "sell",
                     "shares": float(100 * np.ceil(rng.lognormal(3.0, 1.0))),
                     "price": round(day_close * (1 + 0.005 * rng.standard_normal()), 2)})
    return record_frame("insider", rows)
