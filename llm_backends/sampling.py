"""Each row's next token: greedy argmax, or a sample drawn with the row's own generator.

Every operation here works on one row's logits alone (the batch only shares the forward
pass), so a row's choice depends on its own logits, parameters and generator, not on what
else is in the batch. For a sampled row with temperature T and nucleus p:

    probs = softmax(logits / T) over the tokens the grammar allows
    keep the most probable tokens whose cumulative probability before them is < p
    token ~ multinomial(kept probs), drawn with the row's generator

Log-probabilities are log_softmax(logits / T) (T = 1 when greedy) before the grammar mask and
top-p: the model's own distribution at that temperature, which a trainer recomputes.
"""

from __future__ import annotations

import torch

from llm_backends.types import SamplingParams


def row_generator(seed: int | None, device: torch.device) -> torch.Generator:
    """A generator for one row: seeded with `seed`, or from fresh OS entropy when None."""
    generator = torch.Generator(device=device)
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(seed)
    return generator


def nucleus(probs: torch.Tensor, top_p: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The smallest set of most probable tokens whose mass reaches `top_p`: (their probs, their ids)."""
    ordered, ids = probs.sort(descending=True)
    before = ordered.cumsum(0) - ordered
    keep = before < top_p
    return ordered[keep], ids[keep]


def sample(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator) -> int:
    """One token id drawn from a row's (already masked) logits at temperature and top-p."""
    probs = torch.softmax(logits / params.temperature, dim=-1)
    if params.top_p < 1.0:
        kept, ids = nucleus(probs, params.top_p)
        return int(ids[torch.multinomial(kept, 1, generator=generator)])
    return int(torch.multinomial(probs, 1, generator=generator))


def choose(
    logits: torch.Tensor,
    params: SamplingParams,
    generator: torch.Generator | None,
    allowed: torch.Tensor | None,
    want_logprob: bool,
) -> tuple[int, float | None]:
    """The next token of one row from its float32 logits [vocab], and its log-probability if asked.

    `allowed` is the grammar's boolean mask over the vocabulary (None: everything allowed).
    """
    masked = logits if allowed is None else logits.masked_fill(~allowed, float("-inf"))
    if params.greedy or generator is None:
        token = int(masked.argmax())
    else:
        token = sample(masked, params, generator)
    if not want_logprob:
        return token, None
    temperature = 1.0 if params.greedy else params.temperature
    return token, float(torch.log_softmax(logits / temperature, dim=-1)[token])
