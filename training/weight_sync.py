"""Policy weights from the trainer to the rollout process, through shared memory, with a version.

The trainer's trainable parameters (all of them under full fine-tuning, the LoRA adapters under
peft: frozen weights never change) are copied once into CPU tensors in shared memory; the rollout
process receives them when it is spawned (torch.multiprocessing shares the storage, nothing is
pickled by value). After every optimizer step the trainer copies its parameters in and sets the
version to its step count; the rollout process, when it looks (between rollouts, or between turns
with in-flight switching), copies them into its own model if the version moved. A lock keeps a
reader from seeing half of an update. Cost per update: one copy of the trainable parameters each
way (for a 3B model in bf16 about 6 GB through host memory).
"""

from __future__ import annotations

import torch
import torch.multiprocessing as mp

CONTEXT = mp.get_context("spawn")
"""The start method of the rollout process: spawn (a forked copy of a process that has run torch
threads can deadlock)."""


def trainable_parameters(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The parameters that training changes, by name (tied weights once)."""
    return {name: p for name, p in model.named_parameters() if p.requires_grad}


class SharedWeights:
    """Shared-memory copy of a model's trainable parameters and the policy version they are."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.tensors = {name: p.detach().to("cpu", copy=True).share_memory_()
                        for name, p in trainable_parameters(model).items()}
        if not self.tensors:
            raise ValueError("the policy has no trainable parameters to send to the rollout process")
        self._version = CONTEXT.Value("q", -1, lock=False)
        self._lock = CONTEXT.Lock()

    @property
    def version(self) -> int:
        """The version published last (-1: none yet)."""
        return int(self._version.value)

    def publish(self, model: torch.nn.Module, version: int) -> None:
        """Copy `model`'s trainable parameters in and mark them as `version`."""
        params = trainable_parameters(model)
        with self._lock, torch.no_grad():
            for name, shared in self.tensors.items():
                shared.copy_(params[name].detach())
            self._version.value = version

    def pull(self, model: torch.nn.Module, have: int) -> int:
        """Copy the published parameters into `model` when they are newer than version `have`;
        returns the version `model` now holds."""
        if self.version == have:
            return have
        params = dict(model.named_parameters())
        missing = set(self.tensors) - set(params)
        if missing:
            raise ValueError(f"the rollout model lacks the trainer's parameter {sorted(missing)[0]!r}")
        with self._lock, torch.no_grad():
            for name, shared in self.tensors.items():
                params[name].copy_(shared)
            return self.version
