"""Throughput of the transformers engine: the real single-agent case with prefix reuse, batching
on short prompts, overhead against raw `model.generate`, micro-batching and the response cache.

    python benchmarks/llm_throughput.py --threads 1                   # both cases, SmolLM2 on CPU
    python benchmarks/llm_throughput.py --cases agent --decisions 3 --threads 1
    python benchmarks/llm_throughput.py --cases short --device cuda --model-arch qwen2.5-0.5b --batches 1 64 256

agent: the single agent's real prompt, a system message plus all eleven tool schemas
(`tools.TOOLS`) rendered by the chat template, for --decisions NVDA decisions on consecutive
trading days, each three turns long. After turns 1 and 2 the episode continues with the real
result of a tool (`tools.ToolSet` on the embedded data: get_market_data, then
get_stock_indicators; the calls are fixed, since a 135M model's own calls are unreliable)
appended as token ids to the ids it sampled (token in, token out). It runs four ways with the
same greedy `max_new_tokens`, the response cache off: one decision at a time or all decisions
batched turn by turn, each without and with prefix/continuation reuse (the store is emptied
before every run, so the first decision pays for the shared prompt). It reports, per decision,
wall time, prefill and decode time (`engine.decode_totals()`), prompt tokens, prompt tokens
computed and reused, and completion tokens; then the reuse gain in prefill time (target >= 3x)
and the batching gain in wall time.

short: for each batch size b, b different short chat prompts; raw `model.generate` on the
same left-padded prompts (the floor) against `TransformersEngine.generate` (templating,
tokenising, batching, our decode loop, tool-call parsing; prefix reuse off so repeats do not
reuse each other), completion tokens per second, the engine's overhead (engine time / raw time
- 1) and the batching gain (tokens/s at b / tokens/s at 1). Then --threaded callers, one thread
per conversation, first served one by one, then through MicroBatchingEngine. Finally the
largest batch twice through a response cache: the replay's speedup.

Every timing is the median of --repeats runs (raw and engine runs alternate). `qwen2.5-0.5b` is
Qwen2.5-0.5B's architecture with random weights (speed only), with the SmolLM2 tokenizer.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from transformers import AutoTokenizer, GenerationConfig, Qwen2Config, Qwen2ForCausalLM

from llm_backends.cache import ResponseCache
from llm_backends.engine import ChatEngine
from llm_backends.microbatch import MicroBatchingEngine
from llm_backends.smollm2 import ensure_converted, smollm2_engine
from llm_backends.transformers_engine import TransformersEngine, resolve_device, resolve_dtype
from llm_backends.types import SamplingParams, TokenRequest
from market.sources.embedded import load_embedded
from market.view import MarketView
from tools import TOOLS, ToolSet

TARGETS = {"batching": 4.0, "overhead": 0.15, "cache": 50.0, "reuse": 3.0}
TOPICS = ["a trader", "a storm", "the stock market", "a lighthouse", "a robot", "an old bank", "a river", "the moon"]
TICKER = "NVDA"
FIRST_DAY = "2024-06-03"
PROTOCOL = (
    "You are a trading analyst. Decide whether to BUY, SELL or HOLD the stock for the next trading day. "
    "You may call at most 8 tools, one per step. Before each action, reason inside <think></think>. "
    'Call a tool as <tool_call>{"name": ..., "arguments": {...}}</tool_call>; its result comes back inside '
    "<tool_response></tool_response>. End with <answer>BUY</answer>, <answer>SELL</answer> or <answer>HOLD</answer>."
)
TURN_TOOLS = [("get_market_data", {"ticker": TICKER}), ("get_stock_indicators", {"ticker": TICKER})]
"""The tool whose real result follows turn 1 and turn 2 (turn 3 is the last)."""


def median(values: list[float]) -> float:
    return statistics.median(values)


# ---------------------------------------------------------------------------------------------
# agent case


@dataclass
class Episode:
    """One decision: its first prompt, and the tool results that follow turns 1 and 2."""

    day: str
    prompt: list[int]
    tool_results: list[str]


@dataclass
class PerDecision:
    """Means over the decisions of one run."""

    wall_s: float
    prefill_s: float
    decode_s: float
    prompt_tokens: float
    computed_tokens: float
    reused_tokens: float
    completion_tokens: float


def episodes(engine: TransformersEngine, n: int) -> list[Episode]:
    """n decisions on consecutive trading days from FIRST_DAY, with their real tool results."""
    data = load_embedded([TICKER])
    days = [d.strftime("%Y-%m-%d") for d in data.bars[TICKER].index if d >= pd.Timestamp(FIRST_DAY)][:n]
    schemas = [spec.schema() for spec in TOOLS.values()]
    out = []
    for day in days:
        conversation = [{"role": "system", "content": PROTOCOL}, {"role": "user", "content": f"Date: {day}. Ticker: {TICKER}."}]
        toolset = ToolSet(MarketView(data, day))
        out.append(Episode(day, engine.render_ids(conversation, schemas), [toolset.call(name, args) for name, args in TURN_TOOLS]))
    return out


def tool_fragment(engine: TransformersEngine, completion: list[int], result: str) -> list[int]:
    """The ids that follow a turn: end of the assistant turn (unless it ended itself), the tool
    result as a user turn (as the chat template renders it), the next assistant prompt."""
    closing = "" if completion and completion[-1] in engine.eos_ids else "<|im_end|>"
    text = f"{closing}\n<|im_start|>user\n<tool_response>\n{result}\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
    return engine.tokenizer(text, add_special_tokens=False)["input_ids"]


def run_turns(engine: TransformersEngine, group: list[Episode], params: SamplingParams) -> list[list[int]]:
    """Three turns of the episodes in `group`, batched turn by turn; returns their completions."""
    histories = [e.prompt for e in group]
    completions: list[list[int]] = [[] for _ in group]
    for turn in range(len(TURN_TOOLS) + 1):
        results = engine.generate_tokens([TokenRequest(h, params) for h in histories])
        for i, (episode, result) in enumerate(zip(group, results)):
            completions[i] += result.completion_ids
            if turn < len(TURN_TOOLS):
                histories[i] = histories[i] + result.completion_ids + tool_fragment(engine, result.completion_ids, episode.tool_results[turn])
    return completions


def run_agent(engine: TransformersEngine, all_episodes: list[Episode], batched: bool, params: SamplingParams) -> tuple[PerDecision, list[list[int]]]:
    """One run (batched or one decision at a time) from an empty prefix store."""
    engine.clear_kv_cache()
    usage, totals = engine.usage.snapshot(), engine.decode_totals()
    start = time.perf_counter()
    groups = [all_episodes] if batched else [[e] for e in all_episodes]
    completions = [c for group in groups for c in run_turns(engine, group, params)]
    wall = time.perf_counter() - start
    after_usage, after = engine.usage.snapshot(), engine.decode_totals()
    n = len(all_episodes)
    return PerDecision(
        wall_s=wall / n,
        prefill_s=(after.prefill_s - totals.prefill_s) / n,
        decode_s=(after.decode_s - totals.decode_s) / n,
        prompt_tokens=(after_usage.prompt_tokens - usage.prompt_tokens) / n,
        computed_tokens=(after.prefill_tokens - totals.prefill_tokens) / n,
        reused_tokens=(after.reused_tokens - totals.reused_tokens) / n,
        completion_tokens=(after_usage.completion_tokens - usage.completion_tokens) / n,
    ), completions


def agent_case(engine: TransformersEngine, args: argparse.Namespace) -> None:
    """The four runs of the agent case, their medians, and the reuse and batching gains."""
    cold = TransformersEngine(engine.hf_model, engine.tokenizer, engine.model, kv_cache_mb=0,
                              max_batch_tokens=engine.max_batch_tokens, max_batch_size=engine.max_batch_size)
    params = SamplingParams(max_new_tokens=args.agent_new_tokens)
    work = episodes(engine, args.decisions)
    print(f"\nagent case: {len(work)} {TICKER} decisions ({work[0].day}..{work[-1].day}), 3 turns each, "
          f"first prompt {len(work[0].prompt)} tokens (11 tool schemas), max_new_tokens {params.max_new_tokens}, greedy, "
          f"response cache off, median of {args.agent_repeats}")
    modes = {(batched, reuse): (engine if reuse else cold) for batched in (False, True) for reuse in (False, True)}
    runs: dict[tuple[bool, bool], list[PerDecision]] = {mode: [] for mode in modes}
    completions: dict[tuple[bool, bool], list[list[int]]] = {}
    for _ in range(args.agent_repeats):
        for (batched, reuse), target in modes.items():
            measured, completions[(batched, reuse)] = run_agent(target, work, batched, params)
            runs[(batched, reuse)].append(measured)
    table = {mode: PerDecision(**{f.name: median([getattr(r, f.name) for r in rs]) for f in fields(PerDecision)}) for mode, rs in runs.items()}
    print(f"{'per decision':<24}{'wall s':>8}{'prefill s':>10}{'decode s':>9}{'prompt tok':>11}{'computed':>9}{'reused':>8}{'completion':>11}")
    for (batched, reuse), row in table.items():
        label = f"{'batched' if batched else 'one at a time'}, {'reuse' if reuse else 'no reuse'}"
        print(f"{label:<24}{row.wall_s:>8.2f}{row.prefill_s:>10.2f}{row.decode_s:>9.2f}{row.prompt_tokens:>11.0f}"
              f"{row.computed_tokens:>9.0f}{row.reused_tokens:>8.0f}{row.completion_tokens:>11.0f}")
    same = all(completions[(b, True)] == completions[(b, False)] for b in (False, True))
    print(f"same greedy completions with and without reuse: {'yes' if same else 'NO'}")
    for batched in (False, True):
        gain = table[(batched, False)].prefill_s / table[(batched, True)].prefill_s
        print(f"reuse gain in prefill time, {'batched' if batched else 'one at a time'}: {gain:.1f}x "
              f"(wall {table[(batched, False)].wall_s / table[(batched, True)].wall_s:.1f}x) "
              f">= {TARGETS['reuse']:.0f}x {verdict(gain >= TARGETS['reuse'])}")
    for reuse in (False, True):
        print(f"batched against one at a time, {'reuse' if reuse else 'no reuse'}: "
              f"{table[(False, reuse)].wall_s / table[(True, reuse)].wall_s:.2f}x in wall time per decision")


# ---------------------------------------------------------------------------------------------
# short case


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


def completion_length(row: list[int], eos_ids: set[int], pad_id: int | None) -> int:
    """Generated tokens of one `model.generate` row: up to and including its first end-of-sequence
    token, or up to the first pad; all if neither."""
    for i, token in enumerate(row):
        if token in eos_ids:
            return i + 1
        if token == pad_id:
            return i
    return len(row)


def time_raw(engine: TransformersEngine, convs: list[list[dict]], params: SamplingParams) -> tuple[float, int]:
    """Seconds and completion tokens of one greedy `model.generate` call on pre-tokenised prompts."""
    tok = engine.tokenizer
    enc = tok([engine.render(c) for c in convs], return_tensors="pt", padding=True, add_special_tokens=False).to(engine.device)
    config = GenerationConfig(max_new_tokens=params.max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id, eos_token_id=engine.eos_ids)
    sync(engine)
    start = time.perf_counter()
    with torch.inference_mode():
        out = engine.hf_model.generate(**enc, generation_config=config)
    sync(engine)
    seconds = time.perf_counter() - start
    generated = out[:, enc["input_ids"].shape[1]:].tolist()
    return seconds, sum(completion_length(row, set(engine.eos_ids), tok.pad_token_id) for row in generated)


def time_engine(engine: ChatEngine, convs: list[list[dict]], params: SamplingParams) -> tuple[float, int]:
    """Seconds and completion tokens of one `engine.generate` call."""
    sync(engine)
    start = time.perf_counter()
    results = engine.generate(convs, params=params)
    sync(engine)
    return time.perf_counter() - start, sum(r.completion_tokens for r in results)


def sync(engine: Any) -> None:
    """Wait for queued GPU work so wall times are honest."""
    if engine.device.type == "cuda":
        torch.cuda.synchronize()


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


def short_case(base: TransformersEngine, args: argparse.Namespace) -> None:
    """Batching gain, overhead against raw generate, micro-batching and cache replay on short prompts."""
    engine = TransformersEngine(base.hf_model, base.tokenizer, base.model, kv_cache_mb=0,
                                max_batch_tokens=base.max_batch_tokens, max_batch_size=base.max_batch_size)
    batches = sorted(set(args.batches) | {1})
    params = SamplingParams(max_new_tokens=args.max_new_tokens)
    print(f"\nshort case: max_new_tokens {args.max_new_tokens}, greedy, prefix reuse off, median of {args.repeats}")
    time_engine(engine, conversations(2), SamplingParams(max_new_tokens=4))  # warm-up
    print(f"{'batch':>5} {'tokens':>7} {'raw s':>8} {'engine s':>9} {'raw tok/s':>10} {'engine tok/s':>13} {'overhead':>9} {'gain vs b=1':>12}")
    base_rate = None
    overheads = []
    for b in batches:
        convs = conversations(b)
        pairs = [(time_raw(engine, convs, params), time_engine(engine, convs, params)) for _ in range(args.repeats)]
        raw_s, raw_tokens = median([raw[0] for raw, _ in pairs]), pairs[0][0][1]
        eng_s, eng_tokens = median([eng[0] for _, eng in pairs]), pairs[0][1][1]
        rate = eng_tokens / eng_s
        base_rate = base_rate or rate
        overheads.append(eng_s / raw_s - 1)
        print(f"{b:>5} {eng_tokens:>7} {raw_s:>8.2f} {eng_s:>9.2f} {raw_tokens / raw_s:>10.1f} {rate:>13.1f} "
              f"{overheads[-1]:>+8.1%} {rate / base_rate:>11.1f}x")
    gain = rate / base_rate
    if args.threaded:
        convs = conversations(args.threaded)
        serial = time_threaded(engine, convs, params)
        merged = time_threaded(MicroBatchingEngine(engine, max_wait_s=0.005), convs, params)
        print(f"{args.threaded} threads with one conversation each: one by one {serial:.2f} s, "
              f"micro-batched {merged:.2f} s ({serial / merged:.1f}x)")
    first, replay = cache_speedup(engine, conversations(max(batches)), params)
    print(f"cache: first run {first:.2f} s, replay {replay * 1000:.1f} ms, speedup {first / replay:,.0f}x")
    print(f"targets: batching gain at b={max(batches)} {gain:.1f}x >= {TARGETS['batching']:.0f}x {verdict(gain >= TARGETS['batching'])}; "
          f"worst overhead {max(overheads):+.1%} < {TARGETS['overhead']:.0%} {verdict(max(overheads) < TARGETS['overhead'])}; "
          f"cache {first / replay:,.0f}x >= {TARGETS['cache']:.0f}x {verdict(first / replay >= TARGETS['cache'])}")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=["agent", "short"], default=["agent", "short"])
    parser.add_argument("--model-arch", choices=["smollm2", "qwen2.5-0.5b"], default="smollm2")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="auto", help="auto: bfloat16 on GPU, float32 on CPU")
    parser.add_argument("--decisions", type=int, default=2, help="agent case: decisions per run")
    parser.add_argument("--agent-new-tokens", type=int, default=16, help="agent case: max_new_tokens of every turn")
    parser.add_argument("--agent-repeats", type=int, default=1, help="agent case: runs of each mode (median)")
    parser.add_argument("--batches", "--batch", type=int, nargs="+", default=[1, 16, 64], help="short case: batch sizes (1 is always added)")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="short case")
    parser.add_argument("--repeats", type=int, default=3, help="short case: raw and engine runs alternate; median of each")
    parser.add_argument("--threaded", type=int, default=16, help="short case: concurrent single-conversation callers (0: skip)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    engine = build_engine(args.model_arch, args.device, args.dtype, max(max(args.batches), args.decisions))
    print(f"model {engine.model} on {engine.device} ({engine.hf_model.dtype}), {torch.get_num_threads()} threads")
    for case, run in (("agent", agent_case), ("short", short_case)):
        if case in args.cases:
            start = time.perf_counter()
            run(engine, args)
            print(f"({case} case: {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
