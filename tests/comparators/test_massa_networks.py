"""MASSA's networks: stacked per-agent maps, the reparameterised signal and its entropy term, the actors."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from comparators.massa.config import MassaConfig
from comparators.massa.learner import Learner, ReplayBuffer
from comparators.massa.networks import LOG_STD_RANGE, Actors, SignalNetwork, StackedLinear, bounded_log_std

B, N, F, C, D = 5, 3, 4, 6, 2


def test_stacked_linear_is_n_separate_linear_maps():
    torch.manual_seed(0)
    stacked = StackedLinear(N, F, 7)
    x = torch.randn(B, N, F)
    separate = [nn.Linear(F, 7) for _ in range(N)]
    for i, layer in enumerate(separate):
        layer.weight.data = stacked.weight[i].T.detach().clone()
        layer.bias.data = stacked.bias[i].detach().clone()
    expected = torch.stack([layer(x[:, i]) for i, layer in enumerate(separate)], dim=1)
    torch.testing.assert_close(stacked(x), expected)
    shared = torch.randn(B, F)
    torch.testing.assert_close(stacked(shared), stacked(shared[:, None].expand(B, N, F)))


def test_the_signal_has_one_vector_per_agent_and_its_exact_gaussian_log_density():
    torch.manual_seed(0)
    net = SignalNetwork(C, N, D, hidden=8)
    context = torch.randn(B, C)
    signal, log_prob = net.sample(context, torch.Generator().manual_seed(1))
    assert signal.shape == (B, N, D) and log_prob.shape == (B, N)
    mean, log_std = net._moments(context)
    reference = torch.distributions.Normal(mean, log_std.exp()).log_prob(signal).sum(-1)
    torch.testing.assert_close(log_prob, reference)
    torch.testing.assert_close(net.mode(context), mean)


def test_the_signal_is_reparameterised_gradients_reach_the_network_through_the_sample():
    torch.manual_seed(0)
    net = SignalNetwork(C, N, D, hidden=8)
    signal, _ = net.sample(torch.randn(B, C))
    signal.pow(2).sum().backward()
    assert net.mean.weight.grad.abs().sum() > 0 and net.log_std.weight.grad.abs().sum() > 0


def test_log_sigma_is_bounded_by_a_plus_b_tanh_and_keeps_a_gradient_beyond_the_old_clamp():
    """log σ = −1.5 + 3.5·tanh(z) ∈ (−5, 2); at z = 3 (a clamp to (−5, 2) would have held log σ at 2
    with no gradient) log σ is below 2 and its gradient is 3.5·(1 − tanh²3) > 0."""
    lo, hi = LOG_STD_RANGE
    z = torch.tensor([-3.0, 0.0, 3.0], requires_grad=True)
    log_std = bounded_log_std(z)
    torch.testing.assert_close(log_std, -1.5 + 3.5 * torch.tanh(z.detach()))
    assert lo < log_std.min().item() and log_std.max().item() < hi
    log_std.sum().backward()
    torch.testing.assert_close(z.grad, 3.5 * (1 - torch.tanh(z.detach()) ** 2))
    assert z.grad[2].item() > 0.03
    torch.manual_seed(0)
    net = SignalNetwork(C, N, D, hidden=8)
    with torch.no_grad():
        net.log_std.bias.fill_(3.0)  # every raw log σ far beyond the clamp's bound
    _, log_prob = net.sample(torch.randn(B, C), torch.Generator().manual_seed(1))
    log_prob.sum().backward()
    assert net.log_std.bias.grad.abs().min().item() > 0


def test_minus_the_mean_log_density_estimates_the_gaussian_entropy():
    """E[−log p(φ)] = Σ_d (½ log 2πe + log σ_d) per agent: the entropy the bonus rewards."""
    torch.manual_seed(0)
    net = SignalNetwork(C, N, D, hidden=8)
    context = torch.randn(1, C).expand(20_000, C)
    _, log_prob = net.sample(context, torch.Generator().manual_seed(2))
    _, log_std = net._moments(context[:1])
    entropy = (0.5 * math.log(2 * math.pi * math.e) + log_std).sum(-1)[0]
    torch.testing.assert_close(-log_prob.mean(0), entropy, atol=0.03, rtol=0)


def transitions(agents: int = N, observation: int = F, context: int = C, count: int = 200) -> ReplayBuffer:
    buffer = ReplayBuffer(count, agents, observation, context, seed=0)
    g = torch.Generator().manual_seed(3)
    for _ in range(count):
        buffer.add(o=torch.randn(agents, observation, generator=g).numpy(), c=torch.randn(context, generator=g).numpy(),
                   a=(0.05 * torch.rand(agents, generator=g)).numpy(), r=float(torch.randn(1, generator=g)),
                   o2=torch.randn(agents, observation, generator=g).numpy(), c2=torch.randn(context, generator=g).numpy())
    return buffer


def test_the_entropy_coefficient_enters_the_signal_loss_as_alpha_log_p():
    """Same seed, same batch: the signal losses with α and with 0 differ by α·Σ_i mean log p(φ_i|c)."""
    batch = transitions().sample(32)
    losses = {}
    for alpha in (0.0, 0.5):
        learner = Learner(MassaConfig(variant="massa", signal_dim=D, hidden=8, critic_hidden=8, entropy_coef=alpha), N, F, C, seed=0)
        losses[alpha] = learner.update(batch)
    entropy = losses[0.0]["signal_entropy"]
    assert losses[0.5]["signal_entropy"] == pytest.approx(entropy)
    assert losses[0.5]["signal_loss"] - losses[0.0]["signal_loss"] == pytest.approx(-0.5 * N * entropy, rel=1e-4)


@pytest.mark.parametrize("variant", ["massa", "no_signal", "constant_signal", "random_signal", "maddpg", "central"])
def test_every_variant_takes_an_update_and_changes_its_executed_policy(variant):
    learner = Learner(MassaConfig(variant=variant, signal_dim=D, hidden=8, critic_hidden=8), N, F, C, seed=0)
    before = {k: v.clone() for k, v in learner.policy.state_dict().items()}
    losses = learner.update(transitions().sample(32))
    assert all(math.isfinite(v) for v in losses.values())
    changed = [k for k, v in learner.policy.state_dict().items() if not torch.equal(v, before[k])]
    assert changed


def test_actors_are_bounded_by_the_max_step():
    actors = Actors(N, F, D, hidden=8, max_step=0.05)
    out = actors(100 * torch.randn(B, N, F), torch.randn(B, N, D))
    assert out.shape == (B, N) and out.abs().max() <= 0.05
