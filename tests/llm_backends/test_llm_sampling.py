"""The sampler draws from softmax(logits / T), restricted to the nucleus and the grammar's tokens."""

import math

import torch

from llm_backends.sampling import choose_tokens, draw, row_generator
from llm_backends.types import SamplingParams

PROBS = torch.tensor([0.5, 0.3, 0.2, 0.0])
N = 20_000


def frequencies(tokens: torch.Tensor) -> torch.Tensor:
    return torch.bincount(tokens, minlength=4).float() / len(tokens)


def test_draws_follow_the_distribution():
    logits = PROBS.clamp_min(1e-30).log().expand(N, 4)
    generator = row_generator(0)
    observed = frequencies(draw(logits, None, [generator] * N))
    assert torch.allclose(observed, PROBS, atol=0.015)


def test_top_p_keeps_only_the_nucleus():
    logits = PROBS.clamp_min(1e-30).log().expand(N, 4)
    observed = frequencies(draw(logits, 0.6, [row_generator(1)] * N))
    assert torch.allclose(observed, torch.tensor([0.5, 0.3, 0.0, 0.0]) / 0.8, atol=0.015)
    assert observed[2] == 0


def test_masked_tokens_are_never_drawn_and_temperature_sharpens():
    logits = torch.zeros(N, 4)
    allowed = torch.tensor([False, True, True, False]).expand(N, 4)
    params = [SamplingParams(temperature=1.0)] * N
    generator = row_generator(2)
    tokens, _ = choose_tokens(logits, params, [generator] * N, allowed, [False] * N)
    assert set(tokens) == {1, 2}
    sharp = torch.tensor([[0.0, math.log(2.0), 0.0, 0.0]]).expand(N, 4)
    tokens, _ = choose_tokens(sharp, [SamplingParams(temperature=0.5)] * N, [generator] * N, None, [False] * N)
    assert abs(tokens.count(1) / N - 4 / 7) < 0.015, "p ∝ exp(logit / T): 4 against 1 + 1 + 1"


def test_greedy_rows_take_the_argmax_and_logprobs_are_at_the_row_temperature():
    logits = torch.tensor([[0.0, 2.0, 1.0], [0.0, 2.0, 1.0]])
    params = [SamplingParams(), SamplingParams(temperature=0.5, seed=3)]
    tokens, logprobs = choose_tokens(logits, params, [None, row_generator(3)], None, [True, True])
    assert tokens[0] == 1
    assert math.isclose(logprobs[0], torch.log_softmax(logits[0], -1)[1].item(), rel_tol=1e-6)
    assert math.isclose(logprobs[1], torch.log_softmax(logits[1] / 0.5, -1)[tokens[1]].item(), rel_tol=1e-6)


def test_unseeded_generators_differ_and_seeded_ones_repeat():
    assert torch.rand(4, generator=row_generator(None)).tolist() != torch.rand(4, generator=row_generator(None)).tolist()
    assert torch.rand(4, generator=row_generator(5)).tolist() == torch.rand(4, generator=row_generator(5)).tolist()
