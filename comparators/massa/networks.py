"""The networks of MASSA (He et al., RecSys 2020, arXiv 2008.09369) on the portfolio task.

N agents, one per asset. Shapes: B a batch, N agents, F an agent's observation width, C the
public context width, D the signal width.

- `StackedLinear`: N independent linear maps in one batched product, y[b, n] = x[b, n] W_n + c_n
  (or x[b] W_n + c_n when every map reads the same input). Agent n's output depends on its own
  slice of the input only, so N "separate networks" cost one `einsum` instead of N calls.
- `Actors`: agent i's deterministic actor a_i = m · tanh(f_i([o_i, φ_i])), its own weights, its
  own observation o_i and signal φ_i only (m = `max_step`, the largest weight change per bar).
- `SignalNetwork`: the public context c → a Gaussian signal per agent, φ_i = μ_i(c) + σ_i(c)·ε,
  ε ~ N(0, I) (reparameterised, so gradients reach the signal network through the actors),
  log σ bounded smoothly to (−5, 2) by a + b·tanh (`bounded_log_std`);
  log p(φ|c) = Σ_i Σ_d [−(ε_{i,d})²/2 − log σ_{i,d} − ½ log 2π], whose negative is the entropy
  term of the signal loss. Executed with φ = μ(c) (the mode).
- `ConstantSignal`: a learned vector per agent that ignores the context (a control).
- `CentralCritics`: N critics Q_i(x, a), x = (o_1 .. o_N, c) every agent's observation and the
  context, a = (a_1 .. a_N); the first layer is split into a state encoder shared by the critics
  and each critic's own action layer, so that critic i can be given its own action vector
  (MADDPG replaces agent i's buffered action by its actor's). Training only: no actor reads them.
- `LocalCritics`: Q_i(o_i, a_i) of independent learners (the no-signal control).
- `CentralPolicy`: one policy a = m · tanh(g(x)) over the full state (the full-information control).
"""

from __future__ import annotations

import math

import torch
from torch import nn

LOG_STD_RANGE = (-5.0, 2.0)
"""(lo, hi), the open range of the signal's log σ = a + b·tanh(z), a = (hi + lo)/2, b = (hi − lo)/2
(`bounded_log_std`): keeps log p finite and the signal from exploding."""


def bounded_log_std(raw: torch.Tensor) -> torch.Tensor:
    """log σ = a + b·tanh(z) ∈ (lo, hi) of `LOG_STD_RANGE`, with a gradient b·(1 − tanh²z) > 0 everywhere.

    The bounds and the squashing are CleanRL's SAC actor (cleanrl/sac_continuous_action.py:
    LOG_STD_MIN + ½(LOG_STD_MAX − LOG_STD_MIN)(tanh z + 1), the same as a + b·tanh z, with −5 and 2);
    Stable-Baselines3's SAC actor clamps instead, and a clamp passes no gradient to z outside the
    range. z = 0 gives log σ = a = −1.5 (σ ≈ 0.22).
    """
    lo, hi = LOG_STD_RANGE
    return 0.5 * (hi + lo) + 0.5 * (hi - lo) * torch.tanh(raw)


