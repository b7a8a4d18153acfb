"""FineFT's selective ensemble-TD weights on a hand example, and the loss they weigh."""

from __future__ import annotations

import torch

from comparators.fineft.selective import huber, selection_window, selective_td_loss, selective_weights


def hand_errors() -> torch.Tensor:
    """Five learners: learner 2 has the smallest own error (0.5); its row fits targets 1, 2 and 4
    within the window 2 (≤ 2.5) but not target 3, so the unbroken run around it is [1, 2]."""
    errors = torch.full((1, 5, 5), 7.0)
    errors[0].diagonal().copy_(torch.tensor([3.0, 2.0, 0.5, 1.5, 5.0]))
    errors[0, 2] = torch.tensor([9.0, 1.0, 0.5, 4.0, 2.0])
    return errors


def test_window_is_the_unbroken_run_around_the_best_learner_widened_by_reach():
    chosen, lo, hi = selection_window(hand_errors(), window=2.0, reach=1)
    assert (chosen.item(), lo.item(), hi.item()) == (2, 0, 3)
    chosen, lo, hi = selection_window(hand_errors(), window=2.0, reach=0)
    assert (lo.item(), hi.item()) == (1, 2)


def test_weights_match_the_hand_computation():
    # run [1, 2] widened by 1 → [0, 3], span 3: d = 1 − |i − 2| / 3 inside, 0 outside; K = 4 nonzero
    diagonal, pairs = selective_weights(hand_errors(), window=2.0, reach=1)
    expected_d = torch.tensor([1 / 3, 2 / 3, 1.0, 2 / 3, 0.0])
    assert torch.allclose(diagonal[0], expected_d)
    expected = torch.diag(expected_d)
    for i, j, w in [(0, 1, 1 / 3 * 3 / 4), (0, 2, 1 / 3 * 2 / 4), (0, 3, 1 / 3 * 1 / 4),
                    (1, 2, 2 / 3 * 3 / 4), (1, 3, 2 / 3 * 2 / 4), (2, 3, 2 / 3 * 3 / 4)]:
        expected[i, j] = expected[j, i] = w
    assert torch.allclose(pairs[0], expected)


def test_only_learners_inside_the_window_get_gradient():
    q_taken = torch.tensor([[0.0, 0.9, 1.05, 1.1, 6.0]], requires_grad=True)
    targets = torch.tensor([[5.0, 1.0, 1.0, 1.0, -3.0]])  # learner 2 fits targets 1..3 best, not 0 and 4
    loss, diagonal = selective_td_loss(q_taken, targets, window=0.01, reach=0)
    errors = huber(targets[:, None, :] - q_taken.detach()[:, :, None])
    _, pairs = selective_weights(errors, 0.01, 0)
    assert torch.isclose(loss, (pairs * errors).sum(dim=1).mean())
    loss.backward()
    updated = q_taken.grad[0] != 0
    assert updated.tolist() == (diagonal[0] > 0).tolist()
    assert updated[2] and not updated[0] and not updated[4]
