"""Every trained MASSA checkpoint on the suite's test window, without the runner: the plugin's
decision path (`agent.MassaAgent.step` and `env.weights_decision`) on the task's own simulator.

    python -m comparators.massa.evaluate [--suite massa] [--root outputs/train/massa] [--seeds 0 1 2]
        [--configs massa no_signal ...] [--signal massa] [--control no_signal] [--out results.csv]

For each `ROOT/<config>/seed-<k>/policy` present: one episode of the universe from cash over the
test window, the portfolio simulator of the task (harness/tasks/portfolio.py) filling each
bar's scaled orders at the next open, rows from `inputs.window_market` (equal to the plugin's
trailing-bar rows; tests/comparators/test_massa_plugin.py). The runner (`run_benchmark.py
+suite=massa`) computes the same decisions with its journal, the report and per-decision traces;
this is the short path when CPU time is scarce, and it adds equal weight (1/N every bar) as the
reference. Printed: per config × seed the metrics of `metrics.performance.metrics_row` and the
task metrics (`metrics.episodes.task_metrics`: Turnover, HHI), the share of bars with scaled
orders, the mean λ and the mean pairwise action correlation; then the report's paired test
(`metrics.significance.paired_row`) of `signal` against `control`, on the seed-mean daily
returns and seed by seed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from comparators.massa.agent import MassaAgent, load_agent
from comparators.massa.env import Market, weights_decision
from comparators.massa.inputs import window_market
from comparators.massa.orders import SCALE_TOLERANCE, Orders
from comparators.massa.summary import tests_markdown
from comparators.massa.train import suite_inputs
from core.errors import exit_on_user_error
from frameworks.massa import mean_pairwise_correlation
from harness.tasks.portfolio import PortfolioConfig, PortfolioSimulator
from market.view import MarketView
from metrics.episodes import PORTFOLIO_KEYS, task_metrics
from metrics.paired import holm
from metrics.performance import metrics_row
from metrics.significance import paired_row

CONFIGS = ("massa", "no_signal", "constant_signal", "random_signal", "maddpg", "central")


def episode(market: Market, task: PortfolioConfig, decide) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    """(equity table, trades, per-bar extras) of one episode; `decide(t, portfolio) -> (Decision, extra)`."""
    simulator = PortfolioSimulator(market.bars, market.times, task)
    extras = []
    for t in range(len(market.times) - 1):
        decision, extra = decide(t, simulator.portfolio)
        simulator.submit(decision)
        extras.append(extra)
    result = simulator.result()
    return result.equity, result.trades, extras


def evaluate_checkpoint(folder: Path, market: Market, task: PortfolioConfig, seed: int) -> tuple[dict, pd.Series]:
    checkpoint, _ = load_agent(folder)
    agent = MassaAgent(checkpoint.model, market.instruments, task.max_gross, seed)

    def decide(t, portfolio):
        step = agent.step(market.times[t], market.windows[t], market.context[t], portfolio)
        return weights_decision(market.instruments, step.orders), (step.actions, step.orders.buy_scale)

    equity, trades, extras = episode(market, task, decide)
    actions = np.array([a for a, _ in extras])
    scales = np.array([s for _, s in extras])
    row = {**metrics_row(equity["equity"], len(trades)), **task_metrics(equity, trades, PORTFOLIO_KEYS, 252.0),
           "scaled_share": float((scales < 1.0 - SCALE_TOLERANCE).mean()), "mean_buy_scale": float(scales.mean()),
           "action_correlation": mean_pairwise_correlation(actions), "train_cpu_s": checkpoint.facts.get("train_cpu_s"),
           "train_wall_s": checkpoint.facts.get("train_wall_s")}
    return row, equity["equity"].pct_change().dropna()


def equal_weight(market: Market, task: PortfolioConfig) -> tuple[dict, pd.Series]:
    n = len(market.instruments)
    orders = Orders(weights=np.full(n, 1.0 / n), cash=0.0, buy_scale=1.0, requested_buys=1.0)
    equity, trades, _ = episode(market, task, lambda t, p: (weights_decision(market.instruments, orders), None))
    row = {**metrics_row(equity["equity"], len(trades)), **task_metrics(equity, trades, PORTFOLIO_KEYS, 252.0)}
    return row, equity["equity"].pct_change().dropna()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="massa")
    parser.add_argument("--root", type=Path, default=Path("outputs/train/massa"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), help="configs/massa names to evaluate")
    parser.add_argument("--signal", default="massa")
    parser.add_argument("--control", default="no_signal")
    parser.add_argument("--out", type=Path, default=None, help="write the per-run table as CSV")
    args = parser.parse_args(argv)
    with exit_on_user_error():
        started = time.perf_counter()
        data, splits, task, instruments = suite_inputs(args.suite)
        market = window_market(MarketView(data, splits.test.end), instruments, splits.test.start, splits.test.end,
                               load_agent(next(args.root.glob("*/seed-*/policy")))[1])
        rows, returns = {}, {}
        rows[("equal_weight", 0)], returns[("equal_weight", 0)] = equal_weight(market, task)
        for config in args.configs:
            for seed in args.seeds:
                folder = args.root / config / f"seed-{seed}" / "policy"
                if folder.is_dir():
                    rows[(config, seed)], returns[(config, seed)] = evaluate_checkpoint(folder, market, task, seed)
        table = pd.DataFrame(rows).T.rename_axis(["config", "seed"])
        if args.out:
            table.to_csv(args.out, float_format="%.6g")
        print(table.to_markdown(floatfmt=".4g"))
        daily = pd.DataFrame(returns)
        tests = {}
        signal, control = daily[args.signal], daily[args.control]
        tests["seed mean"] = paired_row(signal.mean(axis=1).to_numpy(), control.mean(axis=1).to_numpy())
        shared = sorted(set(signal.columns) & set(control.columns))
        for seed in shared:
            tests[f"seed {seed}"] = paired_row(signal[seed].to_numpy(), control[seed].to_numpy())
        frame = pd.DataFrame(tests).T
        frame.loc[[f"seed {s}" for s in shared], "p_mean_holm"] = holm([tests[f"seed {s}"]["p_mean"] for s in shared])
        print(f"\n{args.signal} - {args.control}, paired tests on daily returns:\n")
        print(tests_markdown(frame).to_markdown())
        print(f"\n{len(rows)} episodes of {len(market.times)} bars in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
