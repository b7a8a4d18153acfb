"""A tiny MacroHFT training on a short synthetic minute market, for the MacroHFT tests."""

from __future__ import annotations

from pathlib import Path

from comparators.macrohft.settings import MacroHFTSettings
from comparators.macrohft.train import train_on
from market.data import MarketData
from market.splits import Splits
from market.synthetic.intraday import generate_intraday

TINY = {"chunk_bars": 256, "tail": 0.0, "hidden": 8, "hyper_hidden": 8, "sub_epochs": 1, "hyper_epochs": 1,
        "batch_size": 32, "updates_per_transition": 0.01, "memory_capacity": 64, "buffer_size": 5000}


def tiny_market() -> MarketData:
    """6,000 one-minute bars: train 0 .. 3,399, valid 3,500 .. 4,499, test 4,600 .. 5,999."""
    return generate_intraday(tickers=["SYN"], bars=6000, seed=5)


def tiny_splits(market: MarketData) -> Splits:
    index = market.frame("SYN").index
    return Splits(train={"start": index[0], "end": index[3399]}, valid={"start": index[3500], "end": index[4499]},
                  test={"start": index[4600], "end": index[-1]})


def tiny_checkpoint(folder: Path, seed: int = 0, **settings) -> Path:
    """Train the tiny MacroHFT into `folder`; returns its checkpoint folder."""
    market = tiny_market()
    splits = tiny_splits(market)
    bars = market.frame("SYN").loc[:splits.valid.end]
    train_on(bars, splits, MacroHFTSettings(ticker="SYN", seed=seed, **{**TINY, **settings}), folder, progress=False)
    return folder / "checkpoint"
