"""Size of the paired tests at 5 %: how often each candidate rejects a true H0, with its Monte Carlo CI.

Null processes (every pair equal in distribution, so H0 is true): iid, AR(1) phi = 0.5 and
GARCH(1,1)-t5 returns (``metrics.calibration``), and pairs of independent ``random`` baseline
policies trading the same window of real embedded prices under the paper's execution rules
(``frameworks.baselines.random_policy`` + ``harness.execution.simulate``; window and ticker
drawn at random per repetition). Window lengths T = 62, 124, 250, 500 days.

Candidates for the mean daily-return difference:

* ``SB auto block``: stationary-bootstrap standard error with the Politis-White block length,
  normal p-value — the report's test before issue #9;
* ``SB block <= T^(1/3)``: the same with the block length capped at T^(1/3);
* ``NW auto, t(T-1)``: Newey-West (Bartlett) with arch's automatic bandwidth, t_{T-1};
* ``EWC, t(nu)``: ``metrics.paired.mean_difference_test`` (the chosen test).

and for the Sharpe-ratio difference: ``LW QS, normal`` (Ledoit-Wolf with the quadratic-spectral
kernel and normal p-values, before #9) and ``LW EWC, t(nu)`` (``metrics.paired.sharpe_difference_test``).
``Holm family`` is the family-wise rate of ``--family-size`` strategies each tested against one
more (chosen test, Holm-adjusted). A rate holds its size when its CI overlaps [3 %, 7 %].

    python benchmarks/calibrate_paired_tests.py                      # 2,000 repetitions per cell
    python benchmarks/calibrate_paired_tests.py --reps 300 --periods 62 --processes "AR(1) phi=0.5"
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from arch.bootstrap.base import stationary_bootstrap_sample
from arch.covariance.kernel import Bartlett, QuadraticSpectral
from scipy.stats import norm
from scipy.stats import t as student_t

from frameworks.baselines.random_policy import RandomPolicy
from harness.execution import simulate
from market.data import MarketData
from market.decision import DecisionContext
from market.sources.embedded import load_embedded
from market.view import MarketView
from metrics import calibration, paired
from metrics.bootstrap import block_length
from metrics.performance import simple_returns

STOCKS = ("AMZN", "MSFT", "NFLX", "NVDA", "TSLA")
BOOTSTRAP_REPS = 499


def _differences(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """a - b, or None when it is constant (no test to run)."""
    difference = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return None if np.all(difference == difference[0]) else difference


def stationary_bootstrap_means(data: np.ndarray, block: float, reps: int, seed: int = 0) -> np.ndarray:
    """Means of ``reps`` stationary-bootstrap resamples of ``data`` (mean block ``block``).

    The resamples are those of ``arch.bootstrap.StationaryBootstrap``: arch's own sampler
    (``stationary_bootstrap_sample``) turns uniform block starts and continuation draws into
    indices; the draws are taken for all replications at once, which is three times faster
    than one ``update_indices`` call per replication.
    """
    rng = np.random.default_rng(seed)
    periods = len(data)
    starts = rng.integers(0, periods, (reps, periods), dtype=np.int64)
    uniforms = rng.random((reps, periods))
    indices = np.array([stationary_bootstrap_sample(s, u, 1.0 / block) for s, u in zip(starts, uniforms)])
    return data[indices].mean(axis=1)


def bootstrap_pvalue(a: np.ndarray, b: np.ndarray, cap_block: bool = False) -> float:
    """Normal p-value of mean(a - b) with the stationary-bootstrap SE (block: Politis-White, optionally <= T^(1/3))."""
    difference = _differences(a, b)
    if difference is None:
        return 1.0
    block = block_length(difference)
    if cap_block:
        block = min(block, len(difference) ** (1.0 / 3.0))
    means = stationary_bootstrap_means(difference, block, BOOTSTRAP_REPS)
    return float(2.0 * norm.sf(abs(difference.mean()) / np.std(means, ddof=1)))


def newey_west_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """t_{T-1} p-value of mean(a - b) with the Newey-West SE at arch's automatic bandwidth."""
    difference = _differences(a, b)
    if difference is None:
        return 1.0
    long_run = float(Bartlett(difference).cov.long_run[0, 0])
    statistic = difference.mean() / math.sqrt(long_run / len(difference))
    return float(2.0 * student_t.sf(abs(statistic), len(difference) - 1))


def sharpe_quadratic_spectral_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """The Ledoit-Wolf Sharpe-difference test as it was before #9: QS kernel HAC, normal p-value."""
    mu = np.array([a.mean(), b.mean()])
    gamma = np.array([(a**2).mean(), (b**2).mean()])
    variance = gamma - mu**2
    if np.any(variance <= 0):
        return math.nan
    sharpe = mu / np.sqrt(variance)
    gradient = np.array([gamma[0] / variance[0] ** 1.5, -gamma[1] / variance[1] ** 1.5,
                         -0.5 * mu[0] / variance[0] ** 1.5, 0.5 * mu[1] / variance[1] ** 1.5])
    moments = np.column_stack([a - mu[0], b - mu[1], a**2 - gamma[0], b**2 - gamma[1]])
    psi = QuadraticSpectral(moments, center=False).cov.long_run
    standard_error = math.sqrt(float(gradient @ psi @ gradient) / len(a))
    return float(2.0 * norm.sf(abs(sharpe[0] - sharpe[1]) / standard_error))


