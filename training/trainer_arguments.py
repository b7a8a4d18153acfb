"""The Trainer arguments the warm start (SFTConfig) and GRPO (GRPOConfig) share.

TRL's configs default to bf16 and gradient checkpointing; here both follow the model instead:
bf16 when the policy's weights are bfloat16, checkpointing as configured. Logging every
`logging_steps` (to TensorBoard under `<output_dir>/tensorboard` when enabled, and always to the
CSV of `training.step_log`; `monitoring_callbacks`), a checkpoint every `save_steps` optimizer steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from training.config import CheckpointConfig, ModelConfig, MonitoringConfig
from training.replica_digests import REPLICA_DIGESTS, ReplicaDigests
from training.step_log import StepLog


def shared_arguments(output_dir: Path, model_dtype: torch.dtype, model: ModelConfig, monitoring: MonitoringConfig,
                     checkpoints: CheckpointConfig, seed: int) -> dict[str, Any]:
    """Keyword arguments for SFTConfig / GRPOConfig (see the module docstring)."""
    return {
        "output_dir": str(output_dir),
        "seed": seed,
        "bf16": model_dtype == torch.bfloat16,
        "activation_checkpointing": model.gradient_checkpointing,
        "logging_steps": monitoring.logging_steps,
        "report_to": [],
        "save_strategy": "steps",
        "save_steps": checkpoints.save_steps,
        "save_total_limit": checkpoints.save_total_limit,
        "dataloader_num_workers": 0,
    }


def monitoring_callbacks(output_dir: Path, monitoring: MonitoringConfig, resume_step: int) -> list[Any]:
    """The per-step CSV `<output_dir>/steps.csv` and, when enabled, TensorBoard under `<output_dir>/tensorboard`."""
    callbacks: list[Any] = [StepLog(Path(output_dir) / "steps.csv", resume_step)]
    if monitoring.replica_digests:
        callbacks.append(ReplicaDigests(Path(output_dir) / REPLICA_DIGESTS))
    if monitoring.tensorboard:
        from torch.utils.tensorboard import SummaryWriter
        from transformers.integrations import TensorBoardCallback

        writer = SummaryWriter(log_dir=str(Path(output_dir) / "tensorboard"), purge_step=resume_step + 1 if resume_step else None)
        callbacks.append(TensorBoardCallback(tb_writer=writer))
    return callbacks
