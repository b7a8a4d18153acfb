"""The next token of every running row: greedy argmax, or a sample drawn with the row's own generator.

The batch's logits are processed together, but every operation works row by row, and each
row's randomness is one uniform number u per step from its own generator, so a row's token
depends on its own logits, parameters and generator, not on what else shares the batch. For a
sampled row with temperature T and nucleus p:

    probs  = softmax(logits / T) over the tokens the grammar allows
    if p < 1: sort probs descending; keep the tokens whose cumulative probability before them is < p
    token  = the first token whose cumulative kept probability exceeds u · (kept mass)   (inverse CDF)

Generators live on the CPU, so drawing u never waits for a GPU. Log-probabilities are
log_softmax(logits / T) (T = 1 when greedy) before the grammar mask and top-p: the model's own
distribution at that temperature, which a trainer recomputes.
"""

from __future__ import annotations

import torch

from llm_backends.types import SamplingParams


DISTINCT_SEEDS = 2**32
"""Seeds the generator tells apart: torch's CPU generator (mt19937) keeps the low 32 bits of a seed,
so seeds that agree there (0 and 2**32, 2**63 and -2**63) sample alike. The server accepts seeds in
[0, DISTINCT_SEEDS) only."""


def row_generator(seed: int | None) -> torch.Generator:
    """A CPU generator for one row: seeded with `seed`, or from fresh OS entropy when None."""
    generator = torch.Generator()
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(seed)
    return generator


def draw(logits: torch.Tensor, top_p: float | None, generators: list[torch.Generator]) -> torch.Tensor:
    """One token id per row of `logits` [rows, vocab] (already scaled and masked), by inverse CDF;
    `top_p` None keeps the whole distribution (no sort)."""
    probs = torch.softmax(logits, dim=-1)
    order = None
    if top_p is not None:
        probs, order = probs.sort(dim=-1, descending=True)
        probs = probs.masked_fill(probs.cumsum(-1) - probs >= top_p, 0.0)
    cdf = probs.cumsum(-1)
    u = torch.tensor([float(torch.rand((), generator=g)) for g in generators], dtype=cdf.dtype, device=cdf.device)
    pick = torch.searchsorted(cdf, (u * cdf[:, -1])[:, None], right=True)[:, 0].clamp(max=cdf.shape[1] - 1)
    return pick if order is None else order.gather(1, pick[:, None])[:, 0]


def choose_tokens(
    logits: torch.Tensor,
    params: list[SamplingParams],
    generators: list[torch.Generator | None],
    allowed: torch.Tensor | None,
    want_logprobs: list[bool],
) -> tuple[list[int], list[float | None]]:
    """The next token of each row from float32 logits [rows, vocab], and its log-probability where asked.

    `allowed` is the grammars' boolean mask [rows, vocab] (None: everything allowed).
    """
    temperatures = torch.tensor([1.0 if p.greedy else p.temperature for p in params], dtype=logits.dtype, device=logits.device)
    scaled = logits / temperatures[:, None]
    masked = scaled if allowed is None else scaled.masked_fill(~allowed, float("-inf"))
    tokens = masked.argmax(dim=-1)
    by_nucleus: dict[float | None, list[int]] = {}
    for i, p in enumerate(params):
        if not p.greedy:
            by_nucleus.setdefault(p.top_p if p.top_p < 1.0 else None, []).append(i)
    for top_p, rows in by_nucleus.items():
        index = torch.tensor(rows, device=logits.device)
        tokens[index] = draw(masked[index], top_p, [generators[i] for i in rows])
    logprobs: list[float | None] = [None] * len(params)
    wanted = [i for i, want in enumerate(want_logprobs) if want]
    if wanted:
        index = torch.tensor(wanted, device=logits.device)
        values = torch.log_softmax(scaled[index], dim=-1).gather(1, tokens[index][:, None])[:, 0].tolist()
        for i, value in zip(wanted, values):
            logprobs[i] = value
    return tokens.tolist(), logprobs
