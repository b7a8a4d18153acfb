"""Train AlphaMix on a suite's market and write its checkpoint.

    python -m comparators.alphamix.train --out outputs/train/alphamix/news/seed-0 --seed 0 \
        [--suite portfolio_duel] [--channel news:sentiment] [--shuffle news_sentiment] [OVERRIDE ...]

The market, tickers and splits are the benchmark's own: the run config composed with
`+suite=SUITE` and the Hydra OVERRIDEs (e.g. `data.seed=1`), so a checkpoint is trained on the
data the suite then trades. Everything is read through a point-in-time view at the last bar
before the test window, so nothing of the test window is seen.

Stages (docs/alphamix.md):
1. the pool: one BatchEnsemble MLP expert per (learning rate, batch size, pool seed) of the
   settings, trained with Adam on cross-entropy over the train split's stock-days, each member of
   an expert on its own slice of each batch (the last incomplete batch dropped, as the original),
   `epochs` epochs, keeping the epoch with the best validation accuracy (the original kept the
   best of evaluations every 100 batches);
2. the experts ordered by validation accuracy (best first: group 1 is the best expert);
3. the router, on the train split with the experts frozen (`comparators.alphamix.router`);
4. the greedy selective ensemble on the validation split (`comparators.alphamix.selection`).

Writes FOLDER (`comparators.checkpoint`: weights, config, training facts) and FOLDER/log/
(`comparators.training_log`: progress bar, log.csv, TensorBoard). The seed fixes every draw.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from pydantic import BaseModel, ConfigDict, Field
from torch import nn

from comparators.alphamix.batch_ensemble import BatchEnsembleMLP
from comparators.alphamix.data import FeatureSpec, feature_frames, forward_returns, split_dates, windows_at
from comparators.alphamix.model import MIXTURES, AlphaMixModel
from comparators.alphamix.router import router_loss
from comparators.alphamix.selection import greedy_selection, top_k_profit
from comparators.checkpoint import save_checkpoint
from comparators.features import Standardiser
from comparators.market_match import training_bars
from comparators.training_log import TrainingLog
from configs import CONFIG_DIR
from core.config_keys import typed_config
from core.errors import ConfigError, exit_on_user_error
from frameworks.registry import instantiate_or_explain
from market.splits import Splits
from market.view import MarketView


class TrainSettings(BaseModel):
    """AlphaMix's training settings (the original's values where it has one)."""

    model_config = ConfigDict(extra="forbid")

    learning_rates: list[float] = Field(default=[5e-4, 2e-4], min_length=1)
    """The pool's learning rates (the original's pool: 5e-4 and 2e-4)."""
    batch_sizes: list[int] = Field(default=[32, 128], min_length=1)
    """The pool's batch sizes (original: 32 with 5e-4, 128 with 2e-4 on acl18); each a multiple of ensemble_size."""
    pool_seeds: int = Field(2, ge=1)
    """Experts per (learning rate, batch size) pair, each from its own seed (original: 10)."""
    hidden: int = Field(128, ge=1)
    ensemble_size: int = Field(4, ge=1)
    epochs: int = Field(8, ge=1)
    router_hidden: int = Field(32, ge=1)
    router_lr: float = Field(1e-3, gt=0)
    router_epochs: int = Field(10, ge=1)
    router_batch: int = Field(128, ge=1)
    logit_scale: float = Field(20.0, gt=0)
    threshold: float = Field(0.5, gt=0, lt=1)
    bce_weight: float = Field(1.5, gt=0)
    top_k: int = Field(4, ge=1)
    """k of the greedy selection's validation profit (the trading rule's k)."""


def market_config(suite: str, overrides: list[str]):
    """The run config of `+suite=SUITE` with `overrides` (Hydra's compose API)."""
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        return compose("config", overrides=[f"+suite={suite}", *overrides])


