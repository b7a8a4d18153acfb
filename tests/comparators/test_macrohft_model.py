"""MacroHFT's networks and episodic memory: mixing weights on the simplex, dueling heads, memory lookup."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from comparators.macrohft.memory import EpisodicMemory
from comparators.macrohft.model import HyperAgent, MacroHFT, SubAgent, mix_q


def _inputs(batch: int = 64, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, 5, generator=g), torch.randn(batch, 3, generator=g), torch.randn(batch, 2, generator=g),
            torch.randint(0, 2, (batch,), generator=g))


def test_hyper_agent_weights_sum_to_one_before_and_after_training():
    torch.manual_seed(0)
    hyper = HyperAgent(5, 3, 2, actions=2, agents=6, hidden=16)
    single, trend, context, previous = _inputs()
    weights = hyper(single, trend, context, previous)
    assert torch.allclose(weights, torch.full_like(weights, 1 / 6))   # zero-initialised last layer: uniform
    optimizer = torch.optim.Adam(hyper.parameters(), lr=0.05)
    for _ in range(30):   # push the weights towards agent 2 on half of the states
        loss = -(hyper(single, trend, context, previous)[:32, 2]).log().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    weights = hyper(single, trend, context, previous)
    assert torch.allclose(weights.sum(dim=1), torch.ones(64), atol=1e-6)
    assert (weights >= 0).all() and weights[:32, 2].mean() > 0.5


def test_context_changes_the_weights_once_trained():
    torch.manual_seed(1)
    hyper = HyperAgent(5, 3, 2, actions=2, agents=3, hidden=16)
    single, trend, context, previous = _inputs(seed=2)
    optimizer = torch.optim.Adam(hyper.parameters(), lr=0.05)
    wanted = (context[:, 0] > 0).long()    # agent 1 when the slope context is positive, else agent 0
    for _ in range(100):
        loss = -hyper(single, trend, context, previous).gather(1, wanted[:, None]).log().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert (hyper(single, trend, context, previous).argmax(dim=1) == wanted).float().mean() > 0.9


def test_subagent_is_dueling_and_conditioned_on_the_previous_action():
    torch.manual_seed(0)
    agent = SubAgent(5, 3, actions=3, hidden=8)
    single, trend, _, _ = _inputs(batch=4)
    q0 = agent(single, trend, torch.zeros(4, dtype=torch.long))
    q1 = agent(single, trend, torch.ones(4, dtype=torch.long))
    assert q0.shape == (4, 3) and not torch.allclose(q0, q1)
    x = agent.norm(agent.fc_single(single))
    shift, scale = agent.modulation(agent.embedding(torch.zeros(4, dtype=torch.long)) + agent.fc_trend(trend)).chunk(2, 1)
    h = x * (1 + scale) + shift
    assert torch.allclose(q0.mean(dim=1), agent.value(h).squeeze(1), atol=1e-6)


def test_mixed_q_is_the_weighted_sum_of_the_subagents():
    model = MacroHFT(5, 3, 2, actions=2, agents=6, hidden=8, hyper_hidden=8)
    single, trend, context, previous = _inputs(batch=8)
    qs = model.subagent_q(single, trend, previous)
    weights = model.hyper(single, trend, context, previous)
    expected = sum(weights[:, k:k + 1] * qs[:, k] for k in range(6))
    assert torch.allclose(model(single, trend, context, previous), expected, atol=1e-6)
    assert torch.allclose(mix_q(torch.eye(6)[[2] * 8], qs), qs[:, 2])


def test_memory_is_nan_until_full_then_kernel_weighted_over_the_top_k_with_the_action():
    memory = EpisodicMemory(capacity=4, k=3, key_dim=1)
    memory.add(np.array([[0.0], [1.0], [3.0]]), np.array([0, 1, 0]), np.array([10.0, 20.0, 30.0]))
    assert np.isnan(memory.query(np.array([[0.0]]), np.array([0]))).all()
    memory.add(np.array([[10.0]]), np.array([0]), np.array([40.0]))
    # query 0.5, action 0: top 3 by kernel are keys 0, 1, 3 (not 10); of those action 0: keys 0 and 3
    k0, k3 = 1 / (0.25 + 1e-3), 1 / (6.25 + 1e-3)
    assert memory.query(np.array([[0.5]]), np.array([0]))[0] == pytest.approx((k0 * 10 + k3 * 30) / (k0 + k3))
    assert memory.query(np.array([[0.5]]), np.array([1]))[0] == pytest.approx(20.0)
    memory.add(np.array([[0.5]]), np.array([1]), np.array([50.0]))     # FIFO: replaces key 0
    assert memory.query(np.array([[0.0]]), np.array([1]))[0] == pytest.approx(
        (1 / (0.25 + 1e-3) * 50 + 1 / (1 + 1e-3) * 20) / (1 / (0.25 + 1e-3) + 1 / (1 + 1e-3)))
