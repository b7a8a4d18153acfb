"""Digests of a process's weights before training and after every optimizer step, to check that
data-parallel replicas stay equal (`monitoring.replica_digests`).

Under `accelerate launch --num_processes N` each process holds its own copy of the policy; the
gradients are averaged across processes (all-reduce) before every optimizer step, so the copies
must be bitwise equal after it. Each process appends `step,digest,backend,world_size` to
`<dir>/rank-<r>.csv` (step 0: the weights training starts from), the digest being SHA-256 over
every parameter's name, dtype, shape and bytes in name order, the backend the one
`torch.distributed` synchronises through (`none` in a single process).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import torch
import torch.distributed as dist
from transformers import TrainerCallback

REPLICA_DIGESTS = "replica_digests"
"""The folder (under the run's output_dir) of the per-process digest files."""


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 hex digest over the model's parameters (name, dtype, shape, bytes), in name order."""
    digest = hashlib.sha256()
    for name, parameter in sorted(model.named_parameters()):
        tensor = parameter.detach().to("cpu").contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.view(torch.uint8).numpy().tobytes() if tensor.numel() else b"")
    return digest.hexdigest()


class ReplicaDigests(TrainerCallback):
    """Appends this process's weights digest at the start and after every optimizer step (module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _append(self, args, step: int, model: torch.nn.Module) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"rank-{args.process_index}.csv"
        distributed = dist.is_available() and dist.is_initialized()
        backend, world = (dist.get_backend(), dist.get_world_size()) if distributed else ("none", 1)
        with path.open("a") as out:
            if out.tell() == 0:
                out.write("step,digest,backend,world_size\n")
            out.write(f"{step},{weights_digest(model)},{backend},{world}\n")

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if state.global_step == 0:
            self._append(args, 0, model)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        self._append(args, state.global_step, model)
