"""BatchEnsemble layers and the BatchEnsemble MLP expert (Wen et al. 2020, as AlphaMix uses them).

A BatchEnsemble linear layer of M members shares one weight matrix W (out × in) and gives member m
a rank-1 factor r_m s_mᵀ (r_m ∈ R^in, s_m ∈ R^out) and its own bias b_m:

    y_m = ((x ⊙ r_m) Wᵀ) ⊙ s_m + b_m,   i.e. member m's weight is W ⊙ (s_m r_mᵀ)

Inputs and outputs are member-major tensors [M, B, features]. r and s start at random signs ±1
(the BatchEnsemble paper's initialisation), so members differ from the first step; W and the
biases start as `torch.nn.Linear`'s do.

The expert (`BatchEnsembleMLP`): input = the flattened window (window × features), two
BatchEnsemble layers of `hidden` units with LeakyReLU, then one shared linear head to 2 logits
(down, up), as AlphaMix's `BE_clf`. In training each member sees its own slice of the batch
(`split_logits`); in prediction every member sees every input and the expert's logits are the
members' mean (`mean_logits`).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from core.errors import ConfigError


class BatchEnsembleLinear(nn.Module):
    """y_m = ((x_m ⊙ r_m) Wᵀ) ⊙ s_m + b_m for m = 1..M (module docstring); x: [M, B, in] → [M, B, out]."""

    def __init__(self, in_features: int, out_features: int, ensemble_size: int):
        super().__init__()
        if ensemble_size < 1:
            raise ConfigError(f"ensemble_size {ensemble_size}: it must be at least 1")
        self.ensemble_size = ensemble_size
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.r = nn.Parameter(torch.empty(ensemble_size, in_features))
        self.s = nn.Parameter(torch.empty(ensemble_size, out_features))
        self.bias = nn.Parameter(torch.empty(ensemble_size, out_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1.0 / math.sqrt(in_features)
        nn.init.uniform_(self.bias, -bound, bound)
        with torch.no_grad():
            self.r.copy_(torch.randint(0, 2, self.r.shape).float() * 2 - 1)
            self.s.copy_(torch.randint(0, 2, self.s.shape).float() * 2 - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[0] != self.ensemble_size:
            raise ValueError(f"BatchEnsembleLinear takes [M={self.ensemble_size}, B, in], got {tuple(x.shape)}")
        return torch.matmul(x * self.r[:, None, :], self.weight.T) * self.s[:, None, :] + self.bias[:, None, :]


class BatchEnsembleMLP(nn.Module):
    """The AlphaMix expert: flattened window → 2 BatchEnsemble layers (LeakyReLU) → shared 2-logit head."""

    def __init__(self, input_size: int, hidden: int, ensemble_size: int):
        super().__init__()
        self.ensemble_size = ensemble_size
        self.layer1 = BatchEnsembleLinear(input_size, hidden, ensemble_size)
        self.layer2 = BatchEnsembleLinear(hidden, hidden, ensemble_size)
        self.head = nn.Linear(hidden, 2)
        self.act = nn.LeakyReLU()

    def member_logits(self, x: torch.Tensor) -> torch.Tensor:
        """[M, B, input] (member m's inputs) → [M, B, 2] logits."""
        return self.head(self.act(self.layer2(self.act(self.layer1(x)))))

    def split_logits(self, x: torch.Tensor) -> torch.Tensor:
        """Training: [B, input] with B divisible by M; member m takes rows m·B/M .. (m+1)·B/M − 1 → [B, 2]."""
        batch = x.shape[0]
        if batch % self.ensemble_size:
            raise ValueError(f"a training batch of {batch} rows does not split over {self.ensemble_size} members")
        out = self.member_logits(x.reshape(self.ensemble_size, batch // self.ensemble_size, -1))
        return out.reshape(batch, 2)

    def all_member_logits(self, x: torch.Tensor) -> torch.Tensor:
        """Prediction: [B, input] → [M, B, 2], every member on every row."""
        return self.member_logits(x.expand(self.ensemble_size, *x.shape))

    def mean_logits(self, x: torch.Tensor) -> torch.Tensor:
        """The expert's prediction: the mean over members of their logits, [B, 2]."""
        return self.all_member_logits(x).mean(dim=0)
