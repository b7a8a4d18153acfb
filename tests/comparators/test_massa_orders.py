"""Pro-rata scaling of the agents' orders under the gross cap (comparators/massa/orders.py)."""

from __future__ import annotations

import numpy as np
import pytest

from comparators.massa.env import weights_decision
from comparators.massa.orders import scale_orders
from harness.decision_checks import check_weights
from harness.tasks.portfolio import PortfolioConfig


def test_buys_beyond_cash_are_cut_by_the_same_factor():
    """w = (.3, .2, .1), cash .4; asks (+.2, +.3, −.05): the sale frees .05, headroom .45 for .5 of buys,
    λ = .9, so w' = (.3 + .18, .2 + .27, .05) and no cash is left."""
    orders = scale_orders(np.array([0.3, 0.2, 0.1]), np.array([0.2, 0.3, -0.05]), max_gross=1.0)
    assert orders.buy_scale == pytest.approx(0.9)
    assert orders.weights == pytest.approx([0.48, 0.47, 0.05])
    assert orders.cash == pytest.approx(0.0, abs=1e-12)
    assert orders.scaled and orders.requested_buys == pytest.approx(0.5)


def test_orders_within_the_cash_go_through_unscaled():
    orders = scale_orders(np.array([0.3, 0.2, 0.1]), np.array([0.05, 0.05, -0.05]), max_gross=1.0)
    assert orders.buy_scale == 1.0 and not orders.scaled
    assert orders.weights == pytest.approx([0.35, 0.25, 0.05])
    assert orders.cash == pytest.approx(0.35)


def test_a_sale_stops_at_zero_long_only():
    orders = scale_orders(np.array([0.02, 0.0]), np.array([-0.05, -0.05]), max_gross=1.0)
    assert orders.weights == pytest.approx([0.0, 0.0]) and orders.cash == pytest.approx(1.0)


def test_above_a_gross_cap_of_one_the_cash_may_go_negative_down_to_the_cap():
    """Cap 1.5: headroom 1.5 − .6 = .9 for 1.2 of buys, λ = .75, gross 1.5, cash −.5."""
    orders = scale_orders(np.array([0.3, 0.3]), np.array([0.6, 0.6]), max_gross=1.5)
    assert orders.buy_scale == pytest.approx(0.75)
    assert orders.weights.sum() == pytest.approx(1.5) and orders.cash == pytest.approx(-0.5)


def test_a_full_book_buys_nothing_more():
    orders = scale_orders(np.array([0.5, 0.5]), np.array([0.05, 0.01]), max_gross=1.0)
    assert orders.buy_scale == 0.0 and orders.weights == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("seed", range(20))
def test_scaled_orders_are_valid_decisions_of_the_task(seed):
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.ones(6)) * rng.uniform(0.3, 1.0)
    orders = scale_orders(weights, rng.uniform(-0.3, 0.3, 6), max_gross=1.0)
    decision = weights_decision(tuple("ABCDEF"), orders)
    assert check_weights(decision, PortfolioConfig()) is None
