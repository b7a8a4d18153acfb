"""The convention table of metrics/performance.py, cross-checked against empyrical-reloaded."""

import math

import empyrical as ep
import numpy as np
import pandas as pd
import pytest

from metrics import performance as pf

P = 252.0


def _random_returns(seed: int, n: int = 300) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0005, 0.02, n)


EDGE_CASES = {
    "monotone_up": np.full(50, 0.001) + np.linspace(0, 1e-4, 50),
    "monotone_down": -np.full(50, 0.002) - np.linspace(0, 1e-4, 50),
    "two_days": np.array([0.01, -0.02]),
    "crash": np.array([0.05, -0.5, 0.1, 0.02, -0.03]),
}
CASES = {f"random_{s}": _random_returns(s) for s in range(5)} | EDGE_CASES


@pytest.mark.parametrize("name", list(CASES))
def test_matches_empyrical_where_definitions_agree(name):
    r = CASES[name]
    assert pf.total_return(r) == pytest.approx(ep.cum_returns_final(r), rel=1e-10, abs=1e-15)
    assert pf.annual_return(r, P) == pytest.approx(ep.annual_return(r, annualization=P), rel=1e-10)
    assert pf.sharpe_ratio_annual(r, P) == pytest.approx(ep.sharpe_ratio(r, annualization=P), rel=1e-10)
    assert pf.sharpe_ratio(r) == pytest.approx(ep.sharpe_ratio(r, annualization=1), rel=1e-10)
    assert pf.max_drawdown(r) == pytest.approx(-ep.max_drawdown(r), rel=1e-10, abs=1e-15)
    assert pf.annual_volatility(r, P) == pytest.approx(ep.annual_volatility(r, annualization=P), rel=1e-10)
    assert pf.downside_deviation(r) * math.sqrt(P) == pytest.approx(
        ep.downside_risk(r, annualization=P), rel=1e-10
    )
    expected_sortino = ep.sortino_ratio(r, annualization=P)
    if np.isfinite(expected_sortino):
        assert pf.sortino_ratio(r, P) == pytest.approx(expected_sortino, rel=1e-10)
    else:  # no losing day: empyrical says inf, the convention says NaN
        assert math.isnan(pf.sortino_ratio(r, P))
    expected_calmar = ep.calmar_ratio(r, annualization=P)
    if np.isfinite(expected_calmar):
        assert pf.calmar_ratio(r, P) == pytest.approx(expected_calmar, rel=1e-10)
    else:
        assert math.isnan(pf.calmar_ratio(r, P))


def test_periods_per_year_is_honoured():
    r = _random_returns(7)
    assert pf.annual_return(r, 365.0) == pytest.approx(ep.annual_return(r, annualization=365), rel=1e-10)
    assert pf.sharpe_ratio_annual(r, 52.0) == pytest.approx(ep.sharpe_ratio(r, annualization=52), rel=1e-10)


def test_flat_equity_scores_zero_where_empyrical_gives_nan():
    r = np.zeros(30)
    assert math.isnan(ep.sharpe_ratio(r))
    assert pf.sharpe_ratio(r) == 0.0
    assert pf.sortino_ratio(r, P) == 0.0
    assert pf.calmar_ratio(r, P) == 0.0
    # where the definitions agree, so do the numbers
    assert pf.annual_return(r, P) == 0.0 == ep.annual_return(r)
    assert pf.max_drawdown(r) == 0.0 == -ep.max_drawdown(r)
    assert pf.annual_volatility(r, P) == 0.0 == ep.annual_volatility(r)
    assert pf.downside_deviation(r) == 0.0 == ep.downside_risk(r)


def test_constant_nonzero_returns_have_undefined_sharpe():
    r = np.full(10, 0.001)
    assert math.isnan(pf.sharpe_ratio(r))
    assert pf.annual_volatility(r, P) == 0.0


def test_one_day_series():
    r = np.array([0.01])
    assert pf.annual_return(r, P) == pytest.approx(ep.annual_return(r))
    assert math.isnan(pf.sharpe_ratio(r)) and math.isnan(ep.sharpe_ratio(r))
    assert math.isnan(pf.annual_volatility(r, P))
    assert pf.max_drawdown(r) == 0.0


def test_gap_is_dropped_like_a_missing_day():
    r = _random_returns(3, 60)
    gapped = r.copy()
    gapped[20] = np.nan
    kept = np.delete(r, 20)
    assert pf.sharpe_ratio_annual(gapped, P) == pytest.approx(ep.sharpe_ratio(gapped), rel=1e-10)
    assert pf.annual_volatility(gapped, P) == pytest.approx(ep.annual_volatility(gapped), rel=1e-10)
    # empyrical counts the missing day in T; the convention counts observed periods only
    assert pf.annual_return(gapped, P) == pytest.approx(ep.annual_return(kept), rel=1e-10)
    assert pf.max_drawdown(gapped) == pytest.approx(-ep.max_drawdown(kept), rel=1e-10)


