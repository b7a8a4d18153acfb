"""EarnMore's masking: the mask ratio, a masked stock's weight at test, and the reconstruction loss."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from comparators.earnmore.actions import action_weights, masked_weight
from comparators.earnmore.agent import EarnMoreSettings, build_policy, pool_weights
from comparators.earnmore.model import MaskedStockEncoder, MaskRatio, random_mask


def test_mask_ratio_stays_in_its_interval_around_its_mean():
    rng = np.random.default_rng(0)
    ratios = np.array([MaskRatio().sample(rng) for _ in range(400)])
    assert ratios.min() >= 0.6 and ratios.max() <= 0.8
    assert abs(ratios.mean() - 0.7) < 0.015


def test_random_mask_hides_the_share_asked_and_leaves_one_visible():
    rng = np.random.default_rng(1)
    assert random_mask(rng, 24, 0.7).sum() == 17
    assert random_mask(rng, 2, 0.99).sum() == 1


def test_a_hard_mask_gives_exactly_zero_weight_and_the_soft_penalty_counts_it():
    action = torch.tensor([[0.0, 1.0, 1.0, -1.0]])
    mask = torch.tensor([[1.0, 0.0, 0.0]])
    weights = action_weights(action, 0.5, mask)
    assert weights[0, 1].item() == 0.0
    assert weights.sum().item() == pytest.approx(1.0)
    invested = action_weights(action, 0.5, mask, cash=False)
    assert invested[0, 0].item() == 0.0 and invested[0, 1].item() == 0.0
    assert invested.sum().item() == pytest.approx(1.0)
    soft = action_weights(action, 0.5)
    assert masked_weight(action, 0.5, mask).item() == pytest.approx(soft[0, 1].item())


def test_a_masked_stock_gets_no_weight_from_the_policy_at_test():
    settings = EarnMoreSettings(embed_dim=8, heads=2, hidden=8)
    config = {**settings.model_dump(), "tickers": ["A", "B", "C", "D", "E"], "n_features": 3}
    policy = build_policy(config)
    rng = np.random.default_rng(2)
    windows = rng.standard_normal((6, 5, settings.days, 3)).astype(np.float32)
    outside = np.zeros((6, 5), dtype=np.float32)
    outside[:, [1, 3]] = 1.0
    outside[0] = 0.0
    weights = pool_weights(policy, windows, outside, settings.temperature)
    assert np.allclose(weights.sum(axis=1), 1.0)
    assert (weights[1:, [2, 4]] == 0.0).all()
    assert (weights[0, 1:] > 0).all()
    assert (weights[1:, [0, 1, 3, 5]] > 0).all()


def test_the_reconstruction_loss_falls_in_a_short_run():
    """Stocks that share a factor: a masked stock's window is predictable from the visible ones."""
    torch.manual_seed(0)
    rng = np.random.default_rng(3)
    factor = rng.standard_normal((256, 1, 4, 2))
    windows = torch.as_tensor(factor + 0.1 * rng.standard_normal((256, 6, 4, 2)), dtype=torch.float32)
    masks = torch.as_tensor(np.stack([random_mask(rng, 6, 0.5) for _ in range(256)]))
    encoder = MaskedStockEncoder(6, 4, 2, embed_dim=16, heads=2)
    optimizer = torch.optim.Adam(encoder.parameters(), lr=3e-3)
    losses = []
    for step in range(60):
        batch = slice(32 * (step % 8), 32 * (step % 8 + 1))
        loss = encoder.reconstruction_loss(windows[batch], masks[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert np.mean(losses[-8:]) < 0.5 * np.mean(losses[:8])
