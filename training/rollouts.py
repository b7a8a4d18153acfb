"""TRL's `rollout_func` for the single agent: the batch's episodes, played by the rollout engine.

TRL calls `rollout_func(prompts, trainer)` with each prompt already repeated `num_generations`
times, copies adjacent, and wants exactly one completion per entry, in order
(docs/training.md, "The rollout contract"). For each entry we play one episode
(`single_agent.rollout.roll_out`) for its row's ticker and date, on a tool set bound to that
date's point-in-time view, with its own seed derived from (seed, optimizer step, entry), so a
resumed run samples what an uninterrupted one would. The engine shares the trainer's weights
and has no response cache.

Returned per entry: `prompt_ids` and `completion_ids` exactly as the episode's `TokenRecord`
holds them (the sampled ids as sampled, the tool-response fragments between turns);
`env_mask` = its `model_mask` (1 on sampled tokens, 0 on tool and template tokens, which
therefore get no loss and no gradient) with 0 also on the tokens the grammar forced (`forced`:
the model made no choice there, so neither the policy gradient nor the KL term acts on them;
their unconstrained log-probability, often tiny, would otherwise give the KL estimator spikes
of many nats and drift with every advantage). With `loss_tokens: decisions` it is 0 on the
think blocks too (`decision_mask`): the episode's advantage then falls only on what the model
decided (to call or answer, which tool with which arguments, the answer), not on the reasoning
text, which in the tiny recipe is most of the chosen tokens. `logprobs`, the sampling
log-probability of each sampled token (None on the others; TRL recomputes them with the policy
and keeps these as `sampling_per_token_logps`); and the extra field `episode` that the reward
functions read. The episodes' grammar supports (`TokenRecord.grammar`) go to the trainer's
`batch_grammar`, which `policy_logprobs: grammar` scores with (`training.agent_trainer`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import pandas as pd
from transformers import TrainerCallback

from llm_backends.types import SamplingParams
from market.data import MarketData
from market.view import MarketView
from single_agent.episode import Episode, TokenRecord
from single_agent.offered_tools import protocol_toolset
from single_agent.protocol import Protocol
from single_agent.rollout import EpisodeStart, TokenPolicy, derive_seed, roll_out
from single_agent.tags import THINK_CLOSE
from training.config import ToolCurriculum
from training.episode_stats import episode_stats
from training.tool_curriculum import CallBudgetPolicy


LossTokens = Literal["chosen", "decisions"]
LossMask = Callable[[TokenRecord], list[int]]


def choice_mask(record: TokenRecord) -> list[int]:
    """1 on the tokens the model chose: sampled (`model_mask`) and not forced by the grammar."""
    forced = record.forced or [0] * len(record.model_mask)
    return [int(m and not f) for m, f in zip(record.model_mask, forced)]


def thinking_mask(record: TokenRecord, tokenizer: Any) -> list[int]:
    """1 on each turn's think block: a turn is a run of sampled tokens, and its block runs from
    the turn's first token through the token whose decoding completes `</think>` (a turn without
    one has no block)."""
    ids, sampled = record.completion_ids, record.model_mask
    mask = [0] * len(ids)
    start = 0
    while start < len(ids):
        if not sampled[start]:
            start += 1
            continue
        end = start
        while end < len(ids) and sampled[end]:
            end += 1
        closed = next((k for k in range(start, end) if THINK_CLOSE in tokenizer.decode(ids[start:k + 1])), None)
        if closed is not None:
            mask[start:closed + 1] = [1] * (closed + 1 - start)
        start = end
    return mask


def decision_mask(record: TokenRecord, tokenizer: Any) -> list[int]:
    """`choice_mask` without the think blocks (`thinking_mask`): the chosen tokens of the actions."""
    return [int(c and not t) for c, t in zip(choice_mask(record), thinking_mask(record, tokenizer))]


def loss_mask(loss_tokens: LossTokens, tokenizer: Any) -> LossMask:
    """The mask of the tokens an episode's advantage falls on: every chosen token (`chosen`) or
    the chosen tokens outside the think blocks (`decisions`)."""
    if loss_tokens == "chosen":
        return choice_mask
    return lambda record: decision_mask(record, tokenizer)


def trl_batch(episodes: list[Episode], trajectory_filter: bool, mask: LossMask = choice_mask) -> dict[str, Any]:
    """The rollout_func result for finished episodes, `env_mask` from `mask`; with
    `trajectory_filter`, an episode without a valid answer gets an all-zero `env_mask` (it stays
    in its group's reward mean but contributes no loss)."""
    records = [e.tokens for e in episodes]
    if any(r is None or not r.completion_ids for r in records):
        raise ValueError("every episode needs a TokenRecord with at least one completion token")
    masks = [[0] * len(r.model_mask) if trajectory_filter and e.fallback else mask(r)
             for e, r in zip(episodes, records)]
    return {"prompt_ids": [r.prompt_ids for r in records], "completion_ids": [r.completion_ids for r in records],
            "logprobs": [r.logprobs for r in records], "env_mask": masks, "episode": episodes}


class EpisodeRollouts:
    """The rollout function (see the module docstring); `trainer` must expose `batch_rows`
    (`training.agent_trainer.AgentGRPOTrainer`)."""

    def __init__(self, policy: TokenPolicy, protocol: Protocol, data: MarketData, params: SamplingParams, *,
                 constrained: bool, seed: int, informative_tool: str, trajectory_filter: bool = False,
                 curriculum: ToolCurriculum | None = None, loss_tokens: LossTokens = "chosen") -> None:
        if curriculum is not None and not constrained:
            raise ValueError("a tool curriculum narrows the grammar: it needs constrained rollouts")
        self.policy = policy
        self.protocol = protocol
        self.data = data
        self.params = params
        self.constrained = constrained
        self.seed = seed
        self.informative_tool = informative_tool
        self.trajectory_filter = trajectory_filter
        self.curriculum = curriculum
        self.mask = loss_mask(loss_tokens, policy.tokenizer)

    def starts(self, rows: list[dict[str, Any]], step: int) -> list[EpisodeStart]:
        """One start per row: its ticker and date, a fresh tool set, seed derive_seed(seed, step, index)."""
        return [EpisodeStart(ticker=row["ticker"], date=pd.Timestamp(row["date"]),
                             toolset=protocol_toolset(self.protocol, MarketView(self.data, row["date"])),
                             seed=derive_seed(self.seed, step, index))
                for index, row in enumerate(rows)]

    def policy_at(self, step: int) -> TokenPolicy:
        """The engine, or under a tool curriculum the engine held to that step's call budget."""
        if self.curriculum is None:
            return self.policy
        return CallBudgetPolicy(self.policy, self.protocol, self.curriculum.budget(step, self.protocol.max_tool_calls))

    def __call__(self, prompts: list, trainer: Any) -> dict[str, Any]:
        rows = trainer.batch_rows
        if len(rows) != len(prompts):
            raise ValueError(f"rollout_func got {len(prompts)} prompts for {len(rows)} dataset rows")
        step = trainer.state.global_step
        started = time.perf_counter()
        episodes = roll_out(self.policy_at(step), self.protocol, self.starts(rows, step), self.params,
                            constrained=self.constrained, return_logprobs=True)
        stats = episode_stats(episodes, [row["regime"] for row in rows], self.informative_tool)
        trainer.log_rollout({**stats, "rollout_s": time.perf_counter() - started})
        trainer.batch_grammar = [e.tokens.grammar for e in episodes]
        return trl_batch(episodes, self.trajectory_filter, self.mask)


class ClearRolloutCache(TrainerCallback):
    """Drops the rollout engine's prefix KV store after every optimizer step (its keys and values
    were computed with the weights before the step)."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def on_step_end(self, args, state, control, **kwargs):
        self.engine.clear_kv_cache()
