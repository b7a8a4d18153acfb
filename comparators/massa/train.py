"""Train MASSA or one of its controls on the training window of a portfolio suite.

    python -m comparators.massa.train --config massa --seed 0 --out outputs/train/massa/massa/seed-0
        [--suite massa] [--set episodes=10 --set entropy_coef=0.05] [--threads 1] [--no-progress]
    python -m comparators.massa.train --config massa --seed 0 1 2 --out "outputs/train/massa/massa/seed-{seed}"

Several seeds train one after another in one process (the market is built once); `--out` then
names each run's folder with `{seed}`.

`--config NAME` is `configs/massa/NAME.yaml` on top of `configs/massa/massa.yaml` (a control
changes a few keys of the method's settings); `--set key=value` overrides one field of
`MassaConfig`. The market, the universe, the windows and the task's rules are the suite's
(`configs/suite/<suite>.yaml`, composed with Hydra as the benchmark composes it), so training and
the benchmark trade the same universe under the same fills and fees.

Each episode is a random stretch of `episode_bars` bars of the training window, started from
cash; after `warmup_steps` random steps every `update_every` environment steps make one update
of critics, signal and actors (`learner`). Every `eval_every` episodes the policy is rolled out greedily on
the validation window and the best rollout (highest summed reward) is kept. Written into OUT:
`policy/` (the checkpoint: the executed policy and its config, `comparators.checkpoint`), `log/`
(`log.csv` one row per episode and per evaluation, `tensorboard/`). Wall and CPU seconds and the
load average go into the checkpoint's training facts.
"""

from __future__ import annotations

import argparse
import copy
import os
import time
from pathlib import Path

import numpy as np
import torch
import yaml
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from comparators.checkpoint import save_checkpoint
from comparators.massa.agent import policy_config
from comparators.massa.config import MassaConfig
from comparators.massa.env import Market, MassaEnv
from comparators.massa.inputs import InputScaling, view_bars, window_market
from comparators.massa.learner import Learner, Policy, ReplayBuffer
from comparators.massa.observations import CONTEXT_WIDTH, SLEEVE_FEATURES
from comparators.training_log import TrainingLog
from configs import CONFIG_DIR
from core.config_keys import typed_config
from core.errors import ConfigError, MissingFileError, exit_on_user_error
from harness.tasks.portfolio import PortfolioConfig
from harness.tasks.registry import build_task
from market.data import MarketData
from market.splits import Splits
from market.view import MarketView

MASSA_CONFIGS = CONFIG_DIR / "massa"


def load_settings(name: str, sets: list[str]) -> MassaConfig:
    """configs/massa/massa.yaml, then configs/massa/<name>.yaml, then the `key=value` overrides."""
    path = MASSA_CONFIGS / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in MASSA_CONFIGS.glob("*.yaml")))
        raise MissingFileError(f"--config {name}: no configs/massa/{name}.yaml; known: {known}")
    values = OmegaConf.merge(OmegaConf.load(MASSA_CONFIGS / "massa.yaml"), OmegaConf.load(path))
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: write key=value")
        values[key] = yaml.safe_load(value)
    return typed_config(MassaConfig, OmegaConf.to_container(values, resolve=True), f"configs/massa/{name}.yaml")


def suite_inputs(suite: str):
    """(market data, splits, portfolio task config, universe) of `+suite=<suite>`."""
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"+suite={suite}"])
    task = build_task(OmegaConf.to_container(cfg.task, resolve=True), OmegaConf.to_container(cfg.execution, resolve=True))
    if task.name != "portfolio":
        raise ConfigError(f"--suite {suite}: MASSA trades the portfolio task, the suite sets task={task.name}")
    splits = typed_config(Splits, OmegaConf.to_container(cfg.split, resolve=True), "split")
    return instantiate(cfg.data), splits, task.config, tuple(str(t) for t in cfg.tickers)


def rollout(policy: Policy, market: Market, task: PortfolioConfig, config: MassaConfig) -> dict[str, float]:
    """Greedy rollout over the whole of `market` from cash: summed reward, log return, share of scaled bars."""
    env = MassaEnv(market, task, config.reward_scale, config.drawdown_penalty)
    o, c = env.reset(0, len(market.times))
    total, scaled, steps, done = 0.0, 0, 0, False
    start = env.equity()
    while not done:
        with torch.no_grad():
            action = policy.act(torch.as_tensor(o)[None], torch.as_tensor(c)[None])[0].numpy()
        o, c, reward, done, orders = env.step(action)
        total, scaled, steps = total + reward, scaled + orders.scaled, steps + 1
    return {"reward": total, "log_return": float(np.log(env.equity() / start)), "scaled_share": scaled / steps}


