"""Train MacroHFT: six condition sub-agents, then the hyper-agent; one checkpoint per seed.

    python -m comparators.macrohft.train --seed 0 --output outputs/train/macrohft/seed-0
    python -m comparators.macrohft.train --config configs/macrohft/cpu.yaml --seed 1 \
        --output outputs/train/macrohft/seed-1 --set sub_epochs=2 --set subagents=grid --set volatility_quantiles=[0.5]

The story (the original's `preprocess/decomposition.py`, `RL/agent/low_level.py`, `high_level.py`):

1. The market of `configs/data/<data>.yaml` up to the end of the validation window of
   `configs/split/<split>.yaml` (test bars are never read); per-bar states (`features`), scaled
   with the train split's statistics.
2. Train and validation bars cut into chunks of `chunk_bars`; each chunk labelled by trend and
   volatility with train-split quantile bins (`comparators.market_conditions`).
3. Per condition (paper: trend low/mid/high, volatility low/mid/high; grid: trend x volatility)
   a sub-agent trained on its training chunks (`subagent_training`), selected on its validation
   chunks.
4. The hyper-agent over all training chunks with the sub-agents frozen (`hyper_training`),
   selected on the whole validation window.
5. `OUTPUT/checkpoint` (`comparators.checkpoint`: weights, config with the feature scaling and
   condition bins, training facts) and `OUTPUT/log` (`comparators.training_log`: progress bar,
   log.csv, TensorBoard).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml
from omegaconf import OmegaConf

from comparators.checkpoint import save_checkpoint
from comparators.macrohft.features import StateScaling
from comparators.macrohft.hyper_training import train_hyper
from comparators.macrohft.model import MacroHFT
from comparators.macrohft.paths import Paths, build_paths
from comparators.macrohft.settings import MacroHFTSettings, load_settings
from comparators.macrohft.subagent_training import train_subagent
from comparators.market_conditions import MarketConditions, chunk_statistics
from comparators.training_log import TrainingLog
from configs import CONFIG_DIR
from core.config_keys import typed_config
from core.errors import ConfigError, MissingFileError, exit_on_user_error
from frameworks.registry import instantiate_or_explain
from market.splits import Splits

WARMUP_BARS = 480
"""Bars from the data's start before the first chunk: the longest feature window (ret480)."""

CHECKPOINT_DIR = "checkpoint"
LOG_DIR = "log"


def _config_file(group: str, name: str) -> Path:
    path = CONFIG_DIR / group / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in (CONFIG_DIR / group).glob("*.yaml")))
        raise MissingFileError(f"{group}: no config {name!r} (configs/{group}/{name}.yaml); known: {known}")
    return path


def load_market(settings: MacroHFTSettings) -> tuple[pd.DataFrame, Splits]:
    """The instrument's bars up to the end of the validation window, and the splits."""
    root = OmegaConf.create({"tickers": [settings.ticker], "data": OmegaConf.load(_config_file("data", settings.data))})
    data = instantiate_or_explain(root.data, "data")
    if settings.ticker not in data.tickers:
        raise ConfigError(f"ticker: {settings.ticker!r} is not in data {settings.data} ({', '.join(data.tickers)})")
    split_values = OmegaConf.to_container(OmegaConf.load(_config_file("split", settings.split)), resolve=True)
    splits = typed_config(Splits, split_values, f"configs/split/{settings.split}.yaml")
    frame = data.frame(settings.ticker)
    splits.check(frame.index, settings.ticker)
    return frame.loc[:splits.valid.end], splits


def conditions(settings: MacroHFTSettings) -> list[dict[str, int]]:
    """The sub-agents' conditions: label values of `trend` and/or `vol` a chunk must have."""
    trends = range(len(settings.trend_quantiles) + 1)
    vols = range(len(settings.volatility_quantiles) + 1)
    if settings.subagents == "paper":
        return [{"trend": k} for k in trends] + [{"vol": k} for k in vols]
    return [{"trend": k, "vol": v} for k in trends for v in vols]


def window_chunks(bars: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp, chunk_bars: int) -> pd.DataFrame:
    """`chunk_statistics` of the bars in [start, end] after the warm-up, with positions in `bars`."""
    offset = max(int(bars.index.searchsorted(start)), WARMUP_BARS)
    stop = int(bars.index.searchsorted(end, side="right"))
    chunks = chunk_statistics(bars["close"].iloc[offset:stop], chunk_bars)
    if chunks.empty:
        raise ConfigError(f"chunk_bars: {chunk_bars} bars make no whole chunk in {start} .. {end}")
    return chunks.assign(first=chunks["first"] + offset, last=chunks["last"] + offset)


def _matching(chunks: pd.DataFrame, condition: dict[str, int]) -> pd.DataFrame:
    mask = np.ones(len(chunks), dtype=bool)
    for column, value in condition.items():
        mask &= chunks[column].to_numpy() == value
    return chunks.loc[mask]


def train(settings: MacroHFTSettings, output: Path, progress: bool = True) -> str:
    """Train on the configured market and save one checkpoint into `output/checkpoint`; returns its fingerprint."""
    bars, splits = load_market(settings)
    return train_on(bars, splits, settings, output, progress)


