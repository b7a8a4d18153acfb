"""The batch KV cache allocated once (`llm_backends.kv_buffer`) decodes exactly as transformers'
concatenating DynamicCache: prefill in chunks over a reused prefix, decode steps, rows dropped
from the batch, and writes past the capacity (the buffers grow)."""

from __future__ import annotations

import torch
from transformers import AutoModelForCausalLM, DynamicCache

from llm_backends.kv_buffer import buffered_cache
from llm_backends.tiny import TinySpec, ensure_tiny


def _logits_trace(model, cache, prompts: torch.Tensor, steps: int, drop_after: int) -> list[torch.Tensor]:
    """Logits of every forward: prompt in two chunks, then `steps` greedy decode steps; after
    `drop_after` steps the batch keeps its even rows."""
    rows, length = prompts.shape
    mask = torch.ones((rows, length + steps), dtype=torch.long)
    out, trace = None, []
    with torch.inference_mode():
        for begin, end in ((0, length // 2), (length // 2, length)):
            out = model(input_ids=prompts[:, begin:end], attention_mask=mask[:, :end], cache=cache, use_cache=True,
                        position_ids=torch.arange(begin, end).expand(prompts.shape[0], -1))
            trace.append(out.logits[:, -1])
        for step in range(steps):
            if step == drop_after:
                keep = torch.arange(0, mask.shape[0], 2)
                cache.batch_select_indices(keep)
                mask, out = mask[keep], type(out)(logits=out.logits[keep])
            column = length + step
            token = out.logits[:, -1].argmax(-1, keepdim=True)
            out = model(input_ids=token, attention_mask=mask[:, :column + 1], cache=cache, use_cache=True,
                        position_ids=torch.full((mask.shape[0], 1), column))
            trace.append(out.logits[:, -1])
    return trace


def test_buffers_decode_like_the_concatenating_cache(tiny_root):
    model = AutoModelForCausalLM.from_pretrained(ensure_tiny(TinySpec()), dtype=torch.float32).eval()
    prompts = torch.randint(0, model.config.vocab_size, (4, 24), generator=torch.Generator().manual_seed(1))
    layers = model.config.num_hidden_layers
    expected = _logits_trace(model, DynamicCache(config=model.config), prompts, steps=8, drop_after=3)
    for capacity in (24 + 8, 20):  # exactly the batch width; too small, so the buffers grow mid-run
        cache = buffered_cache(layers, capacity)
        got = _logits_trace(model, cache, prompts, steps=8, drop_after=3)
        assert all(torch.equal(a, b) for a, b in zip(expected, got))
        assert cache.get_seq_length() == 24 + 8 and cache.layers[0].keys.shape[0] == 2


def test_a_reused_prefix_fills_the_first_columns(tiny_root):
    model = AutoModelForCausalLM.from_pretrained(ensure_tiny(TinySpec()), dtype=torch.float32).eval()
    prompts = torch.randint(0, model.config.vocab_size, (2, 10), generator=torch.Generator().manual_seed(2))
    reference = DynamicCache(config=model.config)
    with torch.inference_mode():
        model(input_ids=prompts, cache=reference, use_cache=True)
    prefix = torch.stack([torch.stack((layer.keys, layer.values)) for layer in reference.layers])
    cache = buffered_cache(model.config.num_hidden_layers, 16, prefix)
    assert cache.get_seq_length() == 10
    assert all(torch.equal(a.keys, b.keys) and torch.equal(a.values, b.values) for a, b in zip(reference.layers, cache.layers))
