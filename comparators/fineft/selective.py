"""FineFT's selective ensemble-TD update (stage I): which learners a transition updates, and how much.

For one transition and N learners (ordered 0..N−1), the ensemble TD-error matrix

    E_ij = huber(y_j − Q_i(s, a)),   y_j = r + γ·(1 − done)·max_a' Q'_j(s', a')

(i: the learner being updated, j: the target network whose bootstrap it is measured against). Then

1. c = argmin_i E_ii, the learner with the smallest own TD error;
2. the window: learners j with E_cj ≤ E_cc + `window` (target values the chosen learner fits nearly as
   well as its own); [lo, hi] is the unbroken run of such j around c, widened by `reach` on each side
   and clipped to [0, N−1];
3. diagonal weights d_i = 1 − |i − c| / (hi − lo) for lo ≤ i ≤ hi (d_c = 1), 0 outside;
4. pair weights w_ii = d_i and, for i ≠ j, w_ij = min(d_i, d_j)·(1 − |i − j| / K), K = #{i : d_i > 0};
5. loss = mean over the batch of (1/N)·Σ_j Σ_i w_ij·E_ij.

So the best-fitting learner and its index neighbours inside the TD-error window learn from the
transition and the others do not: learners specialise in the transitions they already fit (the
paper's positive feedback loop). `d` also weighs the learners' Q-values in the KL term to the DP
teacher (`stage_one`). The rule is the original's (`RL/util/update.py`: `find_proper_index`,
`compute_error_weights`, `calculate_partial_loss`, with `outer_bond` = window, `reachout_index` =
reach), rewritten here over whole batches.
"""

from __future__ import annotations

import torch


def huber(x: torch.Tensor, kappa: float = 1.0) -> torch.Tensor:
    """0.5·x² for |x| ≤ κ, else κ·(|x| − κ/2)."""
    return torch.where(x.abs() <= kappa, 0.5 * x.pow(2), kappa * (x.abs() - 0.5 * kappa))


def selection_window(errors: torch.Tensor, window: float, reach: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(c, lo, hi) per transition of `errors` (batch, N, N): steps 1–2 of the module docstring."""
    n = errors.shape[1]
    own = torch.diagonal(errors, dim1=1, dim2=2)
    chosen = own.argmin(dim=1)
    rows = errors[torch.arange(errors.shape[0]), chosen]
    inside = rows <= (own.gather(1, chosen[:, None]) + window)
    index = torch.arange(n, device=errors.device).expand_as(inside)
    right_run = torch.cumprod((inside | (index < chosen[:, None])).int(), dim=1)
    left_run = torch.flip(torch.cumprod(torch.flip((inside | (index > chosen[:, None])).int(), [1]), dim=1), [1])
    hi = (right_run * index).max(dim=1).values
    lo = torch.where(left_run.bool(), index, n).min(dim=1).values
    return chosen, (lo - reach).clamp(0, n - 1), (hi + reach).clamp(0, n - 1)


def selective_weights(errors: torch.Tensor, window: float, reach: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(d, w): the learners' diagonal weights (batch, N) and the pair weights (batch, N, N), steps 1–4."""
    n = errors.shape[1]
    chosen, lo, hi = selection_window(errors.detach(), window, reach)
    index = torch.arange(n, device=errors.device).expand(errors.shape[0], n)
    span = (hi - lo).clamp(min=1).float()[:, None]
    inside = (index >= lo[:, None]) & (index <= hi[:, None])
    diagonal = torch.where(inside, 1.0 - (index - chosen[:, None]).abs().float() / span, 0.0)
    count = (diagonal > 0).sum(dim=1).float()[:, None, None]
    gap = (index[:, :, None] - index[:, None, :]).abs().float()
    pairs = torch.minimum(diagonal[:, :, None], diagonal[:, None, :]) * (1.0 - gap / count)
    eye = torch.eye(n, dtype=torch.bool, device=errors.device)
    pairs = torch.where(eye, torch.diag_embed(diagonal), pairs)
    return diagonal, pairs


def selective_td_loss(q_taken: torch.Tensor, targets: torch.Tensor, window: float, reach: int,
                      kappa: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, d) for Q_i(s, a) `q_taken` (batch, N) and bootstraps y_j `targets` (batch, N): step 5."""
    errors = huber(targets[:, None, :] - q_taken[:, :, None], kappa)
    diagonal, pairs = selective_weights(errors, window, reach)
    return (pairs * errors).sum(dim=1).mean(dim=1).mean(), diagonal
