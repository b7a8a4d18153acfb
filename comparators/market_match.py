"""Whether a trained comparator is served the market it was trained on.

A checkpoint's training facts hold `train_bars` = {start, end, sha256}: the SHA-256, over the
tickers of its universe in order, of each ticker's name and the float64 bytes of its open, high,
low and close over the bars dated in [start, end] (its training window). A run whose market has
other bars over that window (another data seed, another `alpha_persistence`, other stocks under the
same names) would trade with weights fitted to a market it does not show: `check_served_market`
refuses it with one line before any decision, as it refuses a checkpoint without the fact;
`ServedMarketCheck` runs it once per seed of a plugin's checkpoints.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core.errors import ConfigError
from market.view import MarketView

PRICE_COLUMNS = ("open", "high", "low", "close")


def training_bars(view: MarketView, tickers: Sequence[str], start: pd.Timestamp, end: pd.Timestamp) -> dict[str, str]:
    """The `train_bars` fact of the module docstring for the bars `view` shows in [start, end]."""
    digest = hashlib.sha256()
    for ticker in tickers:
        prices = view.bars(ticker).loc[start:end, list(PRICE_COLUMNS)].to_numpy(dtype=np.float64)
        digest.update(ticker.encode())
        digest.update(np.ascontiguousarray(prices).tobytes())
    return {"start": str(pd.Timestamp(start).date()), "end": str(pd.Timestamp(end).date()), "sha256": digest.hexdigest()}


def check_served_market(facts: Mapping, view: MarketView, tickers: Sequence[str], name: str, folder: str) -> None:
    """A ConfigError naming `folder` when `view`'s bars over the checkpoint's training window are not
    the ones it was trained on (module docstring)."""
    if "train_bars" not in facts:
        raise ConfigError(f"{name}: the checkpoint {folder} holds no record of the bars it was trained on "
                          f"(training.json has no train_bars: it predates the check): train it again")
    trained = facts["train_bars"]
    served = training_bars(view, tickers, pd.Timestamp(trained["start"]), pd.Timestamp(trained["end"]))
    if served["sha256"] != trained["sha256"]:
        raise ConfigError(f"{name}: the checkpoint {folder} was trained on other bars than this run's market shows "
                          f"over its training window {trained['start']} .. {trained['end']} (another data seed or "
                          f"market setting?): train it on this suite's market")


class ServedMarketCheck:
    """`check_served_market` once per seed of a plugin (`name`): later batches of a checked seed pass."""

    def __init__(self, name: str):
        self.name, self.checked = name, set()

    def __call__(self, seed: int, facts: Mapping, view: MarketView, tickers: Sequence[str], folder: str) -> None:
        if seed not in self.checked:
            check_served_market(facts, view, tickers, self.name, folder)
            self.checked.add(seed)
