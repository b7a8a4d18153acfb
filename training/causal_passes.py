"""Exact fast paths for the trainers' per-token log-probability passes of a causal LM.

A causal model never lets position i see a position j > i. So when every row of a batch is
*right-padded only* (its real tokens form a prefix: attention mask 1…1 0…0), the real tokens
see no pad even without a padding mask, and the forward can take the causal kernel with no
4-D mask (transformers' SDPA path then calls `scaled_dot_product_attention(is_causal=True)`,
with native grouped-query attention instead of `repeat_kv` copies). Pad positions compute
garbage, but their labels are −100, so their log-probabilities are 0 as on the masked path.

TRL's GRPO batches are the prompt left-padded beside the completion right-padded
(mask 0…0 1…1 0…0). `pack_right` right-pads prompt and completion together: it shifts each
row left by its k_i leading pads (a per-row rotation), so the batch is right-padded only; the
outputs are rotated back. Real tokens then sit at positions 0…n_i − 1 instead of k_i…k_i + n_i − 1.
Under rotary position embeddings attention depends on position differences only, so this
changes no value beyond float rounding; where no row is left-padded (prompts of equal
length) nothing moves at all. A row whose real tokens are not one contiguous run (an interior
pad) cannot be packed: such a batch takes the masked path.

`shared_prefix_logps` goes further when the packed rows begin with the same tokens (every
completion of a GRPO step starts with the system prompt and tool schemas: 700 of 719 prompt
tokens on the compact protocol): the prefix's keys and values are computed once, for one row,
repeated over the batch (`repeat_interleave`, differentiable) and the rows' suffixes run on
that cache. The suffix's attention over [prefix; suffix] equals the full pass's, so the
log-probabilities agree to float rounding. Gradients are exact too: the prefix is computed once
inside the autograd graph, and the backward of `repeat_interleave` sums the B rows' gradients
with respect to the prefix's keys and values, which is exactly the sum over rows that the
full pass accumulates through B identical prefix computations (checked against the full pass
in tests/training/test_causal_passes.py). The prefix stops before the first scored position
(a label other than −100), so none of the log-probabilities it would have to produce is
needed: its length is L = min(longest common prefix of the rows' real tokens, first scored
position − 1).
"""

from __future__ import annotations

import torch

IGNORE = -100
"""The label of a position that is not scored (transformers' and TRL's convention)."""

MIN_SHARED_PREFIX = 16
"""Shorter common prefixes are not worth a second forward call."""


def right_padded(mask: torch.Tensor) -> bool:
    """True when every row of the 0/1 `mask` (B, T) is ones followed by zeros (no left or interior pad)."""
    mask = mask.bool()
    return bool(torch.all(mask[:, 1:] <= mask[:, :-1]))


def leading_pads(mask: torch.Tensor) -> torch.Tensor | None:
    """Per row, the number of pads before its first real token, (B,); None when some row's real
    tokens are not one contiguous run (an interior pad), which no rotation makes right-padded."""
    mask = mask.bool()
    lengths = mask.sum(dim=1)
    first = torch.where(lengths > 0, mask.int().argmax(dim=1), torch.zeros_like(lengths))
    positions = torch.arange(mask.size(1), device=mask.device)
    run = (positions >= first[:, None]) & (positions < (first + lengths)[:, None])
    return first if torch.equal(run, mask) else None