def train_on(bars: pd.DataFrame, splits: Splits, settings: MacroHFTSettings, output: Path,
             progress: bool = True) -> str:
    """Steps 1-5 of the module docstring on one instrument's `bars` (no bar after the validation window)."""
    if bars.index[-1] > splits.valid.end:
        raise ConfigError(f"macrohft: training bars run past the validation window ({splits.valid.end})")
    started, cpu_started = time.monotonic(), time.process_time()
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    rng = np.random.default_rng(settings.seed)
    scaling = StateScaling.fit(bars, splits.train.start, splits.train.end)
    states = scaling.states(bars)
    close = bars["close"].to_numpy(dtype=np.float64)
    positions = np.asarray(settings.positions, dtype=np.float64)

    def paths(firsts: list[int], length: int) -> Paths:
        return build_paths(states, close, firsts, length, positions, settings.fee, settings.teacher_fee,
                           settings.reward_scale, settings.gamma)

    train_chunks = window_chunks(bars, splits.train.start, splits.train.end, settings.chunk_bars)
    valid_chunks = window_chunks(bars, splits.valid.start, splits.valid.end, settings.chunk_bars)
    bins = MarketConditions.fit(train_chunks, settings.trend_quantiles, settings.volatility_quantiles, settings.tail)
    train_chunks, valid_chunks = bins.label(train_chunks), bins.label(valid_chunks)
    agents = conditions(settings)
    dims = {"single_dim": states["single"].shape[1], "trend_dim": states["trend"].shape[1],
            "context_dim": states["context"].shape[1], "actions": len(positions), "agents": len(agents),
            "hidden": settings.hidden, "hyper_hidden": settings.hyper_hidden}
    model = MacroHFT(**dims)
    stages: dict[str, dict] = {}
    total = len(agents) * settings.sub_epochs + settings.hyper_epochs
    with TrainingLog(output / LOG_DIR, total=total, description=f"macrohft seed {settings.seed}",
                     progress=progress) as log:
        for k, condition in enumerate(agents):
            name = "sub" + "".join(f"_{c}{v}" for c, v in condition.items())
            mine = _matching(train_chunks.loc[train_chunks["core"]], condition)
            if mine.empty:
                raise ConfigError(f"macrohft: no training chunk has condition {condition}; lower chunk_bars")
            checks = _matching(valid_chunks, condition)
            checks = checks if not checks.empty else valid_chunks
            result = train_subagent(model.subagents[k], paths(mine["first"].tolist(), settings.chunk_bars),
                                    paths(checks["first"].tolist(), settings.chunk_bars), settings, log, name, rng)
            stages[name] = {"condition": condition, "train_chunks": len(mine), "valid_chunks": len(checks),
                            "best_epoch": result.best_epoch, "best_valid_reward": result.best_valid,
                            "updates": result.updates}
        valid_first = max(int(bars.index.searchsorted(splits.valid.start)), WARMUP_BARS)
        valid_path = paths([valid_first], len(bars) - valid_first)
        hyper = train_hyper(model, paths(train_chunks["first"].tolist(), settings.chunk_bars), valid_path,
                            settings, log, rng)
        stages["hyper"] = {"train_chunks": len(train_chunks), "best_epoch": hyper.best_epoch,
                           "best_valid_reward": hyper.best_valid, "updates": hyper.updates}
    config = {"model": dims, "positions": positions.tolist(), "scaling": scaling.to_dict(),
              "conditions": agents, "bins": {"trend": list(bins.trend.inner), "vol": list(bins.volatility.inner)},
              "settings": settings.model_dump(mode="json")}
    facts = {"seed": settings.seed, "train": [str(splits.train.start), str(splits.train.end)],
             "valid": [str(splits.valid.start), str(splits.valid.end)], "stages": stages,
             "wall_s": round(time.monotonic() - started, 1), "cpu_s": round(time.process_time() - cpu_started, 1),
             "load_average": [round(x, 2) for x in os.getloadavg()], "torch_threads": settings.threads}
    return save_checkpoint(output / CHECKPOINT_DIR, model, config, facts)


def _overrides(pairs: list[str]) -> dict[str, object]:
    values: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {pair!r}: expected KEY=VALUE")
        values[key.strip()] = yaml.safe_load(value)
    return values


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m comparators.macrohft.train", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=CONFIG_DIR / "macrohft" / "cpu.yaml",
                        help="settings file (default: configs/macrohft/cpu.yaml)")
    parser.add_argument("--seed", type=int, default=None, help="training seed (overrides the file's)")
    parser.add_argument("--output", type=Path, required=True, help="folder for checkpoint/ and log/")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one setting (YAML value), repeatable")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    with exit_on_user_error():
        overrides = _overrides(args.overrides) | ({"seed": args.seed} if args.seed is not None else {})
        settings = load_settings(args.config, overrides)
        fingerprint = train(settings, args.output, progress=not args.no_progress)
        print(f"wrote {args.output / CHECKPOINT_DIR} (fingerprint {fingerprint[:16]})")


if __name__ == "__main__":
    main()