MEAN_TESTS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "SB auto block": bootstrap_pvalue,
    "SB block <= T^(1/3)": partial(bootstrap_pvalue, cap_block=True),
    "NW auto, t(T-1)": newey_west_pvalue,
    "EWC, t(nu)": lambda a, b: paired.mean_difference_test(a, b).pvalue,
}
SHARPE_TESTS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "LW QS, normal": sharpe_quadratic_spectral_pvalue,
    "LW EWC, t(nu)": lambda a, b: paired.sharpe_difference_test(a, b).pvalue,
}
CHOSEN = "EWC, t(nu)"
RANDOM_POLICIES = "random policies, embedded prices"


def random_policy_returns(
    rng: np.random.Generator, reps: int, periods: int, strategies: int = 2, data: MarketData | None = None
) -> np.ndarray:
    """(reps, T, m) daily returns of m independently seeded ``random`` policies on one random window each."""
    data = data or load_embedded(list(STOCKS))
    frames = {ticker: data.frame(ticker) for ticker in data.tickers}
    eligible = [ticker for ticker, bars in frames.items() if len(bars) > periods]
    policy = RandomPolicy()
    out = np.empty((reps, periods, strategies))
    for rep in range(reps):
        ticker = eligible[rng.integers(len(eligible))]
        start = int(rng.integers(0, len(frames[ticker]) - periods))
        window = frames[ticker].iloc[start:start + periods + 1]
        dates = list(window.index)
        views = [MarketView(data, date) for date in dates]
        for j, seed in enumerate(rng.integers(0, 2**31, strategies)):
            contexts = [DecisionContext(ticker, date, view, int(seed)) for date, view in zip(dates, views)]
            equity = simulate(window, policy.decide(contexts)).equity["equity"]
            out[rep, :, j] = simple_returns(equity)
    return out


def _holds(test: str, result: calibration.RejectionRate) -> bool:
    """A pairwise rate must overlap [3 %, 7 %]; a family-wise rate must not lie above 7 % (Holm may be conservative)."""
    return result.at_most(calibration.SIZE_BAND[1]) if test == "Holm family" else result.holds_size()


def _row(process: str, periods: int, test: str, result: calibration.RejectionRate, seconds: float) -> str:
    low, high = result.ci
    verdict = "yes" if _holds(test, result) else "NO"
    return (f"| {process} | {periods} | {test} | {result.rejections}/{result.reps} | "
            f"{100 * result.rate:.1f} [{100 * low:.1f}, {100 * high:.1f}] | {verdict} | {seconds:.0f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="Monte Carlo repetitions per cell")
    parser.add_argument("--periods", type=int, nargs="+", default=[62, 124, 250, 500], help="window lengths T")
    processes = [*calibration.NULL_PROCESSES, RANDOM_POLICIES]
    parser.add_argument("--processes", nargs="+", default=processes, choices=processes)
    tests = [*MEAN_TESTS, *SHARPE_TESTS, "Holm family"]
    parser.add_argument("--tests", nargs="+", default=tests, choices=tests)
    parser.add_argument("--family-size", type=int, default=5, help="tests in the Holm family")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    generators = {**calibration.NULL_PROCESSES, RANDOM_POLICIES: random_policy_returns}
    print("| process | T | test | rejections | rate % [95 % CI] | holds size | s |")
    print("|---|---|---|---|---|---|---|")
    every_cell_holds = True
    for process in args.processes:
        for periods in args.periods:
            rng = np.random.default_rng([args.seed, periods, processes.index(process)])
            strategies = args.family_size + 1 if "Holm family" in args.tests else 2
            samples = generators[process](rng, args.reps, periods, strategies)
            for test in args.tests:
                started = time.perf_counter()
                if test == "Holm family":
                    result = calibration.family_rejection_rate(samples, MEAN_TESTS[CHOSEN])
                else:
                    result = calibration.pair_rejection_rate(samples, {**MEAN_TESTS, **SHARPE_TESTS}[test])
                print(_row(process, periods, test, result, time.perf_counter() - started), flush=True)
                if test in (CHOSEN, "LW EWC, t(nu)", "Holm family"):
                    every_cell_holds &= _holds(test, result)
    print(f"\nchosen tests hold their size in every cell: {'yes' if every_cell_holds else 'NO'}")
    return 0 if every_cell_holds else 1


if __name__ == "__main__":
    sys.exit(main())
