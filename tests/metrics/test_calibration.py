"""A reduced run of benchmarks/calibrate_paired_tests.py: the chosen paired test holds its size where
the stationary bootstrap with an automatic block length (the test before issue #9) does not.

The full calibration (2,000 repetitions per cell, four processes, T = 62 .. 500) is in
docs/metrics.md. Here: AR(1) phi = 0.5 differences over T = 62 days, 200 repetitions — the
cell where the automatic block is worst; at this size the check tells a 5 % test from a 14 % one.
"""

import importlib.util

import numpy as np
import pytest
from cli_helpers import ROOT

from metrics import calibration, paired

REPS = 200
PERIODS = 62


def _calibration_script():
    path = ROOT / "benchmarks" / "calibrate_paired_tests.py"
    spec = importlib.util.spec_from_file_location("calibrate_paired_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script():
    return _calibration_script()


@pytest.fixture(scope="module")
def ar1_samples():
    return calibration.ar1_returns(np.random.default_rng(2024), REPS, PERIODS)


def test_reduced_calibration_holds_for_the_chosen_test(ar1_samples):
    mean = calibration.pair_rejection_rate(ar1_samples, lambda a, b: paired.mean_difference_test(a, b).pvalue)
    sharpe = calibration.pair_rejection_rate(ar1_samples, lambda a, b: paired.sharpe_difference_test(a, b).pvalue)
    assert mean.holds_size(), mean.ci
    assert sharpe.holds_size(), sharpe.ci


@pytest.mark.slow
def test_reduced_calibration_fails_the_automatic_block_bootstrap(ar1_samples, script):
    before = calibration.pair_rejection_rate(ar1_samples, script.bootstrap_pvalue)
    assert not before.holds_size(), before.ci
    assert before.ci[0] > calibration.SIZE_BAND[1]


def test_holm_holds_the_family_wise_rate():
    samples = calibration.iid_returns(np.random.default_rng(5), REPS, PERIODS, strategies=6)
    family = calibration.family_rejection_rate(samples, lambda a, b: paired.mean_difference_test(a, b).pvalue)
    unadjusted = sum(
        any(paired.mean_difference_test(draw[:, j], draw[:, 0]).pvalue < 0.05 for j in range(1, 6)) for draw in samples
    )
    assert family.at_most(calibration.SIZE_BAND[1]), family.ci
    assert unadjusted > family.rejections  # without Holm five tests reject far more often


def test_null_processes_have_the_stated_moments():
    rng = np.random.default_rng(0)
    for name, process in calibration.NULL_PROCESSES.items():
        draws = process(rng, 40, 250)
        assert draws.shape == (40, 250, 2), name
        assert draws.mean() == pytest.approx(calibration.NULL_MEAN, abs=0.03), name
        assert draws.var() == pytest.approx(1.0, rel=0.15), name
    ar = calibration.ar1_returns(rng, 200, 250)[:, :, 0] - calibration.NULL_MEAN
    lag_one = np.mean(ar[:, 1:] * ar[:, :-1]) / np.mean(ar**2)
    assert lag_one == pytest.approx(0.5, abs=0.03)


def test_rejection_rate_ci_and_the_size_rule():
    assert calibration.RejectionRate(100, 2000).holds_size()
    assert not calibration.RejectionRate(200, 2000).holds_size()
    low, high = calibration.RejectionRate(100, 2000).ci
    assert low < 0.05 < high and high - low < 0.025


def test_random_policy_pairs_trade_real_prices_independently(script):
    returns = script.random_policy_returns(np.random.default_rng(1), 3, 30)
    assert returns.shape == (3, 30, 2) and np.isfinite(returns).all()
    assert not np.allclose(returns[:, :, 0], returns[:, :, 1])
    assert np.abs(returns).max() < 0.5  # daily returns of long-only positions in real stocks
