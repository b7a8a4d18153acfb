"""Train one EarnMore policy: `python -m comparators.earnmore.train --seed 0 --out FOLDER`.

The market, the universe, the training window and the fee are those of a suite (`--suite`,
default `earnmore`: the synthetic sector universe), composed with Hydra as `run_benchmark.py`
composes it (`--override KEY=VALUE` for any of its keys, e.g. `data.seed=1`). The training
window is the suite's `split.train`; the features are computed on the view at its last bar and
standardised on its bars only. Every field of `agent.EarnMoreSettings` is a flag
(`--timesteps 6000`, `--channels news:sentiment`, `--channels` alone for OHLCV only,
`--shuffle-seed 7` for the shuffled-channel control).

Writes FOLDER/checkpoint (`weights.pt`, `config.json`, `training.json`: `comparators.checkpoint`)
and FOLDER/log (`log.csv` and `tensorboard/`: `comparators.training_log`):
every `--log-every` environment steps the mean reward, log return, turnover and weight on masked
stocks of those steps, and SAC's latest losses (critic, actor, entropy coefficient) with the
reconstruction loss and the masked-weight penalty. Every `--select-every` steps (default 2,000;
0: off) the policy is scored on the suite's validation split and the best-scoring weights are the
checkpoint's (`selection`: the deterministic policy's daily log return over equal weight's, net of
fees). `training.json` has the seed, the window, wall and CPU seconds, the first and last logged
reconstruction losses, and the selection curve with the selected step.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from hydra import compose, initialize_config_module
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.callbacks import BaseCallback

from comparators.checkpoint import save_checkpoint
from comparators.earnmore.agent import EarnMoreSettings
from comparators.earnmore.data import split_arrays
from comparators.earnmore.env import PoolEnv
from comparators.earnmore.model import MaskRatio
from comparators.earnmore.policy import EarnMorePolicy, EarnMoreSAC, TokenExtractor
from comparators.earnmore.selection import SelectionCallback
from comparators.features import Standardiser
from comparators.market_match import training_bars
from comparators.training_log import TrainingLog
from pydantic import ValidationError

from core.errors import ConfigError, exit_on_user_error, one_line
from frameworks.registry import instantiate_or_explain
from frameworks.rl.training import library_versions, single_threaded_torch
from market.view import MarketView

SAC_SCALARS = ("train/critic_loss", "train/actor_loss", "train/ent_coef", "train/reconstruction_loss",
               "train/masked_weight")
"""SB3 logger values copied into the training log."""

CHECKPOINT_DIR = "checkpoint"
"""The checkpoint's folder inside the training run's folder."""


class LogCallback(BaseCallback):
    """Every `every` steps, one row of the training log (module docstring)."""

    def __init__(self, log: TrainingLog, every: int):
        super().__init__()
        self.log, self.every = log, every
        self.window: dict[str, list[float]] = {"reward": [], "log_return": [], "turnover": [], "masked_weight_env": []}
        self.reconstruction: list[float] = []

    def _on_step(self) -> bool:
        info = self.locals["infos"][0]
        self.window["reward"].append(float(self.locals["rewards"][0]))
        self.window["log_return"].append(info["log_return"])
        self.window["turnover"].append(info["turnover"])
        self.window["masked_weight_env"].append(info["masked_weight"])
        if self.num_timesteps % self.every == 0:
            values = {name: float(np.mean(v)) for name, v in self.window.items()}
            logged = self.model.logger.name_to_value
            values |= {name.split("/")[1]: float(logged[name]) for name in SAC_SCALARS if name in logged}
            if "reconstruction_loss" in values:
                self.reconstruction.append(values["reconstruction_loss"])
            self.log.step(**values)
            self.window = {name: [] for name in self.window}
        return True


def run_config(suite: str, overrides: Sequence[str]) -> DictConfig:
    """The run config of `+suite=<suite>` with `overrides`, as run_benchmark.py composes it."""
    with initialize_config_module(config_module="configs", version_base="1.3"):
        return compose(config_name="config", overrides=[f"+suite={suite}", *overrides])


def train(settings: EarnMoreSettings, cfg: DictConfig, seed: int, out: Path, log_every: int = 100,
          progress: bool = True) -> dict[str, Any]:
    """Train on the suite's market and training window; write `out`/checkpoint and `out`/log; the facts."""
    tickers = [str(t) for t in cfg.tickers]
    data = instantiate_or_explain(cfg.data, "data")
    start, end = pd.Timestamp(cfg.split.train.start), pd.Timestamp(cfg.split.train.end)
    view = MarketView(data, data.trading_days(tickers[0], start, end)[-1])
    windows, opens, standardiser, dates = split_arrays(view, tickers, settings.channels, settings.days,
                                                       start, end, settings.shuffle_seed)
    env = PoolEnv(windows, opens, fee=settings.fee, temperature=settings.temperature, horizon=settings.horizon,
                  reward_scale=settings.reward_scale,
                  mask_ratio=MaskRatio(settings.mask_mean, settings.mask_std, settings.mask_low, settings.mask_high),
                  cash=settings.cash, excess=settings.excess)
    wall, cpu = time.perf_counter(), time.process_time()
    with single_threaded_torch(), TrainingLog(out / "log", total=settings.timesteps // log_every,
                                              description=f"earnmore seed {seed}", progress=progress) as log:
        model = EarnMoreSAC(
            EarnMorePolicy, env, seed=seed, device="cpu", learning_rate=settings.learning_rate,
            buffer_size=settings.buffer_size, learning_starts=settings.learning_starts,
            batch_size=settings.batch_size, tau=settings.tau, gamma=settings.gamma,
            train_freq=settings.train_freq, ent_coef=f"auto_{settings.ent_coef_init}",
            temperature=settings.temperature, rec_weight=settings.rec_weight, beta_weight=settings.beta_weight,
            aux_lr=settings.aux_learning_rate, cash=settings.cash, final_lr_fraction=settings.final_lr_fraction,
            policy_kwargs={"features_extractor_class": TokenExtractor,
                           "features_extractor_kwargs": settings.extractor_kwargs(),
                           "share_features_extractor": settings.shared_encoder, "hidden": settings.hidden})
        callback = LogCallback(log, log_every)
        selection = selection_callback(settings, cfg, data, tickers, standardiser, log, log_every)
        model.learn(total_timesteps=settings.timesteps, callback=[callback, selection] if selection else callback)
        selected = selection.restore() if selection else None
    config = {**settings.model_dump(), "tickers": tickers, "n_features": int(windows.shape[-1]),
              "standardiser": standardiser.to_dict()}
    facts = {"seed": seed, "suite": str(cfg.name), "train": {"start": str(dates[0].date()), "end": str(dates[-1].date()),
                                                             "bars": len(dates)},
             "data": OmegaConf.to_container(cfg.data, resolve=True),
             "train_wall_s": round(time.perf_counter() - wall, 1), "train_cpu_s": round(time.process_time() - cpu, 1),
             "reconstruction_loss": {"first": callback.reconstruction[0] if callback.reconstruction else None,
                                     "last": callback.reconstruction[-1] if callback.reconstruction else None},
             "train_bars": training_bars(view, tickers, start, end),
             "selection": selected, "libraries": library_versions()}
    facts["fingerprint"] = save_checkpoint(out / CHECKPOINT_DIR, model.policy, config, facts)
    return facts


