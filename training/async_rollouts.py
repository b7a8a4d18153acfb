"""The trainer's side of asynchronous GRPO: the rollout process's lifecycle, its samples, staleness.

`AsyncRollouts` spawns the rollout process (`training.rollout_worker`) when training begins, with
the weights just loaded (the start policy, or a resumed checkpoint's) published as version
s = the trainer's optimizer step. For each optimizer step `take` pulls groups off the queue until
it holds `prompts_per_step` groups whose staleness s − oldest version is ≤ `max_staleness`; older
ones are dropped and counted. Every group received is a row of `groups.csv` (group, ticker, date,
oldest_version, newest_version, trainer_version, staleness, consumed). It is also the trainer's
`rollout_func`: TRL asks it for the completions of the rows `take` returned, and gets the groups'
episodes as `training.rollouts.trl_batch` builds them in synchronous training.

`AsyncLifecycle` (a TrainerCallback) publishes the weights after every optimizer step, writes
`async_state.json` (the next group of the prompt stream) into each checkpoint before its policy
folder, and stops the process when training ends. On resume the stream continues after the last
group the checkpointed run received; groups in flight at the kill are sampled again.
"""

from __future__ import annotations

import json
import queue as queues
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
from transformers import TrainerCallback

from training.checkpoints import checkpoint_dir
from training.episode_stats import episode_stats
from training.log_files import rewrite_csv
from training.rollout_worker import WorkerSetup, worker_main
from training.rollouts import LossMask, choice_mask, trl_batch
from training.sample_groups import SampleGroup, WorkerFailure
from training.weight_sync import CONTEXT, SharedWeights

STATE_FILE = "async_state.json"
GROUPS_LOG = "groups.csv"
STOP_S = 30.0
"""Seconds the rollout process gets to stop before it is terminated."""


