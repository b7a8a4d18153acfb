"""The statistics of metrics/: bootstrap CIs, paired tests, Holm, SPA, MCS, seeds, PSR/DSR.

The simulation tests check the machinery, not just the plumbing: CI coverage on iid returns
with a known Sharpe ratio, and the size and power of the tests. They are kept small (a few
seconds); tolerances allow for the Monte Carlo error of that size.
"""

import math

import numpy as np
import pandas as pd
import pytest

from scipy.stats import t as student_t
from statsmodels.stats.multitest import multipletests

from metrics import bootstrap, long_run_variance, model_selection, paired, seeds, sharpe_inference
from metrics.performance import sharpe_ratio

TRUE_SR = 0.1  # per period: mean 0.001, std 0.01


@pytest.mark.slow
def test_sharpe_ci_covers_the_true_value_about_95_percent_of_the_time():
    rng = np.random.default_rng(2024)
    simulations = 300
    covered = 0
    for i in range(simulations):
        r = rng.normal(0.001, 0.01, 250)
        low, high = bootstrap.metric_cis(r, reps=199, seed=i)["SR_day"]
        covered += low <= TRUE_SR <= high
    # Monte Carlo s.e. of the coverage is ~1.3 points at 300 simulations
    assert 0.91 <= covered / simulations <= 0.99


def test_cross_ticker_ci_resamples_days_jointly():
    rng = np.random.default_rng(1)
    r = rng.normal(0.001, 0.01, 120)
    twins = pd.DataFrame({"A": r, "B": r})
    # identical tickers + joint resampling = the single-ticker interval exactly
    joint = bootstrap.average_metric_cis(twins, reps=200, seed=3)
    single = bootstrap.metric_cis(r, reps=200, seed=3)
    for name in bootstrap.CI_METRICS:
        assert joint[name] == pytest.approx(single[name], rel=1e-12)
    # independent resampling of the two tickers would give a narrower interval for their mean
    independent = pd.DataFrame({"A": r, "B": np.random.default_rng(2).permutation(r)})
    low, high = bootstrap.average_metric_cis(independent, reps=200, seed=3)["SR_day"]
    assert high - low < 0.85 * (single["SR_day"][1] - single["SR_day"][0])


def test_ci_is_seeded_and_brackets_the_estimate():
    r = np.random.default_rng(5).normal(0.001, 0.01, 200)
    first = bootstrap.metric_cis(r, reps=300, seed=9)
    assert first == bootstrap.metric_cis(r, reps=300, seed=9)
    low, high = first["SR_day"]
    assert low < sharpe_ratio(r) < high
    assert first["SR_ann"] == pytest.approx((low * math.sqrt(252), high * math.sqrt(252)))


def test_flat_series_has_a_degenerate_ci():
    assert bootstrap.metric_cis(np.zeros(50), reps=50)["ARR"] == (0.0, 0.0)


def test_block_length_grows_with_autocorrelation():
    rng = np.random.default_rng(0)
    noise = rng.normal(size=500)
    ar = np.zeros(500)
    for t in range(1, 500):
        ar[t] = 0.8 * ar[t - 1] + noise[t]
    assert bootstrap.block_length(ar) > 3 * bootstrap.block_length(noise)


def test_ewc_long_run_variance_of_iid_and_ar1_series():
    rng = np.random.default_rng(3)
    nu = [long_run_variance.ewc_degrees_of_freedom(t) for t in (1, 2, 3, 62, 124, 250, 500)]
    assert nu == [0, 1, 1, 6, 9, 15, 25]  # floor(0.4 T^(2/3)) within [1, T - 1]
    # iid N(0, 1): Omega = 1; AR(1) phi = 0.5 with unit-variance shocks: Omega = 1 / (1 - phi)^2 = 4
    iid = [long_run_variance.ewc_long_run_covariance(rng.normal(size=500))[0, 0] for _ in range(400)]
    shocks = rng.normal(size=(400, 600))
    ar = np.zeros_like(shocks)
    for t in range(1, shocks.shape[1]):
        ar[:, t] = 0.5 * ar[:, t - 1] + shocks[:, t]
    persistent = [long_run_variance.ewc_long_run_covariance(row[100:])[0, 0] for row in ar]
    # the estimate is Omega x chi2_nu / nu (nu = 25): its mean over 400 draws is within ~3 % of Omega
    assert np.mean(iid) == pytest.approx(1.0, rel=0.08)
    assert np.mean(persistent) == pytest.approx(4.0, rel=0.12)
    x = rng.normal(size=(80, 2))
    assert long_run_variance.cosine_projections(x, 3)[0] == pytest.approx(np.sqrt(80) * x.mean(axis=0))


