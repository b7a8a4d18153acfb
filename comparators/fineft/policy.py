"""`FineFTModel`: everything FineFT decides with, in one torch module (so one state dict is the checkpoint).

- `ensemble`: the N Q-learners (`ensemble.EnsembleQ`), over x and the previous target;
- `vaes` and `chosen`: per market dynamic k a VAE and the index of its learner (stage II);
  `reference`: per VAE the 0, 0.1, …, 100th percentiles of its training states' ELBOs, the base of
  the ELBO quantile (`vae.elbo_quantile` reads them as the sorted base);
- `threshold`, `conservative` (stage III, tuned on validation) and the grid of target leverages.

States come in standardised (`comparators.features.Standardiser`, kept in the checkpoint's
config). `targets` plays a window: Q for every previous target of every bar in one batch (`tables`), then
the recursion a_t = greedy(t, a_{t−1}) over the bars (`path`); a decision of one bar is a window
of one bar that starts from the account's position.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from comparators.fineft.ensemble import EnsembleQ
from comparators.fineft.router import CONSERVATIVE, Conservative, Routing, conservative_target, route
from comparators.fineft.vae import StateVAE, elbo_of, elbo_quantile

REFERENCE_POINTS = 1001
"""Percentiles kept of each VAE's reference ELBOs."""


class FineFTModel(nn.Module):
    """The three stages' products (module docstring)."""

    def __init__(self, features: int, grid: np.ndarray, learners: int, dynamics: int, hidden: int = 64,
                 vae_latent: int = 4, vae_hidden: int = 32):
        super().__init__()
        self.register_buffer("grid", torch.as_tensor(grid, dtype=torch.float64))
        self.ensemble = EnsembleQ(features, len(grid), learners, hidden)
        self.vaes = nn.ModuleList(StateVAE(features, vae_latent, vae_hidden) for _ in range(dynamics))
        self.register_buffer("chosen", torch.zeros(dynamics, dtype=torch.long))
        self.register_buffer("reference", torch.zeros(dynamics, REFERENCE_POINTS, dtype=torch.float64))
        self.register_buffer("threshold", torch.zeros(1, dtype=torch.float64))
        self.conservative: Conservative = "flat"

    @property
    def flat(self) -> int:
        return len(self.grid) // 2

    def set_reference(self, k: int, elbos: np.ndarray) -> None:
        """Keep the percentiles of dynamic k's reference ELBOs."""
        self.reference[k] = torch.as_tensor(np.percentile(elbos, np.linspace(0, 100, REFERENCE_POINTS)))

    @torch.no_grad()
    def quantiles(self, x: np.ndarray) -> np.ndarray:
        """u_k(x) for every row of standardised states and every dynamic: (rows, K)."""
        return np.stack([elbo_quantile(elbo_of(v, x), self.reference[k].numpy()) for k, v in enumerate(self.vaes)],
                        axis=1)

    @torch.no_grad()
    def q_all(self, x: np.ndarray) -> np.ndarray:
        """Q-values (rows, previous positions, learners, targets) of standardised states for every previous target."""
        rows, positions = len(x), len(self.grid)
        state = torch.as_tensor(x).repeat_interleave(positions, dim=0)
        previous = torch.arange(positions).repeat(rows)
        return self.ensemble(state, previous).numpy().reshape(rows, positions, self.ensemble.learners, positions)

    def tables(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Q for every previous target `q_all`, ELBO quantiles `quantiles`) of a window of standardised states."""
        return self.q_all(x), self.quantiles(x)

    def path(self, tables: tuple[np.ndarray, np.ndarray], routing: Routing, start: int | None = None,
             threshold: float | None = None, conservative: Conservative | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(target index per bar, route per bar) from `tables`, starting from `start` (default flat); the
        model's threshold and conservative policy unless given (stage III's grid passes its own)."""
        q, quantiles = tables
        rows = np.arange(len(q))
        if routing == "ensemble":
            greedy, dynamic = q.mean(axis=2).argmax(axis=2), np.zeros(len(q), dtype=int)
        else:
            tau = (float(self.threshold) if threshold is None else threshold) if routing == "vae" else 0.0
            dynamic = route(quantiles, tau)
            greedy = q[rows, :, self.chosen.numpy()[np.maximum(dynamic, 0)], :].argmax(axis=2)
        mode = self.conservative if conservative is None else conservative
        previous = self.flat if start is None else start
        out = np.empty(len(q), dtype=int)
        for t in rows:
            previous = (conservative_target(previous, self.flat, mode) if dynamic[t] == CONSERVATIVE
                        else int(greedy[t, previous]))
            out[t] = previous
        return out, dynamic

    def targets(self, x: np.ndarray, routing: Routing, start: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(target index per bar, route per bar) over a window of standardised states."""
        return self.path(self.tables(x), routing, start)
