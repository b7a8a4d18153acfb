"""Stage III: the VAE router hands out-of-distribution states to the conservative policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from comparators.fineft.policy import FineFTModel
from comparators.fineft.positions import position_grid
from comparators.fineft.router import CONSERVATIVE, route
from comparators.fineft.stage_two import VaeSettings, fit_dynamic_vaes

FEATURES = 4


def test_route_picks_the_best_matching_dynamic_or_the_conservative_policy():
    quantiles = np.array([[0.3, 0.8], [0.004, 0.002], [0.6, 0.1]])
    assert route(quantiles, 0.01).tolist() == [1, CONSERVATIVE, 0]
    assert route(quantiles, 0.0).tolist() == [1, 0, 0]


@pytest.fixture(scope="module")
def routed_model():  # fitting two VAEs: a few seconds on a quiet core
    """Two dynamics with states around −2 and +2 in every feature; learner 0 always wants +5x,
    learner 1 always −5x (their last layers' biases), so a target names the learner that chose it."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = FineFTModel(FEATURES, position_grid(5.0), learners=2, dynamics=2, hidden=8, vae_latent=2, vae_hidden=16)
    with torch.no_grad():
        model.ensemble.weights[-1].zero_()
        model.ensemble.biases[-1].zero_()
        model.ensemble.biases[-1][0, 0, 8] = 1.0
        model.ensemble.biases[-1][1, 0, 0] = 1.0
    model.chosen.copy_(torch.tensor([0, 1]))
    states = np.concatenate([rng.normal(-2.0, 0.5, (600, FEATURES)), rng.normal(2.0, 0.5, (600, FEATURES))]).astype(np.float32)
    labels = np.repeat([0, 1], 600)
    fit_dynamic_vaes(model, states, labels, VaeSettings(epochs=25, batch=64, lr=5e-3), torch.Generator().manual_seed(0),
                     rng, lambda k, epoch, loss: None)
    model.threshold.fill_(0.01)
    return model, rng


@pytest.mark.slow
def test_in_distribution_states_go_to_their_dynamics_learner(routed_model):
    model, rng = routed_model
    near_plus = rng.normal(2.0, 0.5, (200, FEATURES)).astype(np.float32)
    targets, dynamic = model.targets(near_plus, "vae")
    assert (dynamic == 1).mean() > 0.9
    assert (targets[dynamic == 1] == 0).all()  # learner 1 (dynamic 1) goes −5x


@pytest.mark.slow
def test_out_of_distribution_states_get_the_conservative_policy(routed_model):
    model, rng = routed_model
    far = rng.normal(12.0, 3.0, (200, FEATURES)).astype(np.float32)
    assert (model.quantiles(far).max(axis=1) < 0.01).all()
    model.conservative = "flat"
    targets, dynamic = model.targets(far, "vae", start=8)
    assert (dynamic == CONSERVATIVE).all() and (targets == model.flat).all()
    model.conservative = "hold"
    targets, _ = model.targets(far, "vae", start=8)
    assert (targets == 8).all()
    unrouted, _ = model.targets(far, "dynamics")
    assert (unrouted != model.flat).all()  # without the gate a learner keeps trading there