def selection_callback(settings: EarnMoreSettings, cfg: DictConfig, data: Any, tickers: list[str],
                       standardiser: Standardiser, log: TrainingLog, log_every: int) -> SelectionCallback | None:
    """The validation-split scorer (`selection`) on the suite's `split.valid`, standardised with the
    training statistics; None when `select_every` is 0."""
    if not settings.select_every:
        return None
    start, end = pd.Timestamp(cfg.split.valid.start), pd.Timestamp(cfg.split.valid.end)
    view = MarketView(data, data.trading_days(tickers[0], start, end)[-1])
    windows, opens, _, _ = split_arrays(view, tickers, settings.channels, settings.days, start, end,
                                        settings.shuffle_seed, standardiser)
    return SelectionCallback(windows, opens, settings.fee, settings.temperature, settings.cash, settings.select_every,
                             log, log_every)


def settings_parser() -> argparse.ArgumentParser:
    """The command line: --seed, --out, --suite, --override, --log-every, --no-progress and a flag per setting."""
    parser = argparse.ArgumentParser(prog="python -m comparators.earnmore.train", description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="run folder: writes OUT/checkpoint and OUT/log")
    parser.add_argument("--suite", default="earnmore", help="suite whose market, tickers, split and fee to train on")
    parser.add_argument("--override", action="append", default=[], help="a Hydra override of the run config")
    parser.add_argument("--log-every", type=int, default=100, help="environment steps per training-log row")
    parser.add_argument("--no-progress", action="store_true")
    for name, field in EarnMoreSettings.model_fields.items():
        flag = "--" + name.replace("_", "-")
        if name == "channels":
            parser.add_argument(flag, nargs="*", metavar="CHANNEL:FIELD", help="record channels as features")
        elif isinstance(field.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=field.description)
        elif name == "shuffle_seed":
            parser.add_argument(flag, type=int, help=field.description)
        else:
            parser.add_argument(flag, type=type(field.default), help=field.description)
    return parser


def parse_settings(args: argparse.Namespace) -> EarnMoreSettings:
    """The settings the flags give (defaults elsewhere); a malformed --channels entry is one line."""
    given = {name: getattr(args, name) for name in EarnMoreSettings.model_fields if getattr(args, name) is not None}
    if "channels" in given:
        pairs = [entry.split(":") for entry in given["channels"]]
        if any(len(pair) != 2 for pair in pairs):
            raise ConfigError(f"--channels: write CHANNEL:FIELD, e.g. news:sentiment (got {' '.join(given['channels'])})")
        given["channels"] = dict(pairs)
    try:
        return EarnMoreSettings(**given)
    except ValidationError as error:
        raise ConfigError(f"earnmore settings: {one_line(error)}") from None


def main(argv: Sequence[str] | None = None) -> None:
    args = settings_parser().parse_args(argv)
    settings = parse_settings(args)
    cfg = run_config(args.suite, args.override)
    fee = float(cfg.task.get("fee_bps", settings.fee * 1e4)) / 1e4
    if args.fee is None:
        settings = settings.model_copy(update={"fee": fee})
    facts = train(settings, cfg, args.seed, args.out, args.log_every, progress=not args.no_progress)
    print(f"earnmore: seed {args.seed} trained in {facts['train_wall_s']} s (CPU {facts['train_cpu_s']} s); "
          f"checkpoint {args.out / CHECKPOINT_DIR} (fingerprint {facts['fingerprint'][:12]})")


if __name__ == "__main__":
    with exit_on_user_error():
        main()
