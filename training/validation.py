"""Validation during training: a saved policy traded on the valid split through the benchmark's runner.

At the start of training and every `validate_every` optimizer steps (at a checkpoint, and at
the last one), the checkpoint's `policy/` folder is loaded as the benchmark's `alphaquanter`
framework (`frameworks.single_agent.SingleAgent(checkpoint=...)`, greedy, the training protocol,
grammar and reward) and traded by `harness.runner.EpisodeRunner` under the run's execution rules
over the last `validation_days` of the valid window, for the validation tickers. Each
validation writes a small run directory `validation/step-<N>/` (journal, equity, trades,
decisions) and one row of `validation.csv`:

- `ARR`, `SR_ann`, `MDD`: the ticker-average of `metrics.csv`'s metrics (fractions; SR annualised);
- `regime_accuracy`: share of decisions whose executed answer is the regime's action (a
  fallback counts as a miss); `result`: mean R_result (−1 without a valid answer);
- `informative_read`: share of decisions that called the informative tool; `tool_calls`: calls
  per decision; `no_answer`: share of fallbacks;
- `decisions`, `seconds`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from transformers import TrainerCallback

from frameworks.single_agent import SingleAgent
from harness.execution import ExecutionConfig
from harness.journal import Journal
from harness.run_directory import write_episodes
from harness.runner import EpisodeRunner, FrameworkEntry, RunSpec
from llm_backends.build import engine_config
from market.data import MarketData
from market.regime import ACTION_OF_REGIME
from metrics.episodes import AVERAGE_TICKER, episode_metrics
from single_agent.protocol import Protocol
from single_agent.rewards import RewardConfig, regime_label, result_reward
from training.checkpoints import POLICY_DIR, checkpoint_dir
from training.log_files import rewrite_csv

FRAMEWORK = "alphaquanter"
ENGINE_OVERRIDES = ["path=null", "batch_wait_ms=0", "kv_cache_mb=512"]
"""No micro-batching thread (a new thread's torch runs on every core, not on the trainer's
`torch_threads`: several times slower on a busy 2-core machine) and a smaller prefix store."""


@dataclass(frozen=True)
class ValidationSetup:
    """What every validation of a run trades: the market, tickers, window, rules and agent settings."""

    data: MarketData
    tickers: list[str]
    start: pd.Timestamp
    end: pd.Timestamp
    execution: ExecutionConfig
    protocol: Protocol
    reward: RewardConfig
    constrained: bool
    informative_tool: str


def decision_scores(entries: list, data: MarketData, setup: ValidationSetup) -> dict[str, float]:
    """Regime accuracy, mean R_result, informative reads, calls and fallbacks of journaled decisions."""
    rows = []
    for entry in entries:
        regime = regime_label(data.frame(entry.ticker)["close"], entry.date, setup.reward)
        if regime is None:
            continue
        trace = entry.decision.trace
        answer = None if trace.fallback or trace.error else entry.decision.action
        lookahead = sum(call.lookahead for call in trace.tool_calls)
        rows.append({"hit": answer is not None and answer.value == ACTION_OF_REGIME[regime],
                     "result": result_reward(answer, regime, lookahead, setup.reward),
                     "read": any(call.name == setup.informative_tool for call in trace.tool_calls),
                     "calls": len(trace.tool_calls), "fallback": answer is None})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return {}
    return {"regime_accuracy": frame["hit"].mean(), "result": frame["result"].mean(),
            "informative_read": frame["read"].mean(), "tool_calls": frame["calls"].mean(),
            "no_answer": frame["fallback"].mean()}


def validate_policy(policy: Path, setup: ValidationSetup, run_dir: Path) -> dict[str, float]:
    """Trade `policy` over the setup's window into `run_dir`; the scores of the module docstring."""
    started = time.perf_counter()
    run_dir.mkdir(parents=True, exist_ok=True)
    agent = SingleAgent(llm=engine_config("transformers", ENGINE_OVERRIDES), checkpoint=str(policy),
                        protocol=setup.protocol, reward=setup.reward, constrained=setup.constrained, temperature=0.0)
    entry = FrameworkEntry(name=FRAMEWORK, framework=agent, config_hash="validation", fingerprint=agent.fingerprint())
    spec = RunSpec(tickers=setup.tickers, seeds=[0], start=setup.start, end=setup.end, execution=setup.execution)
    with Journal(run_dir / "journal.sqlite") as journal:
        result = EpisodeRunner(setup.data, spec, journal, progress=False).run([entry])
    equity, trades = write_episodes(run_dir, result, setup.data, setup.tickers, setup.start, setup.end)
    table = episode_metrics(equity, trades, setup.data.periods_per_year)
    average = table[table["ticker"] == AVERAGE_TICKER].iloc[0]
    return {"ARR": average["ARR"], "SR_ann": average["SR_ann"], "MDD": average["MDD"],
            **decision_scores(result.decisions, setup.data, setup), "decisions": len(result.decisions),
            "seconds": round(time.perf_counter() - started, 1)}


class Validation(TrainerCallback):
    """Validates the starting policy and every `every`-th checkpoint (and the last) into `validation.csv`."""

    def __init__(self, setup: ValidationSetup, output_dir: Path, start_policy: Path, every: int,
                 resume_step: int = 0) -> None:
        self.setup = setup
        self.output_dir = Path(output_dir)
        self.start_policy = start_policy
        self.every = every
        self.path = self.output_dir / "validation.csv"
        self.rows = []
        if self.path.is_file():
            kept = pd.read_csv(self.path)
            self.rows = kept[kept["step"] <= resume_step].to_dict("records")

    def _validate(self, step: int, policy: Path) -> None:
        scores = validate_policy(policy, self.setup, self.output_dir / "validation" / f"step-{step}")
        self.rows.append({"step": step, **{k: round(float(v), 6) if np.isfinite(v) else v for k, v in scores.items()}})
        rewrite_csv(self.rows, self.path)
        shown = ", ".join(f"{k} {v:.3g}" for k, v in scores.items())
        print(f"validation at step {step}: {shown}", flush=True)

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero and state.global_step == 0 and not any(row["step"] == 0 for row in self.rows):
            self._validate(0, self.start_policy)

    def on_save(self, args, state, control, **kwargs):
        step = state.global_step
        if state.is_world_process_zero and (step % self.every == 0 or step >= state.max_steps):
            self._validate(step, checkpoint_dir(Path(args.output_dir), step) / POLICY_DIR)
