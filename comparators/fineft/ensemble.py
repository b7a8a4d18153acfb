"""FineFT's ensemble of Q-learners: N MLPs with identical shape and their own random initialisation.

Learner i maps the market state x (F features) and the previous target position p (one-hot over
the P positions) to the P action values Q_i(x, p, ·):

    h = ReLU(W₂·ReLU(W₁·[x, onehot(p)] + b₁) + b₂),   Q_i = W₃·h + b₃

The original's `ensemble_Qnet` feeds the previous action and the funding countdown beside the state
in the same way (the countdown is a state feature here, `state`). All learners run in one batched
matmul (`torch.baddbmm` over the learner axis), so an ensemble step costs about one wide MLP.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class EnsembleQ(nn.Module):
    """`learners` Q-networks over (state, previous position); forward → (batch, learners, positions)."""

    def __init__(self, features: int, positions: int, learners: int, hidden: int = 64):
        super().__init__()
        self.features, self.positions, self.learners, self.hidden = features, positions, learners, hidden
        sizes = [features + positions, hidden, hidden, positions]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            bound = 1.0 / math.sqrt(fan_in)
            self.weights.append(nn.Parameter(torch.empty(learners, fan_in, fan_out).uniform_(-bound, bound)))
            self.biases.append(nn.Parameter(torch.empty(learners, 1, fan_out).uniform_(-bound, bound)))

    def forward(self, state: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
        """Q-values (batch, learners, positions) for states (batch, F) and previous position indices (batch,)."""
        x = torch.cat([state, nn.functional.one_hot(previous, self.positions).to(state.dtype)], dim=1)
        h = x.unsqueeze(0).expand(self.learners, -1, -1)
        last = len(self.weights) - 1
        for k, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            h = torch.baddbmm(bias, h, weight)
            if k < last:
                h = torch.relu(h)
        return h.transpose(0, 1)
