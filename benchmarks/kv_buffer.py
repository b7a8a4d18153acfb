"""Decode steps with transformers' concatenating `DynamicCache` against `llm_backends.kv_buffer`'s
buffers allocated once, on SmolLM2-135M, side by side in one run.

    python benchmarks/kv_buffer.py                          # 16 rows, 1,500-token prompts, 48 new tokens
    python benchmarks/kv_buffer.py --rows 32 --prompt 1500 --new 64 --threads 2

Each way prefills the same random prompts in chunks of 256 columns, then feeds `--new` decode
steps (one token per row per step, greedy, no grammar) and reports the decode seconds per step;
the runs alternate `--repeats` times and the medians are compared. The logits of both ways are
checked to agree (max |difference| printed), so the buffers change speed only.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from transformers import DynamicCache

from llm_backends.kv_buffer import buffered_cache
from llm_backends.smollm2 import ensure_converted
from llm_backends.transformers_engine import load_pretrained


def decode(model, prompts: torch.Tensor, new: int, buffered: bool) -> tuple[float, torch.Tensor]:
    """(seconds per decode step, last logits) for one way."""
    rows, length = prompts.shape
    config = model.config
    cache = buffered_cache(config.num_hidden_layers, length + new) if buffered else DynamicCache(config=config)
    mask = torch.ones((rows, length + new), dtype=torch.long)
    with torch.inference_mode():
        for begin in range(0, length, 256):
            end = min(length, begin + 256)
            out = model(input_ids=prompts[:, begin:end], attention_mask=mask[:, :end], cache=cache, use_cache=True,
                        logits_to_keep=1, position_ids=torch.arange(begin, end).expand(rows, -1))
        token = out.logits[:, -1].argmax(-1, keepdim=True)
        start = time.perf_counter()
        for step in range(new):
            column = length + step
            out = model(input_ids=token, attention_mask=mask[:, :column + 1], cache=cache, use_cache=True,
                        logits_to_keep=1, position_ids=torch.full((rows, 1), column))
            token = out.logits[:, -1].argmax(-1, keepdim=True)
        return (time.perf_counter() - start) / new, out.logits[:, -1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--prompt", type=int, default=1500)
    parser.add_argument("--new", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, _ = load_pretrained(ensure_converted(), "cpu", "float32")
    prompts = torch.randint(0, model.config.vocab_size, (args.rows, args.prompt), generator=torch.Generator().manual_seed(0))
    times = {False: [], True: []}
    last = {}
    for _ in range(args.repeats):
        for buffered in (False, True):
            seconds, last[buffered] = decode(model, prompts, args.new, buffered)
            times[buffered].append(seconds)
    concat, buffers = statistics.median(times[False]), statistics.median(times[True])
    print(f"{args.rows} rows, {args.prompt}-token prompts, {args.new} decode steps, {args.threads} thread(s), median of {args.repeats}")
    print(f"DynamicCache (concatenating): {concat * 1000:.0f} ms per step")
    print(f"kv_buffer (allocated once):   {buffers * 1000:.0f} ms per step")
    print(f"speed-up: {concat / buffers:.2f}x; max |logit difference| {float((last[False] - last[True]).abs().max()):.2e}")


if __name__ == "__main__":
    main()
