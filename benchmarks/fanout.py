"""Fan-out of an LLM framework: N decisions one after another vs all at once, same engine config.

    python benchmarks/fanout.py multi_agent                      # 8 decisions: MSFT, NVDA × 4 days
    python benchmarks/fanout.py multi_agent -n 20 --threads 1 max_debate_rounds=2
    python benchmarks/fanout.py single_agent -n 16 --threads 1         # any configs/framework name

It builds the framework from `configs/framework/FRAMEWORK.yaml` (plus `key=value` overrides of
that config), makes 2N + 1 decision contexts on the embedded market (the first trading days of
the quick window, tickers in turn), decides the last one to warm up, then times, in one run:
  sequential  `decide([context])` for each of the first N contexts, one after another;
  concurrent  `decide(contexts)` for the next N: the whole batch in one call, as the runner
              hands it over.
The phases decide different contexts: a local engine keeps the keys and values of every
prompt it computed (its prefix store), so a phase repeating the other's greedy episodes would
find them all there and skip their prefill. Both find the shared prompt prefix the warm-up
stored.

It prints both wall times and process CPU times, their ratio, LLM calls and tokens per
decision (prompt and completion apart) next to the 27.2K tokens per decision the AlphaQuanter
paper measured for TradingAgents, and the framework's resolved config (its max_new_tokens).

Every generation must be fresh: the run uses its own empty response cache (converted models
are shared), the two phases use different seeds (part of the cache key), and the script
stops if any LLM call was served from a cache. `--threads 1` keeps torch from fighting for
the cores of a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf

from llm_backends.paths import CACHE_ENV, cache_root
from market.decision import Decision, DecisionContext
from market.view import MarketView
from tools import ToolSet

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
PAPER_TOKENS_PER_DECISION = 27_200
"""TradingAgents' tokens per decision as measured in the AlphaQuanter paper (arXiv 2510.14264)."""


def isolated_cache() -> Path:
    """A fresh cache root whose `models` folder is the real one: no stale answers, no reconversion."""
    models = cache_root() / "models"
    models.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="fanout-cache-"))
    (root / "models").symlink_to(models, target_is_directory=True)
    os.environ[CACHE_ENV] = str(root)
    return root


def framework_config(name: str, overrides: list[str], tickers: list[str]):
    """The run config with the framework under `frameworks.bench` (overrides apply to it)."""
    with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
        return compose("config", overrides=[
            "name=fanout", f"tickers=[{','.join(tickers)}]", f"+framework@frameworks.bench={name}",
            *(f"frameworks.bench.{override}" for override in overrides)])


def make_contexts(cfg, count: int) -> list[DecisionContext]:
    """`count` contexts: the quick window's first trading days, tickers in turn."""
    data = instantiate(cfg.data)
    tickers = list(cfg.tickers)
    days = {t: data.trading_days(t, cfg.split.test.start, cfg.split.test.end) for t in tickers}
    keys = [(tickers[i % len(tickers)], days[tickers[i % len(tickers)]][i // len(tickers)]) for i in range(count)]
    names = list(cfg.tools) if cfg.tools is not None else None
    return [DecisionContext(ticker=t, date=d, view=MarketView(data, d), seed=0,
                            tools=ToolSet(MarketView(data, d), names=names)) for t, d in keys]


def reseeded(contexts: list[DecisionContext], seed: int) -> list[DecisionContext]:
    """The same contexts under another seed, with fresh tool sets (their records start empty)."""
    return [DecisionContext(ticker=c.ticker, date=c.date, view=c.view, seed=seed,
                            tools=ToolSet(c.view, names=c.tools.names) if c.tools else None) for c in contexts]


def timed(run) -> tuple[list[Decision], float, float]:
    """(decisions, wall seconds, process CPU seconds) of `run()`."""
    wall, cpu = time.perf_counter(), time.process_time()
    decisions = run()
    return decisions, time.perf_counter() - wall, time.process_time() - cpu


def per_decision(decisions: list[Decision]) -> dict[str, float]:
    """Mean LLM calls, prompt and completion tokens per decision, and the fallback share."""
    calls = [c for d in decisions for c in d.trace.llm_calls]
    n = len(decisions)
    return {"llm_calls": len(calls) / n, "prompt": sum(c.prompt_tokens for c in calls) / n,
            "completion": sum(c.completion_tokens for c in calls) / n,
            "fallback": sum(d.trace.fallback or d.trace.error is not None for d in decisions) / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("framework", help="a configs/framework name, e.g. multi_agent")
    parser.add_argument("overrides", nargs="*", help="key=value overrides of the framework config")
    parser.add_argument("-n", "--decisions", type=int, default=8)
    parser.add_argument("--tickers", nargs="+", default=["MSFT", "NVDA"])
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        import torch
        torch.set_num_threads(args.threads)

    cache = isolated_cache()
    try:
        measure(args, cache)
    finally:
        shutil.rmtree(cache)


def measure(args: argparse.Namespace, cache: Path) -> None:
    """Build the framework, warm it up, time both phases and print the table."""
    cfg = framework_config(args.framework, args.overrides, args.tickers)
    print(f"{args.framework}: {json.dumps(OmegaConf.to_container(cfg.frameworks.bench, resolve=True))}")
    started = time.perf_counter()
    framework = instantiate(cfg.frameworks.bench)
    n = args.decisions
    contexts = make_contexts(cfg, 2 * n + 1)
    warmup, first, second = contexts[-1:], contexts[:n], contexts[n:2 * n]
    print(f"built in {time.perf_counter() - started:.1f} s; response cache {cache}; 2 x {n} decisions on "
          f"{', '.join(args.tickers)} from {first[0].date:%Y-%m-%d}")
    framework.decide(reseeded(warmup, 2))

    sequential, seq_wall, seq_cpu = timed(lambda: [framework.decide([c])[0] for c in first])
    concurrent, con_wall, con_cpu = timed(lambda: framework.decide(reseeded(second, 1)))
    cached = sum(c.cached for d in sequential + concurrent for c in d.trace.llm_calls)
    if cached:
        raise SystemExit(f"{cached} LLM calls were served from a cache: the framework does not put the "
                         "context's seed into its sampling parameters, so the timings are not comparable")

    print(f"\n{'':12}{'wall s':>9}{'s/decision':>12}{'CPU s':>9}")
    print(f"{'sequential':12}{seq_wall:9.1f}{seq_wall / n:12.2f}{seq_cpu:9.1f}")
    print(f"{'concurrent':12}{con_wall:9.1f}{con_wall / n:12.2f}{con_cpu:9.1f}")
    print(f"concurrent speed-up: {seq_wall / con_wall:.2f}x wall, {seq_cpu / con_cpu:.2f}x CPU ({n} decisions)")
    for label, decisions in (("sequential", sequential), ("concurrent", concurrent)):
        s = per_decision(decisions)
        total = s["prompt"] + s["completion"]
        print(f"{label}: {s['llm_calls']:.1f} LLM calls, {total:,.0f} tokens per decision "
              f"({s['prompt']:,.0f} prompt + {s['completion']:,.0f} completion; "
              f"{total / PAPER_TOKENS_PER_DECISION:.2f}x the paper's 27.2K); fallback share {s['fallback']:.0%}")


if __name__ == "__main__":
    main()