def train_expert(expert: nn.Module, x: torch.Tensor, y: torch.Tensor, x_valid: torch.Tensor, y_valid: torch.Tensor,
                 lr: float, batch_size: int, epochs: int, generator: torch.Generator,
                 log: TrainingLog, index: int) -> tuple[dict, float, int]:
    """(best state, its validation accuracy, its epoch) of one expert trained as the module docstring says."""
    optimizer = torch.optim.Adam(expert.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    best_state, best_accuracy, best_epoch = copy.deepcopy(expert.state_dict()), -1.0, 0
    for epoch in range(1, epochs + 1):
        expert.train()
        order = torch.randperm(len(y), generator=generator)
        losses = []
        for start in range(0, len(order) - batch_size + 1, batch_size):
            rows = order[start:start + batch_size]
            loss = loss_fn(expert.split_logits(x[rows]), y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        expert.eval()
        with torch.no_grad():
            accuracy = float((expert.mean_logits(x_valid).argmax(dim=-1) == y_valid).float().mean())
        log.step(expert=index, epoch=epoch, train_loss=float(np.mean(losses)) if losses else float("nan"),
                 valid_accuracy=accuracy)
        if accuracy > best_accuracy:
            best_state, best_accuracy, best_epoch = copy.deepcopy(expert.state_dict()), accuracy, epoch
    return best_state, best_accuracy, best_epoch


def train_router(model: AlphaMixModel, x: torch.Tensor, last: torch.Tensor, y: torch.Tensor,
                 settings: TrainSettings, generator: torch.Generator, log: TrainingLog) -> float:
    """Train `model.router` on the frozen experts' logits; returns the last epoch's mean loss."""
    with torch.no_grad():
        groups = model.group_logits(x)
    optimizer = torch.optim.Adam(model.router.parameters(), lr=settings.router_lr)
    mean_loss = float("nan")
    for epoch in range(1, settings.router_epochs + 1):
        order = torch.randperm(len(y), generator=generator)
        losses = []
        for start in range(0, len(order), settings.router_batch):
            rows = order[start:start + settings.router_batch]
            loss = router_loss(model.router, last[rows], groups[:, rows], y[rows], settings.bce_weight)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        mean_loss = float(np.mean(losses))
        log.step(router_epoch=epoch, router_loss=mean_loss)
    return mean_loss


def mixture_scores(model: AlphaMixModel, windows, top_k: int) -> dict[str, dict[str, float]]:
    """Per mixture rule, validation accuracy, top-k profit (mean daily, no fees) and mean experts used."""
    t, n, _ = windows.x.shape
    x = torch.from_numpy(windows.x.reshape(t * n, -1))
    last = torch.from_numpy(windows.last.reshape(t * n, -1))
    known = ~np.isnan(windows.returns)
    scores = {}
    for mixture in MIXTURES:
        up, used = model.predict(x, last, mixture)
        up = up.numpy().reshape(t, n)
        accuracy = float(((up >= 0.5) == (windows.returns >= 0))[known].mean())
        scores[mixture] = {"valid_accuracy": accuracy,
                           "valid_top_k_profit": top_k_profit(up, np.nan_to_num(windows.returns), top_k),
                           "experts_used": float(used.float().mean())}
    return scores


def train(out: Path, seed: int, suite: str, overrides: list[str], spec: FeatureSpec, settings: TrainSettings,
          threads: int, progress: bool = True) -> str:
    """Train and write the checkpoint into `out`; returns its fingerprint."""
    bad = [b for b in settings.batch_sizes if b % settings.ensemble_size]
    if bad:
        raise ConfigError(f"batch sizes {bad}: each must be a multiple of ensemble_size {settings.ensemble_size}")
    started, cpu_started, load_before = time.perf_counter(), time.process_time(), os.getloadavg()[0]
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    cfg = market_config(suite, overrides)
    if cfg.task.name != "portfolio":
        raise ConfigError(f"suite {suite}: AlphaMix trains for the portfolio task, the suite's task is {cfg.task.name}")
    splits = typed_config(Splits, OmegaConf.to_container(cfg.split, resolve=True), "split")
    data = instantiate_or_explain(cfg.data, "data")
    tickers = [str(t) for t in cfg.tickers]
    calendar = data.frame(tickers[0]).index
    before_test = calendar[calendar < splits.test.start]
    if len(before_test) == 0:
        raise ConfigError(f"split: no bar before the test window starts {splits.test.start.date()}")
    view = MarketView(data, before_test[-1])
    frames = feature_frames(view, tickers, spec)
    scaler = Standardiser.fit(list(frames.values()), splits.train.start, splits.train.end)
    returns = {name: forward_returns(view, name) for name in tickers}
    train_windows = windows_at(frames, split_dates(view, tickers, splits.train.start, splits.train.end),
                               spec, scaler, returns)
    valid_windows = windows_at(frames, split_dates(view, tickers, splits.valid.start, splits.valid.end),
                               spec, scaler, returns)
    x, last, y = (torch.from_numpy(a) for a in train_windows.flat())
    xv, _, yv = (torch.from_numpy(a) for a in valid_windows.flat())
    pool = [(lr, batch, k) for lr in settings.learning_rates for batch in settings.batch_sizes
            for k in range(settings.pool_seeds)]
    config = {"input_size": int(x.shape[1]), "feature_size": int(last.shape[1]), "hidden": settings.hidden,
              "ensemble_size": settings.ensemble_size, "experts": len(pool), "router_hidden": settings.router_hidden,
              "logit_scale": settings.logit_scale, "threshold": settings.threshold, "greedy": [],
              "features": {"spec": spec.to_dict(), "standardiser": scaler.to_dict()}}
    total = len(pool) * settings.epochs + settings.router_epochs
    experts = []
    log_folder = out.with_name(f"{out.name}.log-partial")
    shutil.rmtree(log_folder, ignore_errors=True)
    with TrainingLog(log_folder, total=total, description=f"alphamix seed {seed}", progress=progress) as log:
        for index, (lr, batch, k) in enumerate(pool):
            torch.manual_seed(seed * 1000 + index)
            generator = torch.Generator().manual_seed(seed * 1000 + index)
            expert = BatchEnsembleMLP(config["input_size"], settings.hidden, settings.ensemble_size)
            state, accuracy, epoch = train_expert(expert, x, y, xv, yv, lr, batch, settings.epochs, generator, log, index)
            experts.append({"state": state, "lr": lr, "batch_size": batch, "pool_seed": k,
                            "valid_accuracy": accuracy, "best_epoch": epoch})
        experts.sort(key=lambda e: -e["valid_accuracy"])
        torch.manual_seed(seed)
        model = AlphaMixModel(config)
        for module, expert in zip(model.experts, experts):
            module.load_state_dict(expert["state"])
        model.eval()
        router_final = train_router(model, x, last, y, settings, torch.Generator().manual_seed(seed), log)
        model.eval()
        t, n, _ = valid_windows.x.shape
        with torch.no_grad():
            valid_logits = model.group_logits(torch.from_numpy(valid_windows.x.reshape(t * n, -1)))
        greedy = greedy_selection(valid_logits.reshape(len(pool), t, n, 2), np.nan_to_num(valid_windows.returns),
                                  settings.top_k)
        model.config["greedy"] = greedy
        config["greedy"] = greedy
        scores = mixture_scores(model, valid_windows, settings.top_k)
        for mixture, values in scores.items():
            log.scalars(total, **{f"{mixture}_{name}": value for name, value in values.items()})
    facts = {
        "seed": seed, "suite": suite, "overrides": overrides, "tickers": tickers,
        "train": [str(splits.train.start.date()), str(splits.train.end.date())],
        "valid": [str(splits.valid.start.date()), str(splits.valid.end.date())],
        "samples": {"train": int(len(y)), "valid": int(len(yv))},
        "settings": settings.model_dump(),
        "experts": [{key: value for key, value in e.items() if key != "state"} for e in experts],
        "router_loss": router_final, "greedy": greedy, "mixtures": scores,
        "data": OmegaConf.to_container(cfg.data, resolve=True),
        "train_bars": training_bars(view, tickers, splits.train.start, splits.train.end),
        "train_wall_s": round(time.perf_counter() - started, 2),
        "train_cpu_s": round(time.process_time() - cpu_started, 2),
        "torch_threads": threads, "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    return save_checkpoint(out, model, config, facts, include={"log": log_folder})


def parse_channels(values: list[str]) -> dict[str, str]:
    """["news:sentiment", ...] → {"news": "sentiment"}; a malformed entry is one ConfigError line."""
    channels = {}
    for value in values:
        channel, sep, column = value.partition(":")
        if not sep or not channel or not column:
            raise ConfigError(f"--channel {value!r}: write CHANNEL:FIELD, e.g. news:sentiment")
        channels[channel] = column
    return channels


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m comparators.alphamix.train", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="checkpoint folder to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--suite", default="portfolio_duel", help="the suite whose market, tickers and splits to use")
    parser.add_argument("--channel", action="append", default=[], metavar="CHANNEL:FIELD",
                        help="a record channel feature, e.g. news:sentiment (repeatable; default none)")
    parser.add_argument("--shuffle", action="append", default=[], metavar="COLUMN",
                        help="a channel column to shuffle across stocks each day: the control (e.g. news_sentiment)")
    parser.add_argument("--window", type=int, default=10, help="days of features an expert reads")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a TrainSettings field, e.g. --set epochs=4 --set learning_rates=[1e-3]")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of the run config, e.g. data.seed=1")
    args = parser.parse_args(argv)
    with exit_on_user_error():
        values = {key: OmegaConf.create(f"v: {value}").v for key, _, value in (s.partition("=") for s in args.set)}
        settings = typed_config(TrainSettings, OmegaConf.to_container(OmegaConf.create(values)), "--set")
        spec = FeatureSpec(window=args.window, channels=parse_channels(args.channel), shuffled=tuple(args.shuffle),
                           shuffle_seed=1_000_003 + args.seed)
        printed = train(args.out, args.seed, args.suite, list(args.overrides), spec, settings, args.threads,
                        progress=not args.no_progress)
    print(f"wrote {args.out} (fingerprint {printed[:16]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