def test_total_loss_has_arr_minus_one():
    assert pf.annual_return(np.array([0.1, -1.0]), P) == -1.0
    assert pf.max_drawdown(np.array([0.1, -1.0])) == 1.0


def test_metrics_row_from_equity():
    rng = np.random.default_rng(11)
    equity = pd.Series(100_000 * np.cumprod(np.concatenate([[1.0], 1 + rng.normal(0, 0.01, 121)])))
    row = pf.metrics_row(equity, trades=7)
    assert list(row) == list(pf.METRIC_KEYS)
    r = equity.pct_change().dropna().to_numpy()
    assert row["ARR"] == pytest.approx((equity.iloc[-1] / equity.iloc[0]) ** (252 / 121) - 1)
    assert row["TR"] == pytest.approx(equity.iloc[-1] / equity.iloc[0] - 1)
    assert row["SR_day"] == pytest.approx(r.mean() / r.std(ddof=1))
    assert row["SR_ann"] == pytest.approx(ep.sharpe_ratio(r))
    assert row["MDD"] == pytest.approx(-ep.max_drawdown(r))
    assert row["Trades"] == 7.0


def test_sharpe_convention_on_a_constructed_price_series():
    """Prices that rise 2 % and 0 % on alternate days for 2n days: mean 1 %, std(ddof=1) = 1 % x sqrt(2n / (2n - 1)).

    So SR_day = sqrt((2n - 1) / 2n) per day and SR_ann = SR_day x sqrt(252) — the paper's scale, on
    which the metrics.csv column SR_ann and the paper table's SR are reported.
    """
    n = 60
    growth = np.tile([1.02, 1.00], n)
    prices = pd.Series(100.0 * np.concatenate([[1.0], np.cumprod(growth)]))
    row = pf.metrics_row(prices, trades=0, periods_per_year=P)
    sr_day = math.sqrt((2 * n - 1) / (2 * n))
    assert row["SR_day"] == pytest.approx(sr_day, rel=1e-12)
    assert row["SR_ann"] == pytest.approx(sr_day * math.sqrt(P), rel=1e-12)
    assert row["TR"] == pytest.approx(1.02**n - 1, rel=1e-12)
    assert row["ARR"] == pytest.approx(1.02 ** (n * P / (2 * n)) - 1, rel=1e-12)


@pytest.mark.parametrize("equity", [[100.0], [100.0, 100.0], [100.0] * 40, [], [0.0, 0.0, 0.0]])
def test_metrics_row_never_raises_on_degenerate_curves(equity):
    row = pf.metrics_row(pd.Series(equity, dtype=float), trades=0)
    assert row["MDD"] == 0.0 and row["Trades"] == 0.0


def test_average_row_is_the_mean_of_per_ticker_metrics_skipping_nan():
    rows = [{"ARR": 0.1, "SR_day": math.nan}, {"ARR": 0.3, "SR_day": 0.2}, {"ARR": -0.1, "SR_day": math.nan}]
    avg = pf.average_row(rows)
    assert avg["ARR"] == pytest.approx(0.1)
    assert avg["SR_day"] == pytest.approx(0.2)
    assert math.isnan(pf.average_row([{"SR_day": math.nan}])["SR_day"])
    with pytest.raises(ValueError, match="no rows"):
        pf.average_row([])


def test_column_functions_equal_the_one_series_functions_column_by_column():
    rng = np.random.default_rng(21)
    panel = rng.normal(0.001, 0.02, (80, 6))
    panel[:, 1] = 0.0  # flat
    panel[10:15, 2] = np.nan  # a gap
    panel[:, 3] = 0.002  # constant, non-zero
    panel[1:, 4] = np.nan  # one day
    panel[:, 5] = np.nan  # no data
    columns = [
        (pf.annual_return_columns(panel, P), lambda r: pf.annual_return(r, P)),
        (pf.sharpe_ratio_columns(panel), pf.sharpe_ratio),
        (pf.max_drawdown_columns(panel), pf.max_drawdown),
        (pf.std_columns(panel) * math.sqrt(P), lambda r: pf.annual_volatility(r, P)),
    ]
    for vectorised, single in columns:
        expected = [single(panel[:, k]) for k in range(panel.shape[1])]
        np.testing.assert_allclose(vectorised, expected, rtol=1e-12, equal_nan=True)
    assert pf.sharpe_ratio(panel[:, 0]) == pytest.approx(ep.sharpe_ratio(panel[:, 0], annualization=1), rel=1e-10)
