"""From SAC's action to portfolio weights, and the actor's penalty on masked stocks.

SAC's action a ∈ [−1, 1]^{N+1} (a tanh-squashed Gaussian; index 0 = cash, from the CLS token) is
read as logits over cash + N stocks with temperature T:

    w = softmax(a / T)                                  (training: every stock may get weight)
    w_j = exp(a_j/T)·[j unmasked] / Σ_k exp(a_k/T)·[k unmasked]   (serving a pool: masked w_j = 0)

Cash is never masked; with `cash=False` it is blocked like a masked stock (w_0 = 0: always fully
invested, the CLS coordinate unused). |a_j| ≤ 1 bounds the concentration: w_j / w_k ≤ exp(2/T).

The penalty on masked stocks (the original's "beta" loss, `get_object_beta`) is the weight the
policy puts on them, L_β = mean over the batch of Σ_i m_i·w_{i+1} with the unmasked softmax.
"""

from __future__ import annotations

import torch


def action_weights(action: torch.Tensor, temperature: float, mask: torch.Tensor | None = None,
                   cash: bool = True) -> torch.Tensor:
    """Weights (B, N+1) on cash + N stocks from actions (B, N+1); with `mask` (B, N) (1 = masked) the
    masked stocks get exactly 0, with `cash=False` the cash (module docstring)."""
    stocks = mask if mask is not None else torch.zeros_like(action[:, 1:])
    blocked = torch.cat([torch.full_like(stocks[:, :1], 0.0 if cash else 1.0), stocks], dim=1).bool()
    return torch.softmax((action / temperature).masked_fill(blocked, float("-inf")), dim=-1)


def masked_weight(action: torch.Tensor, temperature: float, mask: torch.Tensor, cash: bool = True) -> torch.Tensor:
    """L_β: the mean over the batch of the (unmasked) softmax weight on the masked stocks."""
    return (action_weights(action, temperature, cash=cash)[:, 1:] * mask).sum(dim=1).mean()