class AsyncRollouts:
    """The rollout process and its samples, seen from the trainer (see the module docstring)."""

    def __init__(self, setup: WorkerSetup, weights: SharedWeights, output_dir: Path, *, informative_tool: str,
                 trajectory_filter: bool, mask: LossMask = choice_mask, resume_step: int = 0) -> None:
        self.setup = setup
        self.weights = weights
        self.settings = setup.settings
        self.informative_tool = informative_tool
        self.trajectory_filter = trajectory_filter
        self.mask = mask
        self.log_path = Path(output_dir) / GROUPS_LOG
        self.rows: list[dict[str, Any]] = []
        if self.log_path.is_file() and resume_step > 0:
            kept = pd.read_csv(self.log_path)
            self.rows = kept[kept["trainer_version"] < resume_step].to_dict("records")
        self.next_group = setup.first_group
        self.batch: list[SampleGroup] = []
        self.process: Any = None
        self.queue: Any = None
        self.stop_event: Any = None

    def start(self, first_group: int) -> None:
        """Spawn the rollout process, its prompt stream at `first_group` (weights published before)."""
        if self.process is not None:
            raise RuntimeError("the rollout process is already running")
        if self.weights.version < 0:
            raise RuntimeError("publish the trainer's weights before starting the rollout process")
        self.next_group = first_group
        self.queue = CONTEXT.Queue(maxsize=(self.settings.max_staleness + 2) * self.setup.prompts_per_step)
        self.stop_event = CONTEXT.Event()
        self.process = CONTEXT.Process(target=worker_main, name="grpo-rollouts", daemon=True,
                                       args=(replace(self.setup, first_group=first_group), self.weights, self.queue,
                                             self.stop_event))
        self.process.start()

    def _receive(self) -> SampleGroup:
        while True:
            try:
                item = self.queue.get(timeout=1.0)
            except queues.Empty:
                if not self.process.is_alive():
                    raise RuntimeError(f"the rollout process exited (code {self.process.exitcode}) without a word") from None
                continue
            if isinstance(item, WorkerFailure):
                raise RuntimeError(f"the rollout process failed: {item.message}")
            return item

    def take(self, trainer_version: int) -> tuple[list[SampleGroup], dict[str, float]]:
        """`prompts_per_step` groups fresh enough for the trainer at `trainer_version`, and this
        step's statistics: staleness mean and max of the consumed groups, groups dropped, groups
        sampled by more than one version, seconds waited."""
        if self.process is None:
            raise RuntimeError("the rollout process has not been started")
        waited = time.perf_counter()
        kept: list[SampleGroup] = []
        dropped = 0
        while len(kept) < self.setup.prompts_per_step:
            group = self._receive()
            staleness = group.staleness(trainer_version)
            consumed = staleness <= self.settings.max_staleness
            self.rows.append({"group": group.index, "ticker": group.row["ticker"], "date": group.row["date"],
                              "oldest_version": group.oldest_version, "newest_version": group.newest_version,
                              "trainer_version": trainer_version, "staleness": staleness, "consumed": consumed})
            self.next_group = max(self.next_group, group.index + 1)
            if consumed:
                kept.append(group)
            else:
                dropped += 1
        rewrite_csv(self.rows, self.log_path)
        stalenesses = [g.staleness(trainer_version) for g in kept]
        self.batch = kept
        return kept, {"staleness_mean": sum(stalenesses) / len(stalenesses), "staleness_max": max(stalenesses),
                      "dropped": dropped, "mixed_version_groups": sum(g.newest_version != g.oldest_version for g in kept),
                      "wait_s": time.perf_counter() - waited}

    def __call__(self, prompts: list, trainer: Any) -> dict[str, Any]:
        """TRL's rollout_func: the episodes of the groups `take` returned last, in the rows' order."""
        episodes = [e for group in self.batch for e in group.episodes]
        if len(episodes) != len(prompts):
            raise ValueError(f"rollout_func got {len(prompts)} prompts for {len(episodes)} queued episodes")
        regimes = [group.row["regime"] for group in self.batch for _ in group.episodes]
        trainer.log_rollout({**episode_stats(episodes, regimes, self.informative_tool),
                             "rollout_s": max(group.rollout_s for group in self.batch)})
        return trl_batch(episodes, self.trajectory_filter, self.mask)

    def stop(self) -> None:
        """Tell the process to stop, drain its queue so it can exit, terminate it after STOP_S."""
        if self.process is None:
            return
        self.stop_event.set()
        deadline = time.monotonic() + STOP_S
        while self.process.is_alive() and time.monotonic() < deadline:
            try:
                while True:
                    self.queue.get_nowait()
            except queues.Empty:
                pass
            self.process.join(timeout=0.2)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()
        self.process = None


def resumed_next_group(checkpoint: Path | None, prompts_per_step: int, step: int) -> int:
    """Where the prompt stream continues after `checkpoint`: its `async_state.json`, or (a checkpoint
    without one) step × prompts_per_step."""
    if checkpoint is not None and (Path(checkpoint) / STATE_FILE).is_file():
        return int(json.loads((Path(checkpoint) / STATE_FILE).read_text())["next_group"])
    return step * prompts_per_step


class AsyncLifecycle(TrainerCallback):
    """Starts, feeds and stops the rollout process (see the module docstring)."""

    def __init__(self, rollouts: AsyncRollouts, resume: Path | None) -> None:
        self.rollouts = rollouts
        self.resume = resume

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.rollouts.weights.publish(model, state.global_step)
        first = resumed_next_group(self.resume, self.rollouts.setup.prompts_per_step, state.global_step)
        self.rollouts.start(first)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        self.rollouts.weights.publish(model, state.global_step)

    def on_save(self, args, state, control, **kwargs):
        folder = checkpoint_dir(Path(args.output_dir), state.global_step)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / STATE_FILE).write_text(json.dumps({"next_group": self.rollouts.next_group}) + "\n")

    def on_train_end(self, args, state, control, **kwargs):
        self.rollouts.stop()
