"""MacroHFT's networks (the original's `model/net.py`): condition sub-agents and the hyper-agent.

Sub-agent (a dueling Q-network whose LayerNorm is modulated, adaLN as in DiT, by a condition):

    h = LayerNorm(W1 s_single)                     (no affine parameters)
    c = Embed(a_prev) + W2 s_trend                 (the previous action and the trend state)
    shift, scale = Linear(SiLU(c)) split in two
    x = h · (1 + scale) + shift
    Q(s, a_prev, ·) = V(x) + A(x) − mean_a A(x)    (V, A: Linear → GELU(tanh) → Linear, width 4·hidden)

Hyper-agent (the mixing weights of the K frozen sub-agents):

    e = [Embed(a_prev), W1 [s_single, s_trend]]    (2·hidden; `encode`, the memory's key)
    shift, scale = Linear(SiLU(W2 s_context))
    w = softmax(MLP(LayerNorm(e) · (1 + scale) + shift))   ∈ simplex over the K sub-agents
    Q_mix(s, a_prev, a) = Σ_k w_k · Q_k(s, a_prev, a)

The last layer of the weight MLP starts at zero (uniform weights), as in the original.
`MacroHFT` holds the K sub-agents and the hyper-agent in one module (one checkpoint).
"""

from __future__ import annotations

import torch
from torch import nn


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """x · (1 + scale) + shift."""
    return x * (1 + scale) + shift


def _head(hidden: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(hidden, hidden * 4), nn.GELU(approximate="tanh"), nn.Linear(hidden * 4, out))


class SubAgent(nn.Module):
    """The dueling adaLN Q-network of one market condition (module docstring)."""

    def __init__(self, single_dim: int, trend_dim: int, actions: int, hidden: int = 64):
        super().__init__()
        self.fc_single = nn.Linear(single_dim, hidden)
        self.fc_trend = nn.Linear(trend_dim, hidden)
        self.norm = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.embedding = nn.Embedding(actions, hidden)
        self.modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 2 * hidden))
        self.advantage = _head(hidden, actions)
        self.value = _head(hidden, 1)

    def forward(self, single: torch.Tensor, trend: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
        """Q-values (B, actions) for states (B, F_single), (B, F_trend) and previous actions (B,)."""
        condition = self.embedding(previous) + self.fc_trend(trend)
        shift, scale = self.modulation(condition).chunk(2, dim=1)
        x = modulate(self.norm(self.fc_single(single)), shift, scale)
        advantage = self.advantage(x)
        return self.value(x) + advantage - advantage.mean(dim=1, keepdim=True)


class HyperAgent(nn.Module):
    """Softmax mixing weights over `agents` sub-agents, conditioned on the market context."""

    def __init__(self, single_dim: int, trend_dim: int, context_dim: int, actions: int, agents: int,
                 hidden: int = 32):
        super().__init__()
        self.fc_state = nn.Linear(single_dim + trend_dim, hidden)
        self.fc_context = nn.Linear(context_dim, hidden)
        self.norm = nn.LayerNorm(hidden * 2, elementwise_affine=False, eps=1e-6)
        self.embedding = nn.Embedding(actions, hidden)
        self.modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden, 4 * hidden))
        self.net = nn.Sequential(nn.Linear(hidden * 2, hidden * 4), nn.GELU(approximate="tanh"),
                                 nn.Linear(hidden * 4, agents))
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    def encode(self, single: torch.Tensor, trend: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
        """e (B, 2·hidden): the state's embedding, the episodic memory's key."""
        return torch.cat([self.embedding(previous), self.fc_state(torch.cat([single, trend], dim=1))], dim=1)

    def forward(self, single: torch.Tensor, trend: torch.Tensor, context: torch.Tensor,
                previous: torch.Tensor) -> torch.Tensor:
        """w (B, agents), each row on the simplex."""
        shift, scale = self.modulation(self.fc_context(context)).chunk(2, dim=1)
        x = modulate(self.norm(self.encode(single, trend, previous)), shift, scale)
        return self.net(x).softmax(dim=1)


def mix_q(weights: torch.Tensor, qs: torch.Tensor) -> torch.Tensor:
    """Q_mix (B, A) = Σ_k w_k Q_k for weights (B, K) and sub-agent Q-values (B, K, A)."""
    return torch.einsum("bk,bka->ba", weights, qs)


class MacroHFT(nn.Module):
    """The K sub-agents and the hyper-agent; `config` keys: single_dim, trend_dim, context_dim,
    actions, agents, hidden, hyper_hidden."""

    def __init__(self, single_dim: int, trend_dim: int, context_dim: int, actions: int, agents: int,
                 hidden: int = 64, hyper_hidden: int = 32):
        super().__init__()
        self.subagents = nn.ModuleList(SubAgent(single_dim, trend_dim, actions, hidden) for _ in range(agents))
        self.hyper = HyperAgent(single_dim, trend_dim, context_dim, actions, agents, hyper_hidden)

    def subagent_q(self, single: torch.Tensor, trend: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
        """(B, K, A): every sub-agent's Q-values."""
        return torch.stack([agent(single, trend, previous) for agent in self.subagents], dim=1)

    def forward(self, single: torch.Tensor, trend: torch.Tensor, context: torch.Tensor,
                previous: torch.Tensor) -> torch.Tensor:
        """Q_mix (B, A)."""
        return mix_q(self.hyper(single, trend, context, previous), self.subagent_q(single, trend, previous))


def build_model(config: dict) -> MacroHFT:
    """The model a checkpoint's config describes (`config["model"]`: the constructor's arguments)."""
    return MacroHFT(**config["model"])
