"""EarnMore without the stock-identity embedding: the policy is the same function for every stock."""

from __future__ import annotations

import numpy as np
import pytest

from comparators.earnmore.agent import EarnMoreSettings, build_policy, pool_weights


def weights_before_and_after_a_permutation(stock_identity: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    settings = EarnMoreSettings(embed_dim=8, heads=2, hidden=8, stock_identity=stock_identity)
    policy = build_policy({**settings.model_dump(), "tickers": list("ABCDEF"), "n_features": 3})
    rng = np.random.default_rng(4)
    windows = rng.standard_normal((5, 6, settings.days, 3)).astype(np.float32)
    outside = np.zeros((5, 6), dtype=np.float32)
    outside[:, 2] = 1.0
    order = np.array([3, 0, 5, 2, 1, 4])
    weights = pool_weights(policy, windows, outside, settings.temperature, cash=False)
    permuted = pool_weights(policy, windows[:, order], outside[:, order], settings.temperature, cash=False)
    return weights[:, 1:], permuted[:, 1:], order


def test_without_stock_identity_permuting_the_stocks_permutes_their_weights():
    weights, permuted, order = weights_before_and_after_a_permutation(stock_identity=False)
    assert permuted == pytest.approx(weights[:, order], abs=1e-6)
    assert weights.std(axis=1).min() > 1e-4


def test_with_stock_identity_a_stock_weight_depends_on_its_place():
    weights, permuted, order = weights_before_and_after_a_permutation(stock_identity=True)
    assert np.abs(permuted - weights[:, order]).max() > 1e-5
