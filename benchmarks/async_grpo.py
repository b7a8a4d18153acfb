"""Asynchronous against synchronous GRPO on the tiny-family task, the same samples for both.

    PYTHONPATH=. python benchmarks/async_grpo.py                                  # 20 steps, 2 x 8, seed 0
    PYTHONPATH=. python benchmarks/async_grpo.py --steps 6 --prompts 2 --generations 4
    PYTHONPATH=. python benchmarks/async_grpo.py --seeds 0 1 2 --plot async_grpo.png
    PYTHONPATH=. python benchmarks/async_grpo.py --start outputs/train/cpu_tiny/seed-0/warm_start/policy

Each mode trains the cpu_tiny recipe (`configs/train/cpu_tiny.yaml`, one torch thread per
process) on data=synthetic_news through `train_single_agent.train` for --steps optimizer steps of
--prompts prompts × --generations completions, so both consume steps × prompts × generations
samples; no warm start and no validation. By default both start from the recipe's random weights
(short episodes: the throughput is the recipe's, the reward curve is not the warm-started one of
docs/training.md); `--start PATH` starts both from a policy folder instead, e.g. a warm start's
`warm_start/policy` (the episodes of real training, with three tool results). Async runs with
`train.mode=async` and --max-staleness / --objective / --in-flight / --throttle.

Per mode and seed: wall seconds of the whole `train` call (model building and, for async, the
rollout process's start included), samples consumed per second over it, the steady rate
(samples of steps 2..N over the steps.csv wall time between step 1 and step N: start-up left
out), and the reward per step against
samples consumed (steps.csv). Printed: the means over seeds, the async/sync ratio of samples per
second, and the mean reward over the last half of the steps with a 95 % t interval over seeds
(with one seed, no interval). --plot draws both reward curves with their bands.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def overrides(mode: str, seed: int, args: argparse.Namespace, scratch: Path) -> list[str]:
    """The Hydra overrides of one run (see the module docstring)."""
    chosen = ["train=cpu_tiny", "data=synthetic_news", f"seed={seed}", f"output_dir={scratch / f'{mode}-{seed}'}",
              "train.warm_start.enabled=false", "train.monitoring.validate_every=0",
              "train.monitoring.tensorboard=false", "train.torch_threads=1",
              f"train.checkpoints.save_steps={args.steps}", f"train.optimisation.max_steps={args.steps}",
              f"train.optimisation.prompts_per_step={args.prompts}",
              f"train.optimisation.num_generations={args.generations}",
              f"train.optimisation.micro_batch_size={args.micro_batch}", f"train.mode={mode}"]
    if mode == "async":
        chosen += [f"train.asynchronous.max_staleness={args.max_staleness}",
                   f"train.asynchronous.objective={args.objective}", f"train.asynchronous.in_flight={args.in_flight}",
                   f"train.asynchronous.throttle={args.throttle}"]
    if args.start is not None:
        chosen += ["train.model.source=path", f"+train.model.path={args.start.resolve()}", "train.model.tiny=null"]
    return chosen


def run(mode: str, seed: int, args: argparse.Namespace, scratch: Path) -> tuple[dict, "pd.DataFrame"]:
    """Train one mode and seed; its figures and its per-step log."""
    import pandas as pd
    from hydra import compose, initialize_config_dir

    import train_single_agent

    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose("train_single_agent", overrides=overrides(mode, seed, args, scratch))
    started = time.perf_counter()
    output = train_single_agent.train(cfg)
    wall = time.perf_counter() - started
    steps = pd.read_csv(output / "steps.csv")
    samples = args.steps * args.prompts * args.generations
    per_step = args.prompts * args.generations
    steady = (len(steps) - 1) * per_step / float(steps["wall_s"].iloc[-1] - steps["wall_s"].iloc[0])
    figures = {"mode": mode, "seed": seed, "wall_s": wall, "samples": samples, "samples_per_s": samples / wall,
               "steady_samples_per_s": steady}
    if mode == "async":
        groups = pd.read_csv(output / "groups.csv")
        figures.update(staleness_mean=float(groups[groups["consumed"]]["staleness"].mean()),
                       dropped_groups=int((~groups["consumed"]).sum()))
    steps = steps.assign(mode=mode, seed=seed, samples=steps["step"] * args.prompts * args.generations)
    return figures, steps[["mode", "seed", "step", "samples", "reward"]]


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % t interval (nan with one value)."""
    import numpy as np
    from scipy import stats

    mean = float(np.mean(values))
    if len(values) < 2:
        return mean, float("nan")
    return mean, float(stats.t.ppf(0.975, len(values) - 1) * stats.sem(values))


def plot(curves: "pd.DataFrame", path: Path) -> None:
    """Reward against samples consumed, mean over seeds with its 95 % band, one line per mode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for mode, rows in curves.groupby("mode"):
        summary = rows.groupby("samples")["reward"].agg(list)
        means, halves = zip(*(interval(v) for v in summary))
        axes.plot(summary.index, means, label=mode)
        axes.fill_between(summary.index, [m - h for m, h in zip(means, halves)],
                          [m + h for m, h in zip(means, halves)], alpha=0.25)
    axes.set_xlabel("samples consumed")
    axes.set_ylabel("reward (mean over the step's completions)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps per run (at least 2)")
    parser.add_argument("--prompts", type=int, default=2, help="prompts (groups) per step")
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt")
    parser.add_argument("--micro-batch", type=int, default=8, help="completions per forward/backward pass")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--max-staleness", type=int, default=1)
    parser.add_argument("--objective", choices=["decoupled", "grpo"], default="decoupled")
    parser.add_argument("--in-flight", choices=["finish", "switch"], default="finish")
    parser.add_argument("--throttle", choices=["true", "false"], default="true")
    parser.add_argument("--plot", type=Path, default=None, help="write the reward curves to this PNG")
    parser.add_argument("--start", type=Path, default=None, help="a policy folder both modes start from")
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2 (the steady rate is measured after step 1)")
    if (args.prompts * args.generations) % args.micro_batch:
        parser.error("--prompts x --generations must be a multiple of --micro-batch")
    sys.path.insert(0, str(ROOT))
    import pandas as pd

    figures, curves = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for seed in args.seeds:
            for mode in ("sync", "async"):
                row, steps = run(mode, seed, args, Path(scratch))
                figures.append(row)
                curves.append(steps)
    figures, curves = pd.DataFrame(figures), pd.concat(curves, ignore_index=True)
    print(f"\nAsync vs sync GRPO, cpu_tiny on synthetic_news, {args.steps} steps x {args.prompts} prompts x "
          f"{args.generations} completions, seeds {args.seeds}, max_staleness {args.max_staleness}, "
          f"{args.objective}, in_flight {args.in_flight}, throttle {args.throttle}, "
          f"from {args.start or 'random weights'}")
    print(figures.to_markdown(index=False, floatfmt=".3g"))
    for column in ("samples_per_s", "steady_samples_per_s"):
        speed = figures.groupby("mode")[column].mean()
        print(f"\n{column}: sync {speed['sync']:.3g}, async {speed['async']:.3g}, "
              f"ratio async/sync {speed['async'] / speed['sync']:.2f}")
    late = curves[curves["step"] > args.steps // 2].groupby(["mode", "seed"])["reward"].mean()
    for mode in ("sync", "async"):
        mean, half = interval(late[mode].tolist())
        print(f"reward over the last half of the samples, {mode}: {mean:.3f} ± {half:.3f} (95 % t over seeds)")
    if args.plot:
        plot(curves, args.plot)
        print(f"reward curves: {args.plot}")


if __name__ == "__main__":
    main()
