"""Centralised critics in training only: the executed policy of agent i reads its own asset and the
public signal, never another agent's observation, and no critic is part of what is executed."""

from __future__ import annotations

import pytest
import torch

from comparators.massa.config import MassaConfig
from comparators.massa.learner import Learner

N, F, C = 4, 5, 6
DECENTRALISED = ["massa", "no_signal", "constant_signal", "random_signal", "maddpg"]


def learner(variant: str) -> Learner:
    return Learner(MassaConfig(variant=variant, signal_dim=3, hidden=8, critic_hidden=8), N, F, C, seed=0)


def others_perturbed(o: torch.Tensor, agent: int) -> torch.Tensor:
    changed = o + 10.0 * torch.randn(o.shape, generator=torch.Generator().manual_seed(7))
    changed[:, agent] = o[:, agent]
    return changed


@pytest.mark.parametrize("variant", DECENTRALISED)
def test_an_agents_executed_action_ignores_every_other_agents_observation(variant):
    policy = learner(variant).policy
    o, c = torch.randn(3, N, F), torch.randn(3, C)
    for agent in range(N):
        before = policy.act(o, c, generator=torch.Generator().manual_seed(1))
        after = policy.act(others_perturbed(o, agent), c, generator=torch.Generator().manual_seed(1))
        torch.testing.assert_close(after[:, agent], before[:, agent], rtol=0, atol=0)
        assert not torch.equal(after, before)  # the others' actions did move: the perturbation reached them


def test_the_central_policy_control_does_read_every_observation():
    """The same perturbation moves a full-information policy's actions (the test above can fail)."""
    policy = learner("central").policy
    o, c = torch.randn(3, N, F), torch.randn(3, C)
    assert not torch.equal(policy.act(others_perturbed(o, 0), c)[:, 0], policy.act(o, c)[:, 0])


def test_the_signal_reads_the_public_context_and_moves_the_agents():
    policy = learner("massa").policy
    o, c = torch.randn(3, N, F), torch.randn(3, C)
    assert not torch.equal(policy.act(o, c + 1.0), policy.act(o, c))
    independent = learner("no_signal").policy
    torch.testing.assert_close(independent.act(o, c + 1.0), independent.act(o, c), rtol=0, atol=0)


@pytest.mark.parametrize("variant", DECENTRALISED + ["central"])
def test_no_critic_is_part_of_the_executed_policy(variant):
    trained = learner(variant)
    executed = set(trained.policy.state_dict())
    assert executed and not any("critic" in name for name in executed)
    critic_tensors = {id(p) for p in trained.critics.parameters()}
    assert not critic_tensors & {id(p) for p in trained.policy.parameters()}


def test_the_central_critics_do_see_the_other_agents():
    """Critic i's value moves with agent j's observation and action: centralised in training."""
    trained = learner("maddpg")
    o, c, a = torch.randn(3, N, F), torch.randn(3, C), 0.05 * torch.rand(3, N)
    q = trained._q(trained.critics, o, c, a)
    moved_obs = trained._q(trained.critics, others_perturbed(o, 0), c, a)
    moved_action = a.clone()
    moved_action[:, 1:] = -moved_action[:, 1:]
    assert not torch.equal(moved_obs[:, 0], q[:, 0])
    assert not torch.equal(trained._q(trained.critics, o, c, moved_action)[:, 0], q[:, 0])
