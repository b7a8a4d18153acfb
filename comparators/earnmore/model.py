"""EarnMore's masked stock-token encoder and its reconstruction loss (the original's `MaskTimeState`).

A state is a window x ∈ R^{N×W×F}: N stocks, their last W = `days` feature rows of F features.

- Token per stock: e_i = Linear(vec(x_i)) ∈ R^D (the original's patch embedding with a patch of the
  whole W×F window, `patch_size = feature_size`).
- Masking: m ∈ {0,1}^N (1 = masked). A masked stock's token is replaced by the learned mask token
  μ ∈ R^D: ẽ_i = (1 − m_i)·e_i + m_i·μ. The share of masked stocks in training is
  ρ ~ TruncNormal(μ = 0.7, σ = 0.1) on [0.6, 0.8] (`sample_mask_ratio`), ⌊ρ·N⌉ stocks drawn
  uniformly (`random_mask`); at test time the stocks outside the pool are the masked ones.
- Encoder: h = LN(Block([c; ẽ_1..ẽ_N] + P)), c the CLS token, P a learned position (stock identity)
  embedding, Block one pre-norm transformer layer (multi-head self-attention + GELU MLP). The
  N + 1 output tokens (CLS first) are the state the SAC actor and critics read. Without P
  (`stock_identity=False`) the encoder is permutation-equivariant: permuting the stocks permutes
  their output tokens and leaves CLS unchanged, so nothing it computes depends on a stock's place.
- Decoder: x̂_i = Linear(LN(Block'(h)))_i ∈ R^{W·F}, one more transformer layer; the
  reconstruction loss is the MSE over the masked stocks only,
  L_rec = Σ_i m_i‖x̂_i − vec(x_i)‖² / (W·F·Σ_i m_i).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import truncnorm
from torch import nn


class MaskRatio:
    """ρ ~ TruncNormal(mean, std) restricted to [low, high] (the original's `mask_ratio_generator`)."""

    def __init__(self, mean: float = 0.7, std: float = 0.1, low: float = 0.6, high: float = 0.8):
        if not low <= mean <= high or std <= 0:
            raise ValueError(f"mask ratio: need low <= mean <= high and std > 0, got {low}, {mean}, {high}, {std}")
        self.distribution = truncnorm((low - mean) / std, (high - mean) / std, loc=mean, scale=std)

    def sample(self, rng: np.random.Generator) -> float:
        """One ratio drawn with `rng`."""
        return float(self.distribution.rvs(random_state=rng))


def random_mask(rng: np.random.Generator, n_stocks: int, ratio: float) -> np.ndarray:
    """A 0/1 float vector of length `n_stocks` with round(ratio·n) ones (masked) at uniform positions,
    at least one stock left visible."""
    count = min(int(round(ratio * n_stocks)), n_stocks - 1)
    mask = np.zeros(n_stocks, dtype=np.float32)
    mask[rng.choice(n_stocks, size=count, replace=False)] = 1.0
    return mask


def transformer_layer(dim: int, heads: int, mlp_ratio: float) -> nn.TransformerEncoderLayer:
    """One pre-norm transformer block (self-attention + GELU MLP of width mlp_ratio·dim), no dropout."""
    return nn.TransformerEncoderLayer(dim, heads, dim_feedforward=int(mlp_ratio * dim), dropout=0.0,
                                      activation="gelu", batch_first=True, norm_first=True)


class MaskedStockEncoder(nn.Module):
    """Stock tokens → one transformer layer with CLS and mask tokens; a one-layer decoder for L_rec."""

    def __init__(self, n_stocks: int, days: int, n_features: int, embed_dim: int = 64, heads: int = 4,
                 mlp_ratio: float = 4.0, stock_identity: bool = True):
        super().__init__()
        self.n_stocks, self.days, self.n_features, self.embed_dim = n_stocks, days, n_features, embed_dim
        window = days * n_features
        self.embed = nn.Linear(window, embed_dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.mask_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.position = nn.Parameter(torch.zeros(1, n_stocks + 1, embed_dim)) if stock_identity else None
        self.encoder = transformer_layer(embed_dim, heads, mlp_ratio)
        self.norm = nn.LayerNorm(embed_dim)
        self.decoder = transformer_layer(embed_dim, heads, mlp_ratio)
        self.decoder_norm = nn.LayerNorm(embed_dim)
        self.reconstruct = nn.Linear(embed_dim, window)
        for parameter in (self.cls_token, self.mask_token, self.position):
            if parameter is not None:
                nn.init.trunc_normal_(parameter, std=0.02)

    def encode(self, windows: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Tokens h ∈ R^{B×(N+1)×D} (CLS first) of windows (B, N, W, F) under mask (B, N), 1 = masked."""
        tokens = self.embed(windows.flatten(2))
        masked = mask.unsqueeze(-1).to(tokens.dtype)
        tokens = tokens * (1.0 - masked) + self.mask_token * masked
        cls = self.cls_token.expand(tokens.shape[0], -1, -1)
        tokens = torch.cat([cls, tokens], dim=1)
        hidden = self.encoder(tokens if self.position is None else tokens + self.position)
        return self.norm(hidden)

    def reconstruction_loss(self, windows: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """L_rec: mean squared error of the decoded windows over the masked stocks (module docstring)."""
        hidden = self.encode(windows, mask)
        decoded = self.reconstruct(self.decoder_norm(self.decoder(hidden)))[:, 1:]
        error = (decoded - windows.flatten(2)).pow(2).mean(dim=-1)
        return (error * mask).sum() / mask.sum().clamp(min=1.0)
