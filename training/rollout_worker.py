"""The rollout process of asynchronous GRPO: its own copy of the policy on the transformers engine,
generating GRPO groups while the trainer updates.

Loop: take the newest published weights; with `throttle`, wait until a rollout batch would stay
within AReaL's bound (groups produced ≤ (version − start version + η + 1) × prompts_per_step);
play `groups_per_rollout` groups (prompt rows in `sample_groups.prompt_row` order, episode seeds
derive_seed(seed, group index, episode)) with `single_agent.rollout.roll_out`, which records each
sampled token's log-probability (the behaviour policy's); put each group on the queue with the
versions that sampled it. The episodes are played exactly as in synchronous training
(`training.rollouts.EpisodeRollouts`: the same starts, tool sets and curriculum), only the
weights and the prompt order come from here.

In-flight weight changes (`in_flight`): `finish` pulls weights only between rollouts, so every
group is sampled by one version; `switch` also pulls them before every turn
(`VersionedPolicy.generate_tokens`): generation is interruptible at turn boundaries only (a
turn in progress ends with the weights it started with), and the engine's prefix KV store is
dropped so the next turn's prefix is recomputed with the new weights, as AReaL's interruptible
generation recomputes its KV cache. The process ends when told to stop or when its parent is gone.
"""

from __future__ import annotations

import multiprocessing
import queue as queues
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.errors import one_line
from llm_backends.types import Conversation, SamplingParams, TokenRequest, TokenResult
from market.data import MarketData
from single_agent.protocol import Protocol
from single_agent.rollout import TurnRequest, roll_out
from training.config import AsyncSettings, ModelConfig, ToolCurriculum
from training.policy_model import load_policy, lora_config, rollout_engine
from training.rollouts import EpisodeRollouts
from training.sample_groups import SampleGroup, WorkerFailure, prompt_row
from training.weight_sync import SharedWeights

POLL_S = 0.05
"""Seconds between looks at the weights while throttled or while the queue is full."""


@dataclass(frozen=True)
class WorkerSetup:
    """Everything the rollout process needs, picklable: the policy's starting folder and model
    settings (its weights are replaced by the published ones before the first rollout), the
    episodes' market, protocol and sampling, the prompt rows, and where the stream starts."""

    policy_folder: str
    model: ModelConfig
    protocol: Protocol
    data: MarketData
    rows: list[dict[str, Any]]
    params: SamplingParams
    constrained: bool
    curriculum: ToolCurriculum | None
    seed: int
    num_generations: int
    prompts_per_step: int
    settings: AsyncSettings
    torch_threads: int | None
    first_group: int


class VersionedPolicy:
    """The engine, with the policy version of its weights and, per episode, the versions that
    sampled its turns; with `switch`, newer weights are pulled before every turn."""

    def __init__(self, engine: Any, model: torch.nn.Module, weights: SharedWeights, switch: bool) -> None:
        self.engine = engine
        self.hf_model = model
        self.weights = weights
        self.switch = switch
        self.version = -1
        self.model = engine.model
        self.tokenizer = engine.tokenizer
        self.eos_ids = engine.eos_ids
        self.sampled_by: dict[int, set[int]] = {}

    def sync(self) -> bool:
        """Pull newer weights if there are; True when the weights changed."""
        before = self.version
        self.version = self.weights.pull(self.hf_model, self.version)
        if self.version != before:
            self.engine.clear_kv_cache()
        return self.version != before

    def render(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> str:
        return self.engine.render(conversation, tools)

    def render_ids(self, conversation: Conversation, tools: list[dict[str, Any]] | None = None) -> list[int]:
        return self.engine.render_ids(conversation, tools)

    def generate_tokens(self, requests: list[TokenRequest]) -> list[TokenResult]:
        if self.switch:
            self.sync()
        for request in requests:
            if isinstance(request, TurnRequest) and request.episode is not None:
                self.sampled_by.setdefault(id(request.episode), set()).add(self.version)
        return self.engine.generate_tokens(requests)


def _policy(setup: WorkerSetup, weights: SharedWeights) -> VersionedPolicy:
    """The rollout model (the trainer's architecture, LoRA included) on the engine, in eval mode."""
    if setup.torch_threads:
        torch.set_num_threads(setup.torch_threads)
    model, tokenizer = load_policy(Path(setup.policy_folder), setup.model)
    if setup.model.lora is not None:
        from peft import get_peft_model

        model = get_peft_model(model, lora_config(setup.model.lora))
    model.eval()
    engine = rollout_engine(model, tokenizer, "policy-async-rollout")
    return VersionedPolicy(engine, model, weights, switch=setup.settings.in_flight == "switch")


def _alive(stop: Any) -> bool:
    parent = multiprocessing.parent_process()
    return not stop.is_set() and (parent is None or parent.is_alive())


def _put(queue: Any, item: Any, stop: Any) -> bool:
    """Put `item` on the bounded queue, giving up when told to stop; True when it was put."""
    while _alive(stop):
        try:
            queue.put(item, timeout=POLL_S * 10)
            return True
        except queues.Full:
            continue
    return False


def _throttled(produced: int, batch: int, version: int, start: int, setup: WorkerSetup) -> bool:
    """AReaL's bound: produced + batch ≤ (version − start + η + 1) × prompts_per_step, else wait."""
    allowed = (version - start + setup.settings.max_staleness + 1) * setup.prompts_per_step
    return setup.settings.throttle and produced + batch > allowed


def generate_groups(setup: WorkerSetup, weights: SharedWeights, queue: Any, stop: Any) -> None:
    """The process body (see the module docstring)."""
    policy = _policy(setup, weights)
    protocol = setup.protocol
    rollouts = EpisodeRollouts(policy, protocol, setup.data, setup.params, constrained=setup.constrained,
                               seed=setup.seed, informative_tool="", curriculum=setup.curriculum)
    while weights.version < 0 and _alive(stop):
        time.sleep(POLL_S)
    policy.sync()
    start_version, produced, index = policy.version, 0, setup.first_group
    batch = setup.settings.groups_per_rollout
    while _alive(stop):
        policy.sync()
        if _throttled(produced, batch, policy.version, start_version, setup):
            time.sleep(POLL_S)
            continue
        started = time.perf_counter()
        rows = [setup.rows[prompt_row(g, len(setup.rows), setup.seed)] for g in range(index, index + batch)]
        starts = [s for offset, row in enumerate(rows)
                  for s in rollouts.starts([row] * setup.num_generations, index + offset)]
        policy.sampled_by = {}
        episodes = roll_out(rollouts.policy_at(policy.version), protocol, starts, setup.params,
                            constrained=setup.constrained, return_logprobs=True)
        elapsed = time.perf_counter() - started
        for offset, row in enumerate(rows):
            group = episodes[offset * setup.num_generations:(offset + 1) * setup.num_generations]
            versions = set().union(*(policy.sampled_by[id(e)] for e in group))
            if not _put(queue, SampleGroup(index=index + offset, row=row, episodes=group, oldest_version=min(versions),
                                           newest_version=max(versions), rollout_s=elapsed), stop):
                return
        produced += batch
        index += batch


def worker_main(setup: WorkerSetup, weights: SharedWeights, queue: Any, stop: Any) -> None:
    """Entry point of the spawned process: `generate_groups`, any failure sent as a `WorkerFailure`."""
    try:
        generate_groups(setup, weights, queue, stop)
    except BaseException as error:  # the trainer must learn why its samples stopped
        traceback.print_exc()
        _put(queue, WorkerFailure(f"{type(error).__name__}: {one_line(error)}"), stop)
        raise