def test_mean_difference_test_power_ci_and_degenerate_cases():
    rng = np.random.default_rng(7)
    a = rng.normal(0.004, 0.01, 250)
    result = paired.mean_difference_test(a, a - 0.003 + rng.normal(0, 0.002, 250))
    assert result.estimate == pytest.approx(0.003, abs=5e-4) and result.pvalue < 0.01 and result.df == 15
    low, high = result.ci()
    assert low < result.estimate < high and (high - low) / 2 == pytest.approx(
        student_t.ppf(0.975, 15) * result.standard_error)
    assert result.minimum_detectable_effect() == pytest.approx(
        (student_t.ppf(0.975, 15) + student_t.ppf(0.8, 15)) * result.standard_error)
    assert paired.mean_difference_test(a, a).pvalue == 1.0
    assert math.isnan(paired.mean_difference_test(a, a - 0.001).pvalue)  # constant difference: nothing to test
    assert math.isnan(paired.mean_difference_test(a[:1], a[:1] + 0.01).pvalue)


def test_a_true_difference_of_the_minimum_detectable_size_is_found_about_80_percent_of_the_time():
    rng = np.random.default_rng(12)
    noise = rng.normal(0.0, 0.01, (300, 124))
    effect = paired.mean_difference_test(noise[0], np.zeros(124)).minimum_detectable_effect()
    found = np.mean([paired.mean_difference_test(row + effect, np.zeros(124)).pvalue < 0.05 for row in noise[1:]])
    # the MDE uses one draw's SE (its own noise moves the power): a wide band around 80 %
    assert 0.55 <= found <= 0.95


def test_sharpe_difference_test_size_power_and_symmetry():
    rng = np.random.default_rng(11)
    p_values = [paired.sharpe_difference_test(rng.normal(0.0005, 0.01, 250), rng.normal(0.0005, 0.01, 250)).pvalue
                for _ in range(200)]
    assert 0.01 <= np.mean(np.array(p_values) < 0.05) <= 0.10
    a = rng.normal(0.003, 0.01, 500)
    b = rng.normal(-0.001, 0.01, 500)
    result = paired.sharpe_difference_test(a, b)
    assert result.estimate > 0 and result.pvalue < 0.01
    mirrored = paired.sharpe_difference_test(b, a)
    assert mirrored.estimate == pytest.approx(-result.estimate) and mirrored.pvalue == pytest.approx(result.pvalue)
    assert paired.sharpe_difference_test(a, a).pvalue == 1.0
    assert math.isnan(paired.sharpe_difference_test(a, np.zeros(500)).pvalue)


def test_paired_tests_reject_mismatched_lengths():
    with pytest.raises(ValueError, match="different lengths"):
        paired.mean_difference_test(np.zeros(3), np.zeros(4))


@pytest.mark.slow
def test_holm_step_down_and_nan_equal_statsmodels():
    adjusted = paired.holm([0.01, 0.04, float("nan"), 0.03])
    assert adjusted[0] == pytest.approx(0.03)
    assert adjusted[1] == pytest.approx(0.06) and adjusted[3] == pytest.approx(0.06)
    assert math.isnan(adjusted[2])
    rng = np.random.default_rng(0)
    for size in range(1, 12):
        p_values = rng.uniform(0, 0.3, size)
        p_values[rng.uniform(size=size) < 0.3] = p_values[0]  # ties
        assert paired.holm(list(p_values)) == pytest.approx(list(multipletests(p_values, method="holm")[1]))
    assert paired.holm([]) == []


