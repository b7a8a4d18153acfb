"""AlphaMix's BatchEnsemble layer and expert, the as-needed router and the greedy selection."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from comparators.alphamix.batch_ensemble import BatchEnsembleLinear, BatchEnsembleMLP
from comparators.alphamix.router import Router, as_needed, router_loss, running_means, weighted_bce
from comparators.alphamix.selection import greedy_selection, top_k_profit


def test_batch_ensemble_linear_is_a_shared_weight_with_rank_one_factors_and_own_biases():
    torch.manual_seed(0)
    layer = BatchEnsembleLinear(5, 3, ensemble_size=4)
    x = torch.randn(4, 7, 5)
    out = layer(x)
    assert out.shape == (4, 7, 3)
    for m in range(4):
        member_weight = layer.weight * torch.outer(layer.s[m], layer.r[m])
        torch.testing.assert_close(out[m], x[m] @ member_weight.T + layer.bias[m])
    shared = sum(p.numel() for p in layer.parameters())
    assert shared == 5 * 3 + 4 * (5 + 3 + 3)
    with pytest.raises(ValueError, match="M=4"):
        layer(torch.randn(3, 7, 5))


def test_members_of_an_expert_differ_and_its_prediction_is_their_mean():
    torch.manual_seed(1)
    expert = BatchEnsembleMLP(input_size=12, hidden=16, ensemble_size=4)
    x = torch.randn(9, 12)
    members = expert.all_member_logits(x)
    assert members.shape == (4, 9, 2)
    assert all(not torch.allclose(members[0], members[m]) for m in range(1, 4))
    torch.testing.assert_close(expert.mean_logits(x), members.mean(dim=0))


def test_in_training_each_member_reads_its_own_slice_of_the_batch():
    torch.manual_seed(2)
    expert = BatchEnsembleMLP(input_size=6, hidden=8, ensemble_size=2)
    x = torch.randn(8, 6)
    split = expert.split_logits(x)
    assert split.shape == (8, 2)
    torch.testing.assert_close(split[:4], expert.all_member_logits(x[:4])[0])
    torch.testing.assert_close(split[4:], expert.all_member_logits(x[4:])[1])
    with pytest.raises(ValueError, match="does not split"):
        expert.split_logits(torch.randn(7, 6))


class MarginRouter(nn.Module):
    """Judges a mixture wrong (logit +10) until its up-minus-down logit margin reaches 1."""

    def forward(self, last_features, mixture_logits):
        margin = (mixture_logits[..., 1] - mixture_logits[..., 0]).abs()
        return torch.where(margin >= 1.0, -10.0, 10.0)


def test_the_router_adds_groups_until_it_judges_the_mixture_right():
    # stock 0: margins of the running means 0.4, 0.7, 1.2 -> 3 groups; stock 1: 2.0 at once -> 1 group;
    # stock 2: never reaches 1 -> all 4 groups
    ups = torch.tensor([[0.4, 2.0, 0.1], [1.0, 2.0, 0.1], [2.2, 2.0, 0.1], [0.4, 2.0, 0.1]])
    groups = torch.stack([torch.zeros_like(ups), ups], dim=-1)
    last = torch.zeros(3, 5)
    logits, used = as_needed(MarginRouter(), last, groups, threshold=0.5)
    assert used.tolist() == [3, 1, 4]
    torch.testing.assert_close(logits[0], groups[:3, 0].mean(dim=0))
    torch.testing.assert_close(logits[1], groups[0, 1])
    torch.testing.assert_close(logits[2], groups[:, 2].mean(dim=0))
    _, eager = as_needed(MarginRouter(), last, groups, threshold=1.0)
    assert eager.tolist() == [1, 1, 1]


def test_the_router_loss_targets_wrong_prefixes_with_the_weighted_bce():
    torch.manual_seed(3)
    router = Router(feature_size=3, hidden=4, logit_scale=20.0)
    groups = torch.randn(3, 6, 2)
    last, labels = torch.randn(6, 3), torch.randint(0, 2, (6,))
    wrong = (running_means(groups).argmax(dim=-1) != labels).float()
    expected = weighted_bce(router(last.expand(3, 6, 3), running_means(groups)), wrong, 1.5)
    torch.testing.assert_close(router_loss(router, last, groups, labels, 1.5), expected)
    z, y = torch.tensor([0.3, -1.2]), torch.tensor([1.0, 0.0])
    torch.testing.assert_close(weighted_bce(z, y, 1.0), nn.functional.binary_cross_entropy_with_logits(z, y))


def test_top_k_profit_and_greedy_selection():
    returns = np.array([[0.01, -0.02, 0.03], [0.02, 0.00, -0.01]])
    assert top_k_profit(np.array([[0.9, 0.1, 0.8], [0.2, 0.9, 0.1]]), returns, 2) == pytest.approx(((0.01 + 0.03) / 2 + (0.00 + 0.02) / 2) / 2)
    good = torch.tensor(np.stack([np.zeros_like(returns), returns * 100], axis=-1), dtype=torch.float32)
    bad = -good
    kept = greedy_selection(torch.stack([bad, good, good * 0.5]), returns, k=1)
    assert kept[0] == 1 and 0 not in kept
