"""Split a set of prompts into generation batches that fit a token budget.

A left-padded batch of b prompts whose longest has L tokens, generating up to N new tokens,
holds b·(L + N) positions in its KV cache; a batch is closed before that product would pass
`max_batch_tokens` or b would pass `max_batch_size`. Prompts are sorted longest first, so
rows of similar length share a batch and padding stays small.
"""

from __future__ import annotations


def batch_cost(size: int, longest_prompt: int, max_new_tokens: int) -> int:
    """KV-cache positions of a padded batch: size · (longest_prompt + max_new_tokens)."""
    return size * (longest_prompt + max_new_tokens)


def plan_batches(
    prompt_lengths: list[int],
    max_new_tokens: int,
    max_batch_tokens: int,
    max_batch_size: int,
) -> list[list[int]]:
    """Indices of the prompts in each batch, longest prompts first.

    A prompt that alone exceeds the budget still gets a batch of its own (the budget bounds
    batching, it does not reject requests).
    """
    if max_batch_tokens <= 0 or max_batch_size <= 0:
        raise ValueError(f"max_batch_tokens and max_batch_size must be positive, got {max_batch_tokens}, {max_batch_size}")
    order = sorted(range(len(prompt_lengths)), key=lambda i: -prompt_lengths[i])
    batches: list[list[int]] = []
    for index in order:
        current = batches[-1] if batches else None
        if (
            current is not None
            and len(current) < max_batch_size
            and batch_cost(len(current) + 1, prompt_lengths[current[0]], max_new_tokens) <= max_batch_tokens
        ):
            current.append(index)
        else:
            batches.append([index])
    return batches