def train(config: MassaConfig, data: MarketData, splits: Splits, task: PortfolioConfig, instruments: tuple[str, ...],
          seed: int, out: Path, progress: bool = True) -> dict:
    """Train one policy on `instruments` of `data` (module docstring); return its training facts."""
    wall, cpu, load = time.perf_counter(), time.process_time(), os.getloadavg()
    train_view = MarketView(data, splits.train.end)
    scaling = InputScaling.fit(view_bars(train_view, instruments), splits.train.start, splits.train.end, config.window)
    train_market = window_market(train_view, instruments, splits.train.start, splits.train.end, scaling)
    valid_market = window_market(MarketView(data, splits.valid.end), instruments, splits.valid.start,
                                 splits.valid.end, scaling)
    if len(train_market.times) < config.episode_bars:
        raise ConfigError(f"episode_bars {config.episode_bars}: the training window has {len(train_market.times)} bars")
    agents = len(instruments)
    observation = train_market.windows.shape[2] + len(SLEEVE_FEATURES)
    learner = Learner(config, agents, observation, CONTEXT_WIDTH, seed)
    buffer = ReplayBuffer(config.buffer_size, agents, observation, CONTEXT_WIDTH, seed)
    env = MassaEnv(train_market, task, config.reward_scale, config.drawdown_penalty)
    rng = np.random.default_rng(seed)
    steps_per_episode = config.episode_bars - 1
    total_steps = config.episodes * steps_per_episode
    best: tuple[float, int, dict] | None = None
    step = updates = 0
    with TrainingLog(out / "log", total=config.episodes, description=f"massa {config.variant} seed {seed}",
                     progress=progress) as log:
        for episode in range(1, config.episodes + 1):
            o, c = env.reset(int(rng.integers(len(train_market.times) - config.episode_bars + 1)), config.episode_bars)
            done, rewards, scaled, losses = False, 0.0, 0, []
            while not done:
                fraction = min(step / max(total_steps - 1, 1), 1.0)
                noise = config.noise_start + (config.noise_end - config.noise_start) * fraction
                if step < config.warmup_steps:
                    action = rng.uniform(-config.max_step, config.max_step, agents).astype(np.float32)
                else:
                    action = learner.explore(o, c, noise)
                o2, c2, reward, done, orders = env.step(action)
                buffer.add(o=o, c=c, a=action, r=reward, o2=o2, c2=c2)
                o, c, step = o2, c2, step + 1
                rewards, scaled = rewards + reward, scaled + orders.scaled
                learning = step > config.warmup_steps and buffer.count >= config.batch_size
                if learning and step % config.update_every == 0:
                    losses.append(learner.update(buffer.sample(config.batch_size)))
                    updates += 1
            means = {k: float(np.mean([row[k] for row in losses])) for k in (losses[0] if losses else {})}
            log.step(episode_reward=rewards, scaled_share=scaled / steps_per_episode, noise=noise, **means)
            if episode % config.eval_every == 0 or episode == config.episodes:
                valid = rollout(learner.policy, valid_market, task, config)
                log.scalars(episode, **{f"valid_{k}": v for k, v in valid.items()})
                if best is None or valid["reward"] > best[0]:
                    best = (valid["reward"], episode, copy.deepcopy(learner.policy.state_dict()))
    assert best is not None
    learner.policy.load_state_dict(best[2])
    facts = {"seed": seed, "variant": config.variant, "episodes": config.episodes,
             "env_steps": step, "updates": updates, "best_episode": best[1], "valid_reward": best[0],
             "train_window": [str(splits.train.start.date()), str(splits.train.end.date())],
             "valid_window": [str(splits.valid.start.date()), str(splits.valid.end.date())],
             "train_wall_s": round(time.perf_counter() - wall, 2), "train_cpu_s": round(time.process_time() - cpu, 2),
             "load_average_start": [round(v, 2) for v in load], "load_average_end": [round(v, 2) for v in os.getloadavg()],
             "torch_threads": torch.get_num_threads(), "torch": torch.__version__}
    config_out = policy_config(config, instruments, observation, CONTEXT_WIDTH, scaling, splits.valid.end)
    facts["fingerprint"] = save_checkpoint(out / "policy", learner.policy, config_out, facts)
    return facts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="massa", help="configs/massa/NAME.yaml: massa or a control")
    parser.add_argument("--seed", type=int, nargs="+", default=[0], help="training seed(s)")
    parser.add_argument("--out", required=True, help="output folder (policy/ and log/ go into it); {seed} is the seed")
    parser.add_argument("--suite", default="massa", help="the suite whose market, universe, splits and task it trains on")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a MassaConfig field")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    with exit_on_user_error():
        torch.set_num_threads(args.threads)
        settings = load_settings(args.config, args.set)
        if len(args.seed) > 1 and "{seed}" not in args.out:
            raise ConfigError(f"--out {args.out}: several seeds need {{seed}} in the folder name")
        started = time.perf_counter()
        inputs = suite_inputs(args.suite)
        print(f"suite {args.suite}: market, splits and task built in {time.perf_counter() - started:.0f} s")
        for seed in args.seed:
            out = Path(args.out.format(seed=seed))
            facts = train(settings, *inputs, seed, out, progress=not args.no_progress)
            print(f"{out / 'policy'}: {settings.variant} seed {seed}, best episode {facts['best_episode']}, "
                  f"valid reward {facts['valid_reward']:.3f}, {facts['train_wall_s']:.0f} s wall, "
                  f"{facts['train_cpu_s']:.0f} s CPU, load {facts['load_average_start'][0]:.2f}")


if __name__ == "__main__":
    main()
