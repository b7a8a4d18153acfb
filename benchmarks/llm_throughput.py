"""Throughput of the transformers engine: batching gain, overhead against raw `model.generate`, cache speedup.

    python benchmarks/llm_throughput.py                       # SmolLM2-135M on CPU, batches 1, 16, 64
    python benchmarks/llm_throughput.py --device cuda --model-arch qwen2.5-0.5b --batches 1 64 256

For each batch size b it renders b different chat prompts once, then times, on the same model
and the same left-padded prompts with the same greedy settings:
  raw     `model.generate` on pre-tokenised inputs (the floor)
  engine  `TransformersEngine.generate` on the conversations (templating, tokenising, batching,
          decoding, tool-call parsing included)
and reports completion tokens per second (tokens / wall seconds; raw and engine runs alternate,
best of --repeats each, which keeps a busy machine's noise out of the comparison), the
engine's overhead (engine time / raw time − 1) and the batching gain (tokens/s at b ÷ tokens/s
at batch 1). Then --threaded callers, one thread per conversation, ask at the same time, first
served one by one, then through MicroBatchingEngine. Finally it runs the largest batch twice
through a response cache and reports the speedup of the replay. `qwen2.5-0.5b` is Qwen2.5-0.5B's architecture with random weights (speed
only), paired with the SmolLM2 tokenizer (both ChatML).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch
from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

from llm_backends.cache import ResponseCache
from llm_backends.engine import ChatEngine
from llm_backends.microbatch import MicroBatchingEngine
from llm_backends.smollm2 import ensure_converted, smollm2_engine
from llm_backends.transformers_engine import (
    TransformersEngine,
    completion_length,
    generation_config,
    resolve_device,
    resolve_dtype,
)
from llm_backends.types import SamplingParams

TARGETS = {"batching": 4.0, "overhead": 0.15, "cache": 50.0}
TOPICS = ["a trader", "a storm", "the stock market", "a lighthouse", "a robot", "an old bank", "a river", "the moon"]


def qwen25_05b_config(vocab_size: int) -> Qwen2Config:
    """Qwen2.5-0.5B-Instruct's architecture (24 layers, hidden 896, GQA 14/2, tied embeddings)."""
    return Qwen2Config(
        vocab_size=vocab_size, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
        num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
        rope_theta=1_000_000.0, tie_word_embeddings=True, rms_norm_eps=1e-6,
    )


def build_engine(arch: str, device: str, dtype: str, max_batch: int) -> TransformersEngine:
    """SmolLM2 (real weights) or a random Qwen2.5-0.5B, as one engine taking a whole batch at once."""
    if arch == "smollm2":
        return smollm2_engine(device, dtype, max_batch_tokens=10**9, max_batch_size=max_batch, cache=False)
    tokenizer = AutoTokenizer.from_pretrained(ensure_converted())
    target = resolve_device(device)
    torch.manual_seed(0)
    config = qwen25_05b_config(151_936)
    config.eos_token_id = tokenizer.eos_token_id
    config.pad_token_id = tokenizer.pad_token_id
    model = Qwen2ForCausalLM(config).to(target, resolve_dtype(dtype, target))
    return TransformersEngine(model, tokenizer, "qwen2.5-0.5b-random", max_batch_tokens=10**9, max_batch_size=max_batch)


def conversations(n: int) -> list[list[dict]]:
    """n distinct prompts asking for long answers (so rows rarely stop before max_new_tokens)."""
    return [
        [{"role": "user", "content": f"Write a long, detailed story about {TOPICS[i % len(TOPICS)]} number {i}."}]
        for i in range(n)
    ]


def time_raw(engine: TransformersEngine, convs: list[list[dict]], params: SamplingParams) -> tuple[float, int]:
    """Seconds and completion tokens of one `model.generate` call on pre-tokenised prompts."""
    tok = engine.tokenizer
    enc = tok([engine.render(c) for c in convs], return_tensors="pt", padding=True, add_special_tokens=False).to(engine.device)
    config = generation_config(params, tok.pad_token_id, engine.eos_ids)
    sync(engine)
    start = time.perf_counter()
    with torch.inference_mode():
        out = engine.hf_model.generate(**enc, generation_config=config)
    sync(engine)
    seconds = time.perf_counter() - start
    generated = out[:, enc["input_ids"].shape[1]:].tolist()
    return seconds, sum(completion_length(row, set(engine.eos_ids), tok.pad_token_id) for row in generated)


