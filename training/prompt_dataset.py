"""The training prompts: one per (ticker, day) of a window, with the day's regime label.

The label is the reward's (`single_agent.rewards.regime_label`: the regime of the weighted
forward return over H bars after the fill day, computed on the ticker's whole close series, so a
day near the window's end may look into the gap after it). Days without the full horizon have no
label and are left out. Each row holds what GRPO needs: `prompt` (the episode's system and user
messages), `ticker`, `date` (YYYY-MM-DD) and `regime`.

With `balanced_regimes` each regime keeps as many days as the rarest one (a seeded draw). On
balanced labels every constant answer has the same expected R_result (−1/6 with the paper's
matrix), so GRPO gains nothing from a prior such as "BUY, the market mostly rises" and only
from answers that depend on what the episode read.
"""

from __future__ import annotations

import pandas as pd
from datasets import Dataset

from market.data import MarketData
from market.splits import Window
from single_agent.episode import Episode
from single_agent.protocol import Protocol
from single_agent.rewards import RewardConfig, regime_label


def labelled_days(data: MarketData, tickers: list[str], window: Window, reward: RewardConfig) -> pd.DataFrame:
    """Columns ticker, date (Timestamp), regime: every labelled trading day of `window`, tickers in order."""
    rows = []
    for ticker in tickers:
        close = data.frame(ticker)["close"]
        for day in data.trading_days(ticker, window.start, window.end):
            regime = regime_label(close, day, reward)
            if regime is not None:
                rows.append((ticker, day, regime))
    return pd.DataFrame(rows, columns=["ticker", "date", "regime"])


def balanced_regimes(days: pd.DataFrame, seed: int) -> pd.DataFrame:
    """`days` with every regime cut to the rarest regime's count (seeded draw), in their original order."""
    rarest = int(days["regime"].value_counts().min())
    kept = days.groupby("regime", group_keys=False).sample(n=rarest, random_state=seed)
    return days.loc[sorted(kept.index)].reset_index(drop=True)


def prompt_dataset(days: pd.DataFrame, protocol: Protocol) -> Dataset:
    """The GRPO dataset of `labelled_days`: prompt, ticker, date, regime per row."""
    return Dataset.from_list([
        {"prompt": Episode.start(protocol, row.ticker, row.date).prompt, "ticker": row.ticker,
         "date": f"{row.date:%Y-%m-%d}", "regime": row.regime}
        for row in days.itertuples(index=False)
    ])
