"""Train FineFT on the futures task's data: `python -m comparators.fineft.train --seed 0 --out DIR [OVERRIDES]`.

The market, splits and futures rules come from a suite's config (`--suite futures_intraday`: the
synthetic minute market; `--suite futures`: the embedded bitcoin 15-minute bars), composed with
Hydra as `run_benchmark.py` composes it; trailing Hydra overrides change it (`data.bars=60000`).
The three stages run in turn on the first ticker's decision steps (`steps`: 15-minute steps):

1. the reward table and the DP teacher (`comparators.dp_teacher`, same grid, fee, γ and scale) of
   the training split; the ensemble pretrained on the DP-optimal and the trend rule's rollouts,
   then trained with the selective ensemble-TD update (`stage_one`);
2. per market dynamic the best learner on validation and a VAE on its training states (`stage_two`);
3. the routing threshold and conservative policy tuned on validation (`stage_three`).

Writes `DIR/checkpoint/` (`comparators.checkpoint`: weights, config, training facts) and the
training log `DIR/log/` (progress bar, log.csv, TensorBoard). Torch runs single-threaded and every
random draw comes from `--seed`, so a seed retrains to the same weights.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from hydra import compose, initialize_config_module
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from comparators.checkpoint import save_checkpoint
from comparators.dp_teacher import dp_teacher
from comparators.features import Standardiser
from comparators.fineft.dynamics import Dynamics
from comparators.fineft.evaluation import play, summary
from comparators.fineft.policy import FineFTModel
from comparators.fineft.positions import POSITION_COUNT, nearest_position, position_grid
from comparators.fineft.rewards import funding_per_bar, reward_table
from comparators.fineft.stage_one import StageOne, StageOneSettings, Transitions, path_transitions
from comparators.fineft.stage_three import tune_routing
from comparators.fineft.stage_two import VaeSettings, fit_dynamic_vaes, learner_rewards, select_learners
from comparators.fineft.state import LOOKBACK, STATE_FEATURES, state_table
from comparators.fineft.steps import step_bars
from comparators.training_log import TrainingLog
from core.errors import ConfigError, exit_on_user_error
from frameworks.baselines.futures_rules import TrendFollowing
from harness.tasks.futures import FuturesConfig, funding_rates
from market.splits import Window

MIN_STEPS = 64
"""The fewest decision steps a training or validation split may have."""
CHECKPOINT_DIR = "checkpoint"
LOG_DIR = "log"


@dataclass(frozen=True)
class FineFTSettings:
    """Everything a training run reads besides the data (module docstring); saved in the checkpoint."""

    seed: int = 0
    learners: int = 7
    hidden: int = 64
    vae_latent: int = 4
    vae_hidden: int = 32
    reward_scale: float = 1000.0
    chunk_bars: int = 48
    trend_inner: tuple[float, ...] = (0.35, 0.65)
    volatility_inner: tuple[float, ...] = (0.5,)
    rule_fast: int = 16
    rule_slow: int = 64
    rule_leverage: float = 1.0
    step_minutes: int = 15
    stage_one: StageOneSettings = field(default_factory=StageOneSettings)
    vae: VaeSettings = field(default_factory=VaeSettings)


@dataclass
class Split:
    """One split of one instrument: its step bars, standardised states and funding per step."""

    bars: pd.DataFrame
    states: np.ndarray
    funding: np.ndarray


def compose_suite(suite: str, overrides: list[str]) -> DictConfig:
    """The run config of `+suite=<suite>` with `overrides`, as run_benchmark.py composes it."""
    with initialize_config_module(config_module="configs", version_base="1.3"):
        return compose(config_name="config", overrides=[f"+suite={suite}", *overrides])


def window_end(window: Window, daily: bool) -> pd.Timestamp:
    """The last stamp of `window`: its end, or on intraday bars the end day's last instant (as the task's episodes)."""
    return window.end if daily else window.end + pd.Timedelta(days=1) - pd.Timedelta(1, "ns")


def split_of(bars: pd.DataFrame, table: pd.DataFrame, standardiser: Standardiser, start: pd.Timestamp,
             end: pd.Timestamp, rates: pd.Series, hours: float, name: str) -> Split:
    """Step bars in [start, end] that have `LOOKBACK` steps of history before them, with their states."""
    inside = (bars.index >= start) & (bars.index <= end)
    inside[:LOOKBACK] = False
    if inside.sum() < MIN_STEPS:
        raise ConfigError(f"split.{name}: {int(inside.sum())} decision steps with {LOOKBACK} steps of history "
                          f"before them; FineFT needs at least {MIN_STEPS}")
    own = bars[inside]
    return Split(own, standardiser.transform(table[inside]), funding_per_bar(own.index, rates, hours))


def train(suite: str, overrides: list[str], settings: FineFTSettings, out: Path, progress: bool = True) -> dict:
    """Run the three stages (module docstring) and save the checkpoint into `out`; the training facts."""
    started, cpu_started = time.monotonic(), time.process_time()
    torch.set_num_threads(1)
    torch.manual_seed(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    cfg = compose_suite(suite, overrides)
    task = FuturesConfig(**{k: v for k, v in OmegaConf.to_container(cfg.task, resolve=True).items() if k != "name"})
    market = instantiate(cfg.data)
    ticker = str(cfg.tickers[0])
    minute_bars = market.frame(ticker)
    bars = step_bars(minute_bars, settings.step_minutes)
    rates = funding_rates(market, ticker)
    windows = {name: Window.model_validate(dict(cfg.split[name])) for name in ("train", "valid")}
    bounds = {name: (w.start, window_end(w, market.calendar.daily)) for name, w in windows.items()}
    table = state_table(bars, task.funding_hours)
    standardiser = Standardiser.fit([table.iloc[LOOKBACK:]], *bounds["train"])
    splits = {name: split_of(bars, table, standardiser, *bounds[name], rates, task.funding_hours, name)
              for name in windows}
    grid = position_grid(task.max_leverage, POSITION_COUNT)
    flat = POSITION_COUNT // 2
    one = settings.stage_one
    rewards = {name: reward_table(s.bars, s.funding, grid, task, settings.reward_scale) for name, s in splits.items()}

    train_split = splits["train"]
    teacher = dp_teacher(train_split.bars["close"].to_numpy(), grid, task.fee_bps / 1e4, one.gamma, settings.reward_scale)
    rule = TrendFollowing(settings.rule_fast, settings.rule_slow, settings.rule_leverage)
    rule_path = nearest_position(rule.targets(train_split.bars["close"]).to_numpy()[:-1], grid)
    demonstrations = np.concatenate([path_transitions(teacher.optimal_path(flat), flat), path_transitions(rule_path, flat)])

    dynamics = Dynamics.fit(train_split.bars["close"], settings.chunk_bars, settings.trend_inner, settings.volatility_inner)
    model = FineFTModel(len(STATE_FEATURES), grid, settings.learners, dynamics.count, settings.hidden,
                        settings.vae_latent, settings.vae_hidden)
    total = one.pretrain_steps + one.train_steps + dynamics.count * settings.vae.epochs
    with TrainingLog(out / LOG_DIR, total=total, description="fineft", progress=progress) as log:
        data = Transitions(torch.as_tensor(train_split.states), rewards["train"],
                           torch.as_tensor(teacher.q, dtype=torch.float32), flat)
        stage = StageOne(model.ensemble, data, one, rng, lambda phase, step, values: log.step(
            **{f"{phase}/{k}": v for k, v in values.items()}))
        stage.pretrain(demonstrations)
        stage.train()

        valid = splits["valid"]
        x_valid = valid.states
        labels = {name: dynamics.labels(s.bars["close"]) for name, s in splits.items()}
        q_valid = model.q_all(x_valid)
        chosen, scores = select_learners(learner_rewards(q_valid, rewards["valid"], flat), labels["valid"], dynamics.count)
        model.chosen.copy_(torch.as_tensor(chosen))
        counts = fit_dynamic_vaes(model, train_split.states, labels["train"], settings.vae, generator, rng,
                                  lambda k, epoch, loss: log.step(**{f"vae{k}/neg_elbo": loss}))
        tables = (q_valid, model.quantiles(x_valid))
        cells = tune_routing(model, tables, minute_bars, rates, task, valid.bars.index)
        validation = {routing: summary(play(minute_bars, rates, task, valid.bars.index, grid[model.path(tables, routing)[0]]))
                      for routing in ("vae", "dynamics", "ensemble")}
        log.scalars(total, **{f"valid/{r}_{k}": v for r, facts in validation.items() for k, v in facts.items()})

    config = {"features": len(STATE_FEATURES), "state_features": list(STATE_FEATURES), "grid": grid.tolist(),
              "learners": settings.learners, "dynamics": dynamics.count, "hidden": settings.hidden,
              "vae_latent": settings.vae_latent, "vae_hidden": settings.vae_hidden,
              "conservative": model.conservative, "funding_hours": task.funding_hours,
              "step_minutes": settings.step_minutes,
              "standardiser": standardiser.to_dict()}
    load = os.getloadavg()
    facts = {"seed": settings.seed, "suite": suite, "overrides": overrides, "ticker": ticker,
             "train": [str(v) for v in bounds["train"]], "valid": [str(v) for v in bounds["valid"]],
             "settings": asdict(settings), "wall_s": round(time.monotonic() - started, 1),
             "cpu_s": round(time.process_time() - cpu_started, 1),
             "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
             "load_average": [round(x, 2) for x in load], "chosen": chosen.tolist(),
             "learner_scores": scores.round(3).tolist(), "dynamic_train_states": counts,
             "threshold": float(model.threshold), "conservative": model.conservative, "routing_grid": cells, "validation": validation}
    facts["fingerprint"] = save_checkpoint(out / CHECKPOINT_DIR, model, config, facts)
    return facts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m comparators.fineft.train", description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="futures_intraday", help="suite whose data, split and task to train on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="output folder (checkpoint/ and log/)")
    parser.add_argument("--learners", type=int, default=7)
    parser.add_argument("--pretrain-steps", type=int, default=StageOneSettings.pretrain_steps)
    parser.add_argument("--train-steps", type=int, default=StageOneSettings.train_steps)
    parser.add_argument("--vae-epochs", type=int, default=VaeSettings.epochs)
    parser.add_argument("--step-minutes", type=int, default=FineFTSettings.step_minutes,
                        help="decide every this many minutes, hold in between (comparators/fineft/steps.py)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (the log files are written)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of the suite's config, e.g. data.bars=60000")
    args = parser.parse_args(argv)
    if args.learners < 2:
        parser.error("--learners must be at least 2")
    settings = FineFTSettings(seed=args.seed, learners=args.learners, step_minutes=args.step_minutes,
                              stage_one=StageOneSettings(pretrain_steps=args.pretrain_steps, train_steps=args.train_steps),
                              vae=VaeSettings(epochs=args.vae_epochs))
    with exit_on_user_error():
        facts = train(args.suite, list(args.overrides), settings, args.out, progress=not args.no_progress)
    print(f"fineft: checkpoint {args.out / CHECKPOINT_DIR} ({facts['wall_s']} s wall, {facts['cpu_s']} s CPU, "
          f"load {facts['load_average'][0]}); fingerprint {facts['fingerprint'][:12]}; routing threshold "
          f"{facts['threshold']}, conservative policy {facts['conservative']}")


if __name__ == "__main__":
    main()