def rotate(values: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Row b rotated left by shift[b] along dim 1: out[b, i] = values[b, (i + shift[b]) mod T]."""
    width = values.size(1)
    index = (torch.arange(width, device=values.device)[None, :] + shift[:, None]) % width
    return values.gather(1, index)


def pack_right(input_ids: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """(ids, labels, shift) with each row rotated left by its leading pads, so the batch is
    right-padded only; None when a row has an interior pad (see the module docstring)."""
    shift = leading_pads(mask)
    if shift is None:
        return None
    return rotate(input_ids, shift), rotate(labels, shift), shift


def unpack_scores(scores: torch.Tensor, shift: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Per-token scores of a packed batch, (B, T − 1) with column j scoring token j + 1, back in the
    original layout of `labels` (B, T); 0 where the original label is −100."""
    by_token = torch.cat([scores.new_zeros(scores.size(0), 1), scores], dim=1)
    restored = rotate(by_token, -shift)[:, 1:]
    return restored.masked_fill(labels[:, 1:] == IGNORE, 0.0)


def shared_prefix_length(input_ids: torch.Tensor, labels: torch.Tensor, lengths: torch.Tensor) -> int:
    """L of the module docstring for a right-padded batch: the longest prefix all rows share among
    their real tokens (`lengths` per row), with the token after it still unscored (its
    log-probability would need the prefix's last hidden state, which the cached pass does not score)."""
    same = torch.all(input_ids == input_ids[:1], dim=0)
    common = int(same.int().cumprod(0).sum()) if len(same) else 0
    scored = (labels != IGNORE).any(dim=0).nonzero()
    first_scored = int(scored[0]) if len(scored) else labels.size(1)
    return max(0, min(common, int(lengths.min()), first_scored - 1))


def shared_prefix_logps(model, input_ids: torch.Tensor, labels: torch.Tensor, prefix: int):
    """TRL's fused log-prob output (`log_probs` (B, T − 1), `entropy` when configured) of a
    right-padded batch whose rows share their first `prefix` tokens, the prefix computed once
    (see the module docstring); None when the model's layers did not keep the prefix's keys and
    values (transformers drops the cache in layers under activation checkpointing while gradients
    are on). `model` carries TRL's fused LM head (`add_fused_lm_head`)."""
    rows = input_ids.size(0)
    cache = model(input_ids=input_ids[:1, :prefix], use_cache=True, logits_to_keep=1).cache
    if cache is None or cache.get_seq_length() != prefix:
        return None                                   # the layers kept no cache (activation checkpointing drops it)
    cache.batch_repeat_interleave(rows)
    tail = model(input_ids=input_ids[:, prefix:], cache=cache, labels=labels[:, prefix:], fused_lm_head=True)
    # The tail scores tokens prefix + 1 … T − 1 (columns prefix … T − 2); the prefix's are all unscored (0).
    pad = (rows, prefix)
    tail.log_probs = torch.cat([tail.log_probs.new_zeros(pad), tail.log_probs], dim=1)
    if getattr(tail, "entropy", None) is not None:
        tail.entropy = torch.cat([tail.entropy.new_zeros(pad), tail.entropy], dim=1)
    return tail


def fused_logps(model, input_ids: torch.Tensor, mask: torch.Tensor, logits_to_keep: int, *, unmasked: bool,
                shared_prefix: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-token log-probabilities and entropies (None unless the fused head computes them) of the
    last `logits_to_keep` tokens of each row, (B, logits_to_keep), as TRL's GRPO computes them
    (labels: the ids, −100 on pads and on every position before the last `logits_to_keep`).

    `unmasked`: a batch that `pack_right` can right-pad runs with no attention mask; otherwise,
    and for a batch with an interior pad, the masked path (TRL's own call). `shared_prefix`
    (needs `unmasked`): a packed batch whose rows share at least `MIN_SHARED_PREFIX` leading
    tokens computes them once (`shared_prefix_logps`)."""
    labels = input_ids.masked_fill(mask == 0, IGNORE)
    labels[:, :-logits_to_keep] = IGNORE
    packed = pack_right(input_ids, mask, labels) if unmasked else None
    if packed is None:
        outputs = model(input_ids=input_ids, attention_mask=mask, labels=labels, fused_lm_head=True)
        entropy = getattr(outputs, "entropy", None)
        return outputs.log_probs[:, -logits_to_keep:], None if entropy is None else entropy[:, -logits_to_keep:]
    ids, packed_labels, shift = packed
    prefix = shared_prefix_length(ids, packed_labels, mask.sum(dim=1)) if shared_prefix and len(ids) > 1 else 0
    outputs = shared_prefix_logps(model, ids, packed_labels, prefix) if prefix >= MIN_SHARED_PREFIX else None
    if outputs is None:
        outputs = model(input_ids=ids, labels=packed_labels, fused_lm_head=True)
    logps = unpack_scores(outputs.log_probs, shift, labels)[:, -logits_to_keep:]
    entropy = getattr(outputs, "entropy", None)
    return logps, None if entropy is None else unpack_scores(entropy, shift, labels)[:, -logits_to_keep:]