def time_engine(engine: TransformersEngine, convs: list[list[dict]], params: SamplingParams) -> tuple[float, int]:
    """Seconds and completion tokens of one `engine.generate` call."""
    sync(engine)
    start = time.perf_counter()
    results = engine.generate(convs, params=params)
    sync(engine)
    return time.perf_counter() - start, sum(r.completion_tokens for r in results)


def sync(engine: TransformersEngine) -> None:
    """Wait for queued GPU work so wall times are honest."""
    if engine.device.type == "cuda":
        torch.cuda.synchronize()


def best(runs: list[tuple[float, int]]) -> tuple[float, int]:
    """The fastest of repeated runs (same tokens each time under greedy decoding)."""
    return min(runs, key=lambda r: r[0])


def cache_speedup(engine: TransformersEngine, convs: list[list[dict]], params: SamplingParams) -> tuple[float, float]:
    """Seconds of a first (generating) and second (replayed) call through a fresh response cache."""
    with tempfile.TemporaryDirectory() as folder:
        engine.cache = ResponseCache(Path(folder) / "bench.sqlite")
        try:
            first, _ = time_engine(engine, convs, params)
            replay, _ = time_engine(engine, convs, params)
        finally:
            engine.cache.close()
            engine.cache = None
    return first, replay


def time_threaded(engine: ChatEngine, convs: list[list[dict]], params: SamplingParams) -> float:
    """Seconds for one thread per conversation, each calling `generate_one` at the same time."""
    start = time.perf_counter()
    with ThreadPoolExecutor(len(convs)) as pool:
        list(pool.map(lambda c: engine.generate_one(c, params=params), convs))
    return time.perf_counter() - start


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-arch", choices=["smollm2", "qwen2.5-0.5b"], default="smollm2")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="auto", help="auto: bfloat16 on GPU, float32 on CPU")
    parser.add_argument("--batches", "--batch", type=int, nargs="+", default=[1, 16, 64], help="batch sizes (1 is always added)")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="raw and engine runs alternate; best of each")
    parser.add_argument("--threaded", type=int, default=16, help="concurrent single-conversation callers (0: skip)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    batches = sorted(set(args.batches) | {1})
    engine = build_engine(args.model_arch, args.device, args.dtype, max(batches))
    params = SamplingParams(max_new_tokens=args.max_new_tokens)
    print(f"model {engine.model} on {engine.device} ({engine.hf_model.dtype}), {torch.get_num_threads()} threads, "
          f"max_new_tokens {args.max_new_tokens}, best of {args.repeats}")
    time_engine(engine, conversations(2), SamplingParams(max_new_tokens=4))  # warm-up
    print(f"{'batch':>5} {'tokens':>7} {'raw s':>8} {'engine s':>9} {'raw tok/s':>10} {'engine tok/s':>13} {'overhead':>9} {'gain vs b=1':>12}")
    base = None
    overheads = []
    for b in batches:
        convs = conversations(b)
        pairs = [(time_raw(engine, convs, params), time_engine(engine, convs, params)) for _ in range(args.repeats)]
        raw_s, raw_tokens = best([raw for raw, _ in pairs])
        eng_s, eng_tokens = best([eng for _, eng in pairs])
        rate = eng_tokens / eng_s
        base = base or rate
        overhead = eng_s / raw_s - 1
        overheads.append(overhead)
        print(f"{b:>5} {eng_tokens:>7} {raw_s:>8.2f} {eng_s:>9.2f} {raw_tokens / raw_s:>10.1f} {rate:>13.1f} "
              f"{overhead:>+8.1%} {rate / base:>11.1f}x")
    gain = rate / base
    worst_overhead = max(overheads)
    if args.threaded:
        convs = conversations(args.threaded)
        serial = time_threaded(engine, convs, params)
        merged = time_threaded(MicroBatchingEngine(engine, max_wait_s=0.005), convs, params)
        print(f"{args.threaded} threads with one conversation each: one by one {serial:.2f} s, "
              f"micro-batched {merged:.2f} s ({serial / merged:.1f}x)")
    first, replay = cache_speedup(engine, conversations(max(batches)), params)
    print(f"cache: first run {first:.2f} s, replay {replay * 1000:.1f} ms, speedup {first / replay:,.0f}x")
    print(f"targets: batching gain at b={max(batches)} {gain:.1f}x >= {TARGETS['batching']:.0f}x {verdict(gain >= TARGETS['batching'])}; "
          f"worst overhead {worst_overhead:+.1%} < {TARGETS['overhead']:.0%} {verdict(worst_overhead < TARGETS['overhead'])}; "
          f"cache {first / replay:,.0f}x >= {TARGETS['cache']:.0f}x {verdict(first / replay >= TARGETS['cache'])}")


if __name__ == "__main__":
    main()
