"""Split a set of requests into decoding batches that fit a token budget.

Each row of a batch has c cached prompt tokens (keys and values taken from the prefix store),
n prompt tokens still to compute, and up to m new tokens to generate. The batch lays every row
out on one grid of columns: cached prefixes right-aligned in the first max(c) columns, the
tokens to compute right-aligned in the next max(n), generated tokens after them. A batch of b
rows therefore holds b · (max c + max n + max m) positions in its KV cache; a batch is closed
before that would pass `max_batch_tokens` or b would pass `max_batch_size`. Rows are sorted
longest first, so rows of similar shape share a batch and padding stays small.
"""

from __future__ import annotations

from typing import NamedTuple


class RowShape(NamedTuple):
    """A row's cached prompt tokens, prompt tokens to compute, and most new tokens."""

    cached: int
    new: int
    max_new: int

    @property
    def total(self) -> int:
        """cached + new + max_new."""
        return self.cached + self.new + self.max_new


def batch_cost(shapes: list[RowShape]) -> int:
    """KV-cache positions of a batch: size · (max cached + max new + max max_new)."""
    if not shapes:
        return 0
    return len(shapes) * (max(s.cached for s in shapes) + max(s.new for s in shapes) + max(s.max_new for s in shapes))


def plan_batches(shapes: list[RowShape], max_batch_tokens: int, max_batch_size: int) -> list[list[int]]:
    """Indices of the rows in each batch, longest rows first.

    A row that alone exceeds the budget still gets a batch of its own (the budget bounds
    batching, it does not reject requests).
    """
    if max_batch_tokens <= 0 or max_batch_size <= 0:
        raise ValueError(f"max_batch_tokens and max_batch_size must be positive, got {max_batch_tokens}, {max_batch_size}")
    order = sorted(range(len(shapes)), key=lambda i: -shapes[i].total)
    batches: list[list[int]] = []
    for index in order:
        current = batches[-1] if batches else None
        if (
            current is not None
            and len(current) < max_batch_size
            and batch_cost([shapes[i] for i in current] + [shapes[index]]) <= max_batch_tokens
        ):
            current.append(index)
        else:
            batches.append([index])
    return batches
