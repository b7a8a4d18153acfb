"""EarnMore's learning-rate schedule: every optimiser's rate falls linearly to `final_lr_fraction` of its start."""

from __future__ import annotations

import numpy as np
import pytest

from comparators.earnmore.env import PoolEnv
from comparators.earnmore.policy import EarnMorePolicy, EarnMoreSAC, TokenExtractor


def short_run(final_lr_fraction: float, steps: int = 40) -> EarnMoreSAC:
    rng = np.random.default_rng(5)
    windows = rng.standard_normal((60, 3, 2, 2)).astype(np.float32)
    opens = 10.0 * np.exp(np.cumsum(0.01 * rng.standard_normal((60, 3)), axis=0))
    env = PoolEnv(windows, opens, fee=0.001, temperature=0.2, horizon=8)
    model = EarnMoreSAC(EarnMorePolicy, env, seed=0, device="cpu", learning_rate=1e-3, aux_lr=2e-3,
                        learning_starts=8, batch_size=4, buffer_size=64, final_lr_fraction=final_lr_fraction,
                        policy_kwargs={"features_extractor_class": TokenExtractor,
                                       "features_extractor_kwargs": {"embed_dim": 4, "heads": 1, "mlp_ratio": 1.0},
                                       "hidden": 4})
    model.learn(total_timesteps=steps)
    return model


def rates(model: EarnMoreSAC) -> list[float]:
    optimisers = [model.actor.optimizer, model.critic.optimizer, model.ent_coef_optimizer, model.aux_optimizer]
    return [optimiser.param_groups[0]["lr"] for optimiser in optimisers]


def test_the_rates_fall_to_their_final_fraction():
    model = short_run(final_lr_fraction=0.1)      # SB3 trains after counting the step: the last at progress 1
    assert rates(model) == pytest.approx([1e-4, 1e-4, 1e-4, 2e-4])
    model._current_progress_remaining = 0.5
    model.train(1, batch_size=4)
    assert rates(model) == pytest.approx([5.5e-4, 5.5e-4, 5.5e-4, 1.1e-3])


def test_a_fraction_of_one_keeps_every_rate_constant():
    assert rates(short_run(final_lr_fraction=1.0)) == [1e-3, 1e-3, 1e-3, 2e-3]