class StackedLinear(nn.Module):
    """N independent affine maps: [B, N, I] -> [B, N, O], or a shared input [B, I] -> [B, N, O]."""

    def __init__(self, count: int, inputs: int, outputs: int):
        super().__init__()
        bound = 1.0 / math.sqrt(inputs)
        self.weight = nn.Parameter(torch.empty(count, inputs, outputs).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(count, outputs).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            return torch.einsum("bi,nio->bno", x, self.weight) + self.bias
        return torch.einsum("bni,nio->bno", x, self.weight) + self.bias


class StackedMLP(nn.Module):
    """N independent MLPs (ReLU hidden layers) over [B, N, I] or a shared [B, I]: -> [B, N, O]."""

    def __init__(self, count: int, inputs: int, hidden: int, outputs: int, layers: int = 2):
        super().__init__()
        widths = [inputs, *([hidden] * layers), outputs]
        self.layers = nn.ModuleList(StackedLinear(count, a, b) for a, b in zip(widths[:-1], widths[1:]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x


class Actors(nn.Module):
    """a_i = max_step · tanh(f_i([o_i, φ_i])): [B, N, F] (and [B, N, D]) -> [B, N] weight changes."""

    def __init__(self, agents: int, observation: int, signal: int, hidden: int, max_step: float):
        super().__init__()
        self.signal = signal
        self.max_step = max_step
        self.body = StackedMLP(agents, observation + signal, hidden, 1)

    def forward(self, observations: torch.Tensor, signals: torch.Tensor | None = None) -> torch.Tensor:
        x = observations if signals is None else torch.cat([observations, signals], dim=-1)
        return self.max_step * torch.tanh(self.body(x).squeeze(-1))


class SignalNetwork(nn.Module):
    """Public context [B, C] -> a reparameterised Gaussian signal [B, N, D] per agent (module docstring)."""

    def __init__(self, context: int, agents: int, signal: int, hidden: int):
        super().__init__()
        self.agents, self.signal = agents, signal
        self.body = nn.Sequential(nn.Linear(context, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.mean = nn.Linear(hidden, agents * signal)
        self.log_std = nn.Linear(hidden, agents * signal)

    def _moments(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(context)
        shape = (context.shape[0], self.agents, self.signal)
        log_std = bounded_log_std(self.log_std(h))
        return self.mean(h).view(shape), log_std.view(shape)

    def sample(self, context: torch.Tensor, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(φ [B, N, D], log p(φ_i|c) [B, N]) with φ = μ + σ·ε, differentiable in the parameters."""
        mean, log_std = self._moments(context)
        noise = torch.randn(mean.shape, generator=generator, dtype=mean.dtype, device=mean.device)
        signal = mean + log_std.exp() * noise
        log_prob = (-0.5 * noise.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        return signal, log_prob

    def mode(self, context: torch.Tensor) -> torch.Tensor:
        """μ(c) [B, N, D]: the signal executed (no sampling at execution)."""
        return self._moments(context)[0]


class ConstantSignal(nn.Module):
    """A learned signal per agent that ignores the context: [B, C] -> [B, N, D] (the constant-signal control)."""

    def __init__(self, agents: int, signal: int):
        super().__init__()
        self.value = nn.Parameter(torch.zeros(agents, signal))

    def mode(self, context: torch.Tensor) -> torch.Tensor:
        return self.value.expand(context.shape[0], -1, -1)


class CentralCritics(nn.Module):
    """Q_i(x, a) for i = 1..K: state x [B, S] and per-critic actions [B, K, A] (or [B, A] for all) -> [B, K].

    Q_i(x, a) = g_i(relu(E x + U_i a + b_i)): the state encoder E is shared by the critics, the
    action layer U_i and the head g_i are each critic's own.
    """

    def __init__(self, critics: int, state: int, actions: int, hidden: int):
        super().__init__()
        self.critics = critics
        self.state_in = nn.Linear(state, hidden)
        self.action_in = StackedLinear(critics, actions, hidden)
        self.head = StackedMLP(critics, hidden, hidden, 1, layers=1)

    def forward(self, state: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.state_in(state).unsqueeze(1) + self.action_in(actions))
        return self.head(h).squeeze(-1)


class LocalCritics(nn.Module):
    """Q_i(o_i, a_i) of independent learners: [B, N, F] and [B, N] -> [B, N]."""

    def __init__(self, agents: int, observation: int, hidden: int):
        super().__init__()
        self.body = StackedMLP(agents, observation + 1, hidden, 1)

    def forward(self, observations: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return self.body(torch.cat([observations, actions.unsqueeze(-1)], dim=-1)).squeeze(-1)


class CentralPolicy(nn.Module):
    """a = max_step · tanh(g(x)): the full state [B, S] -> every agent's weight change [B, N]."""

    def __init__(self, state: int, agents: int, hidden: int, max_step: float):
        super().__init__()
        self.max_step = max_step
        self.body = nn.Sequential(nn.Linear(state, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, agents))

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        return self.max_step * torch.tanh(self.body(state))


def joint_state(observations: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
    """x = (o_1 .. o_N, c): [B, N, F] and [B, C] -> [B, N·F + C], what the centralised critics read."""
    return torch.cat([observations.flatten(1), context], dim=-1)
