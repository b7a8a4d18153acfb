"""One small VAE per market dynamic (FineFT stage II) and the ELBO quantile that routes on it (stage III).

A Gaussian MLP VAE over a state x ∈ R^F: encoder q(z|x) = N(μ(x), diag σ²(x)), z ∈ R^Z, prior
N(0, I), decoder p(x|z) = N(m(z), diag s²(z)) with log s² clipped to [−6, 0] (the original's
`softclip` bounds). The evidence lower bound, in nats:

    ELBO(x) = E_q[log p(x|z)] − KL(q(z|x) ‖ N(0, I))
            ≈ −Σ_f [½·log(2π s_f²) + (x_f − m_f)² / (2 s_f²)] − ½·Σ_k (μ_k² + σ_k² − log σ_k² − 1)

(one reparameterised sample in training; z = μ when scoring, as the original's
`compute_vae_losses_batch`). Routing reads an ELBO relative to the dynamic's own states: the
quantile u(x) = #{x' in the VAE's reference states : ELBO(x') ≤ ELBO(x)} / n ∈ [0, 1] (the
original's sorted `ID_logpx` base), so u near 0 says "x is less likely than almost every state
this learner was chosen on". The original's VAE is wider (hidden 4096…1024, Z = 512) over LOB
features; this one is sized to the few OHLCV features of `state`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

LOG_VAR_BOUNDS = (-6.0, 0.0)
"""Bounds of the decoder's log-variance (nats), as the original's softclip."""


class StateVAE(nn.Module):
    """Gaussian MLP VAE over F state features with a Z-dimensional latent."""

    def __init__(self, features: int, latent: int = 4, hidden: int = 32):
        super().__init__()
        self.features, self.latent, self.hidden = features, latent, hidden
        self.encoder = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, 2 * features))

    def elbo(self, x: torch.Tensor, sample: bool = False) -> torch.Tensor:
        """ELBO(x) per row, in nats (module docstring); `sample` draws z ~ q(z|x), else z = μ."""
        mu, log_var = self.encoder(x).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * log_var).exp() if sample else mu
        mean, rec_log_var = self.decoder(z).chunk(2, dim=1)
        rec_log_var = rec_log_var.clamp(*LOG_VAR_BOUNDS)
        log_lik = -0.5 * (math.log(2 * math.pi) + rec_log_var + (x - mean).pow(2) / rec_log_var.exp()).sum(dim=1)
        kl = 0.5 * (mu.pow(2) + log_var.exp() - log_var - 1.0).sum(dim=1)
        return log_lik - kl


def fit_vae(vae: StateVAE, states: np.ndarray, epochs: int, batch: int, lr: float, generator: torch.Generator,
            log=None) -> list[float]:
    """Maximise the mean ELBO of `states` with Adam; the mean negative ELBO per epoch."""
    data = torch.as_tensor(states, dtype=torch.float32)
    optimizer = torch.optim.Adam(vae.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        order = torch.randperm(len(data), generator=generator)
        total = 0.0
        for lo in range(0, len(data), batch):
            rows = data[order[lo:lo + batch]]
            loss = -vae.elbo(rows, sample=True).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(rows)
        history.append(total / len(data))
        if log is not None:
            log(epoch, history[-1])
    return history


@torch.no_grad()
def elbo_of(vae: StateVAE, states: np.ndarray | torch.Tensor) -> np.ndarray:
    """ELBO(x) with z = μ for every row of `states`, as float64 numbers."""
    return vae.elbo(torch.as_tensor(states, dtype=torch.float32)).double().numpy()


def elbo_quantile(elbos: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """u = the share of the sorted `reference` ELBOs at or below each ELBO (module docstring)."""
    return np.searchsorted(reference, elbos, side="right") / len(reference)