def _market(rng, days=250):
    return pd.Series(rng.normal(0.0005, 0.01, days))


def test_spa_rejects_with_a_real_edge_and_not_without():
    rng = np.random.default_rng(3)
    null_rejections = 0
    for i in range(10):
        market = _market(rng)
        models = pd.DataFrame({f"m{j}": market + rng.normal(0, 0.005, len(market)) for j in range(3)})
        null_rejections += model_selection.spa_pvalues(market, models, reps=299, seed=i)["consistent"] < 0.05
    assert null_rejections <= 2
    market = _market(rng)
    models = pd.DataFrame({f"m{j}": market + rng.normal(0, 0.005, len(market)) for j in range(3)})
    models["edge"] = market + 0.002 + rng.normal(0, 0.005, len(market))
    assert model_selection.spa_pvalues(market, models, reps=299, seed=0)["consistent"] < 0.01


def test_spa_ignores_frameworks_identical_to_the_benchmark():
    market = _market(np.random.default_rng(0))
    assert model_selection.spa_pvalues(market, pd.DataFrame({"copy": market}))["consistent"] == 1.0


def test_mcs_keeps_the_best_and_drops_the_clearly_worse():
    rng = np.random.default_rng(4)
    market = _market(rng)
    returns = pd.DataFrame({
        "best": market + 0.003 + rng.normal(0, 0.004, 250),
        "best_twin": None,
        "worse": market - 0.003 + rng.normal(0, 0.004, 250),
        "market": market,
    })
    returns["best_twin"] = returns["best"]
    mcs = model_selection.model_confidence_set(returns, reps=299)
    assert mcs.loc["best", "included"] and mcs.loc["best_twin", "included"]
    assert not mcs.loc["worse", "included"]
    assert mcs.loc["best", "pvalue"] == mcs.loc["best_twin", "pvalue"]


def test_seed_aggregation():
    values = pd.DataFrame([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    summary = seeds.aggregate_seeds(values, reps=500)
    assert summary["mean"] == 4.5 and summary["iqm"] == 4.5 and summary["n"] == 8
    assert summary["std"] == pytest.approx(np.std(np.arange(1, 9), ddof=1))
    assert summary["mean_low"] < 4.5 < summary["mean_high"]
    one_seed = seeds.aggregate_seeds(values.iloc[:1], reps=100)
    assert one_seed["mean_low"] == one_seed["mean_high"] == 2.5


def test_iqm_trims_a_quarter_from_each_end():
    assert seeds.iqm(np.array([100.0, 1, 2, 3, 4, 5, 6, -100])) == pytest.approx(3.5)


def test_probabilistic_sharpe_ratio():
    r = np.random.default_rng(8).normal(0.001, 0.01, 250)
    sr = sharpe_ratio(r)
    assert sharpe_inference.probabilistic_sharpe_ratio(r, threshold=sr) == pytest.approx(0.5)
    assert sharpe_inference.probabilistic_sharpe_ratio(r) > sharpe_inference.probabilistic_sharpe_ratio(r, 0.05)
    assert math.isnan(sharpe_inference.probabilistic_sharpe_ratio(np.zeros(10)))


def test_deflated_sharpe_ratio_falls_with_the_number_of_trials():
    r = np.random.default_rng(8).normal(0.001, 0.01, 250)
    trials = np.random.default_rng(9).normal(0.0, 0.05, 10)
    dsr = [sharpe_inference.deflated_sharpe_ratio(r, trials, n) for n in (1, 10, 100, 1000)]
    assert dsr[0] == pytest.approx(sharpe_inference.probabilistic_sharpe_ratio(r))
    assert all(x > y for x, y in zip(dsr, dsr[1:]))
    # SR*_N grows like sqrt(2 log N) for large N
    assert sharpe_inference.expected_max_sharpe(10_000, 1.0) == pytest.approx(3.9, abs=0.1)
